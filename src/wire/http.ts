import type {AuthAttempt, Authorizer, FetchLike} from './auth.ts'
import {abortedError, TransportError} from '../errors.ts'
import {excerpt} from './jsonrpc.ts'
import {displayUrl, type Redact} from './redaction.ts'

/** Redirects followed in a row before the request fails: a loop ends, a long chain is refused. */
const maxRedirects = 5
const redirectStatuses = new Set([301, 302, 303, 307, 308])
/** Headers only the transport sets (the session's, the resumption's and the 2026-07-28 era's). */
const protocolHeader = /^(mcp-session-id|mcp-protocol-version|last-event-id|mcp-method|mcp-name|mcp-param-.*)$/
/** The most of an error answer's body kept on the error (`data.text`): enough for any JSON-RPC error. */
const maxErrorBody = 65536

/** One HTTP exchange with the MCP endpoint, with the protocol headers it must carry. */
export interface WireRequest {
  method: 'GET' | 'POST' | 'DELETE'
  sessionId: string | undefined
  protocolVersion: string | undefined
  lastEventId?: string | undefined
  body?: string | undefined
  /** Headers of this request alone (src/modern/headers.ts): the caller's, and those of the 2026-07-28 era. */
  headers?: Readonly<Record<string, string>> | undefined
  signal: AbortSignal
}

export interface HttpClient {
  url: URL
  fetch: FetchLike | undefined
  requestInit: RequestInit
  /** `'follow'`: redirects are fetch's business; `'same-origin'`: the transport follows them, see {@link exchange}. */
  redirectPolicy: 'same-origin' | 'follow'
  /** Origins, besides the endpoint's, that a redirect may lead to (`URL.origin` form). */
  allowedRedirectOrigins: ReadonlySet<string>
  /** Masks the URL's query values and the secret headers' values in a text meant for a message. */
  redact: Redact
  /** The bearer token and the OAuth flow, when `authProvider` was given. */
  auth: Authorizer | undefined
}

/**
 * Sends one request. Rejects with `aborted` when `signal` aborted it, `network` when no answer came, `http`
 * for a redirect it does not follow; any other HTTP status resolves (the caller decides what it means).
 *
 * With `redirectPolicy: 'same-origin'` a redirect is followed here, never by fetch: only when it keeps the method
 * and stays within the endpoint's origin (or one of `allowedRedirectOrigins`), so that the session ID, the body,
 * `Last-Event-ID` and the app's headers never reach another origin.
 *
 * With an `authProvider`, every request carries its bearer token; a 401 or a 403 `insufficient_scope` runs the
 * SDK's flow (src/wire/auth.ts) and the request goes out once more. The flow's errors (`UnauthorizedError`) are thrown
 * as they are: never taken for a network failure.
 */
export async function exchange(client: HttpClient, request: WireRequest): Promise<Response> {
  const auth = client.auth
  if (auth === undefined) return exchangeOnce(client, request, undefined)
  const attempt: AuthAttempt = {unauthorized: false, stepUps: 0}
  for (;;) {
    const token = await auth.token()
    const response = await exchangeOnce(client, request, token)
    let again: boolean
    try {
      // [spec 2025-11-25 authorization] 401: the server did not run the request, so after the flow it goes out again,
      // the same body and the same Last-Event-ID (a resumed stream keeps its cursor).
      again = await auth.recover(response, token, attempt)
    } catch (error) {
      discard(response)
      throw error
    }
    if (!again) return response
    discard(response)
  }
}

async function exchangeOnce(client: HttpClient, request: WireRequest, token: string | undefined): Promise<Response> {
  const headers = new Headers(client.requestInit.headers)
  // The protocol headers are the transport's alone: one set by the app must not leak into a request, nor an
  // `Mcp-Param-*` meant for one call reach every other.
  for (const name of [...headers.keys()]) if (protocolHeader.test(name)) headers.delete(name)
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, value)
  // [spec transports, sending messages] the client accepts both a JSON body and an SSE stream.
  headers.set('accept', request.method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream')
  if (request.body !== undefined) headers.set('content-type', 'application/json')
  // [spec transports, session management] every request after initialize carries the session ID...
  if (request.sessionId !== undefined) headers.set('mcp-session-id', request.sessionId)
  // [spec 2025-06-18 transports, protocol version header] ...and the negotiated protocol version, unless a
  // 2026-07-28 request's own claim set it.
  if (request.protocolVersion !== undefined && !headers.has('mcp-protocol-version'))
    headers.set('mcp-protocol-version', request.protocolVersion)
  if (request.lastEventId !== undefined) headers.set('last-event-id', request.lastEventId)
  // [spec 2025-11-25 authorization] the token on every request to the MCP server, the provider's over the app's.
  if (token !== undefined) headers.set('authorization', `Bearer ${token}`)
  const init: SentInit = {
    ...client.requestInit,
    method: request.method,
    headers,
    body: request.body ?? null,
    signal: request.signal,
    // [WHATWG fetch, cache mode] an MCP answer is never a cached one. Firefox otherwise holds a GET of the endpoint
    // behind another still open (its cache entry's lock): a stream resumed beside the standalone stream never opens.
    cache: 'no-store',
  }
  if (client.redirectPolicy === 'follow') return send(client, client.url, init)
  init.redirect = 'manual'
  let url = client.url
  for (let hops = 0; ; hops++) {
    const response = await send(client, url, init)
    const target = redirectTarget(client, request, response, url, hops)
    if (target === undefined) return response
    discard(response)
    url = target
  }
}

/** What {@link send} sends: its method and signal always set. */
type SentInit = RequestInit & {method: string; signal: AbortSignal}

async function send(client: HttpClient, url: URL, init: SentInit): Promise<Response> {
  // Read at call time, so that msw and app patches of the global fetch apply.
  const fetchFunction = client.fetch ?? globalThis.fetch
  try {
    return await fetchFunction(url, init)
  } catch (cause) {
    if (init.signal.aborted) throw abortedError(init.signal)
    // [WHATWG fetch] a network failure rejects with a TypeError; anything else is the app's own fetch deciding
    // (the SDK's `withOAuth` throwing `UnauthorizedError`, say): the caller gets it as it was thrown.
    if (client.fetch !== undefined && !(cause instanceof TypeError)) throw cause
    const what = `${init.method} ${displayUrl(client.url)}`
    throw new TransportError('network', `${what} failed: ${client.redact(describe(cause))}`, {cause})
  }
}

/**
 * Where to follow the redirect `response` (of the request sent to `from`), undefined when it is no redirect;
 * throws when it is one not to follow.
 */
function redirectTarget(
  client: HttpClient,
  request: WireRequest,
  response: Response,
  from: URL,
  hops: number,
): URL | undefined {
  const policy = `redirectPolicy 'same-origin'`
  // A browser hides the target of a redirect it did not follow (and its body: there is none to release): it may be
  // another origin, so it is not followed.
  if (response.type === 'opaqueredirect') {
    throw new TransportError(
      'http',
      `${request.method} ${displayUrl(client.url)} was redirected, and the browser hides where to: not followed (${policy}). Use the final URL of the endpoint`,
    )
  }
  const location = redirectStatuses.has(response.status) ? response.headers.get('location') : null
  if (location === null) return undefined
  // Built only for a redirect: every response passes here.
  const what = `${request.method} ${displayUrl(client.url)}`
  const refuse = (why: string): TransportError => {
    discard(response)
    return new TransportError(
      'http',
      `${what} was redirected (HTTP ${response.status}) ${why}: not followed (${policy})`,
      {status: response.status},
    )
  }
  let target: URL
  try {
    target = new URL(location, from)
  } catch {
    throw refuse('to an invalid URL')
  }
  const shown = `${target.origin}${target.pathname}`
  if (target.username !== '' || target.password !== '') throw refuse(`to ${shown} with credentials in the URL`)
  if (!isWithinOrigin(client.url, target) && !client.allowedRedirectOrigins.has(target.origin)) {
    throw refuse(`to another origin, ${shown}; add it to allowedRedirectOrigins to follow it with the whole request`)
  }
  // 301, 302 and 303 turn the request into a GET: a JSON-RPC message would be lost, a DELETE become a read.
  if (request.method !== 'GET' && response.status !== 307 && response.status !== 308) {
    throw refuse(`to ${shown}, which would turn the ${request.method} into a GET`)
  }
  if (hops === maxRedirects) throw refuse(`more than ${maxRedirects} times in a row`)
  return target
}

/** Whether `to` has the origin of `from`, or is its https form with both on default ports. */
function isWithinOrigin(from: URL, to: URL): boolean {
  if (from.origin === to.origin) return true
  return (
    from.hostname === to.hostname &&
    from.protocol === 'http:' &&
    from.port === '' &&
    to.protocol === 'https:' &&
    to.port === ''
  )
}

/** A TransportError for an unexpected status, with the start of the body to say why (secrets masked). */
export async function httpError(client: HttpClient, response: Response, what: string): Promise<TransportError> {
  const text = await response.text().catch(() => '')
  const body = client.redact(text.slice(0, maxErrorBody))
  const detail = text === '' ? '' : `: ${excerpt(body)}`
  return new TransportError('http', `${what} failed with HTTP ${response.status}${detail}`, {
    status: response.status,
    body,
  })
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
function mediaType(contentType: string | null): string | undefined {
  if (contentType === null) return undefined
  return contentType.split(';', 1)[0]!.trim().toLowerCase()
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ''
  return `${error.message}${cause}`
}
