import {abortedError, TransportError} from './errors.ts'
import {excerpt} from './jsonrpc.ts'
import type {FetchLike} from './options.ts'

/** One HTTP exchange with the MCP endpoint, with the protocol headers it must carry. */
export interface WireRequest {
  method: 'GET' | 'POST' | 'DELETE'
  sessionId: string | undefined
  protocolVersion: string | undefined
  lastEventId?: string | undefined
  body?: string | undefined
  signal: AbortSignal
}

export interface HttpClient {
  url: URL
  fetch: FetchLike | undefined
  requestInit: RequestInit
}

/**
 * Sends one request. Rejects with `aborted` when `signal` aborted it, `network` when no answer came;
 * any HTTP status resolves (the caller decides what it means).
 */
export async function exchange(client: HttpClient, request: WireRequest): Promise<Response> {
  const headers = new Headers(client.requestInit.headers)
  // The resumption headers are the transport's alone: one set by the app must not leak into a request.
  for (const name of ['mcp-session-id', 'mcp-protocol-version', 'last-event-id']) headers.delete(name)
  // [spec transports, sending messages] the client accepts both a JSON body and an SSE stream.
  headers.set('accept', request.method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream')
  if (request.body !== undefined) headers.set('content-type', 'application/json')
  // [spec transports, session management] every request after initialize carries the session ID...
  if (request.sessionId !== undefined) headers.set('mcp-session-id', request.sessionId)
  // [spec 2025-06-18 transports, protocol version header] ...and the negotiated protocol version.
  if (request.protocolVersion !== undefined) headers.set('mcp-protocol-version', request.protocolVersion)
  if (request.lastEventId !== undefined) headers.set('last-event-id', request.lastEventId)
  // Read at call time, so that msw and app patches of the global fetch apply.
  const fetchFunction = client.fetch ?? globalThis.fetch
  try {
    return await fetchFunction(client.url, {
      ...client.requestInit,
      method: request.method,
      headers,
      body: request.body ?? null,
      signal: request.signal,
    })
  } catch (cause) {
    if (request.signal.aborted) throw abortedError(request.signal)
    throw new TransportError('network', `${request.method} ${client.url.href} failed: ${describe(cause)}`, {cause})
  }
}

/** A TransportError for an unexpected status, with the start of the body to say why. */
export async function httpError(response: Response, what: string): Promise<TransportError> {
  const text = await response.text().catch(() => '')
  const detail = text === '' ? '' : `: ${excerpt(text)}`
  return new TransportError('http', `${what} failed with HTTP ${response.status}${detail}`, {status: response.status})
}

/** Releases a body the transport does not read. */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => {})
}

export function isEventStream(contentType: string | null): boolean {
  return mediaType(contentType) === 'text/event-stream'
}

export function isJson(contentType: string | null): boolean {
  return mediaType(contentType) === 'application/json'
}

// Exact media type match: a substring test would take `application/json-seq` for JSON.
function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase()
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ''
  return `${error.message}${cause}`
}
