/**
 * What the reference server puts on the wire besides events: the versions it speaks, and each refusal with
 * its HTTP status and JSON-RPC error code.
 */
/** Anything that answers a Web-standard `Request`: the reference server, a fault proxy. */
export interface RequestHandler {
  handle(request: Request): Promise<Response>
}

/** A JSON-RPC message as the reference server reads and writes it. */
export type JsonObject = Record<string, unknown>

/** A JSON-RPC request ID. The kit keeps its own guard: it checks the transport, so it shares none of its code. */
export type RequestId = string | number

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number'
}

/** The protocol revisions the reference server speaks, oldest first. */
export const supportedProtocolVersions = ['2025-03-26', '2025-06-18', '2025-11-25'] as const

/** Resolves after `ms` (at once when it is 0 or less). */
export function wait(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms))
}

export function isSupportedVersion(version: string): boolean {
  return (supportedProtocolVersions as readonly string[]).includes(version)
}

/** One kind of refusal: the HTTP status and the JSON-RPC error it carries. */
export interface Refusal {
  status: number
  code: number
  message: string
}

/**
 * Every refusal of the reference server. `resumptionRefused` is the one a server must have
 * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#what-a-server-must-do | what a server must do}):
 * distinct from a missing session (400), an expired one (404) and a stream already connected (409),
 * so that a client can tell "this cursor is not yours" from everything else.
 */
export const refusals = {
  /** [spec transports, session management] a session that does not exist, or no longer does. */
  sessionNotFound: {status: 404, code: -32001, message: 'Session not found'},
  /** [spec transports, session management] a request after initialize without `Mcp-Session-Id`. */
  sessionRequired: {status: 400, code: -32000, message: 'Bad Request: Mcp-Session-Id header is required'},
  /** [spec 2025-06-18 transports, protocol version header] an invalid or unsupported `MCP-Protocol-Version`. */
  unsupportedVersion: {status: 400, code: -32000, message: 'Bad Request: Unsupported protocol version'},
  /** A body that is not JSON, or not JSON-RPC. */
  parseError: {status: 400, code: -32700, message: 'Parse error'},
  /** [spec 2025-03-26 transports] a batch is allowed only in 2025-03-26. */
  batchNotSupported: {
    status: 400,
    code: -32600,
    message: 'Invalid Request: batches are not supported in this protocol version',
  },
  /**
   * A `Last-Event-ID` that is not a position in a stream of the session named by `Mcp-Session-Id`, or that comes
   * without a session: refused, never served from a global log
   * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#what-a-server-must-do | what a server must do}).
   */
  resumptionRefused: {
    status: 422,
    code: -32010,
    message: 'Resumption refused: Last-Event-ID does not belong to this session',
  },
  /** [spec transports, listening for messages] no standalone GET stream is offered. */
  methodNotAllowed: {status: 405, code: -32000, message: 'Method not allowed'},
  /** [spec transports, session management] a request before `initialize`, on a server without sessions. */
  notInitialized: {status: 400, code: -32000, message: 'Bad Request: Server not initialized'},
  /** A status injected by `faults.failNext`. */
  injected: {status: 0, code: -32000, message: 'Injected fault'},
} as const satisfies Record<string, Refusal>

/** A JSON-RPC error response with no ID, as a refusal at the HTTP level carries. */
export function refuse(refusal: Refusal, detail?: string, status = refusal.status): Response {
  const message = detail === undefined ? refusal.message : `${refusal.message}: ${detail}`
  return Response.json({jsonrpc: '2.0', id: null, error: {code: refusal.code, message}}, {status})
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A request has a method and an ID; a notification a method only; a response an ID only. */
export function kindOf(message: JsonObject): 'request' | 'notification' | 'response' | 'invalid' {
  const hasMethod = typeof message['method'] === 'string'
  const hasId = isRequestId(message['id'])
  if (message['jsonrpc'] !== '2.0') return 'invalid'
  if (hasMethod) return hasId ? 'request' : 'notification'
  return hasId && ('result' in message || 'error' in message) ? 'response' : 'invalid'
}

/**
 * The error a server request is answered with when `pendingOnAttach` is `cancel`, and the codes of the JSON-RPC
 * errors the server answers requests with.
 */
export const errorCodes = {
  requestCancelled: -32800,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  resourceNotFound: -32002,
} as const

/**
 * The headers of every event stream the reference server sends. Chunked, as a real server frames a body of unknown
 * length: msw 3 serves a mocked body over a socket of its own, and without this framing the end of that socket is
 * the end of the body, so a dropped connection would reach the client as a stream that ended cleanly.
 */
export const sseHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'transfer-encoding': 'chunked',
}

/** A proxy's error page where SSE was announced (`corruptNext({kind: 'sse'})`): nothing a client can parse. */
export function errorPageAsSse(): Response {
  return new Response('<html><body>502 Bad Gateway</body></html>', {headers: sseHeaders})
}

/** One request, read once: its headers and its parsed body. */
export interface Incoming {
  method: string
  sessionId: string | undefined
  lastEventId: string | undefined
  protocolVersion: string | undefined
  /** The JSON-RPC messages of a POST (a batch has several); undefined when the body is not JSON-RPC. */
  messages: JsonObject[] | undefined
  batch: boolean
}

/** Reads a request's headers and, for a POST, its JSON-RPC messages. */
export async function readRequest(request: Request): Promise<Incoming> {
  const header = (name: string): string | undefined => request.headers.get(name) ?? undefined
  let messages: JsonObject[] | undefined
  let batch = false
  if (request.method === 'POST') {
    try {
      const body: unknown = JSON.parse(await request.text())
      batch = Array.isArray(body)
      const list: unknown[] = Array.isArray(body) ? body : [body]
      if (list.length > 0 && list.every(isObject)) messages = list
    } catch {
      // Not JSON: answered with a parse error.
    }
  }
  return {
    method: request.method,
    sessionId: header('mcp-session-id'),
    lastEventId: header('last-event-id'),
    protocolVersion: header('mcp-protocol-version'),
    messages,
    batch,
  }
}
