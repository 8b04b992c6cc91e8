/**
 * Why a transport operation failed.
 *
 * Each code tells the caller whether the request may have run
 * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/errors.md | the codes},
 * {@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/failures.md | what each answer means}):
 *
 * - `session-expired`: the server answered 404 to a request that carried `Mcp-Session-Id`, or a 400
 *   or 410 that can only be the session's
 *   ([failures](https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/failures.md#a-session-the-server-no-longer-knows)),
 *   or the session the Client relies on expired earlier; the session, its cursors and every pending
 *   request are gone. The request was not acted on. Re-initialize to continue.
 * - `outcome-unknown`: the request reached the server (or may have), but its answer was lost and cannot be
 *   recovered. The transport never re-sends it: the app decides whether running it again is safe.
 * - `not-sent`: no connection to the server could be opened (refused, unreachable host, name not found): the
 *   request never left, so sending it again is safe.
 * - `resumption-rejected`: the server refused a `Last-Event-ID`; that cursor is dropped and never sent again.
 * - `http`: the server answered with a status that says it did not act on the request (see `status`).
 * - `network`: a connection failed (see `cause`); for a request, reported as `outcome-unknown` or `not-sent`.
 * - `protocol`: the server sent something that is not valid Streamable HTTP or JSON-RPC.
 * - `store`: the store failed (reported once through `onerror`, then as `store-error` events): the transport goes
 *   on, but what it could not store will not survive a restart.
 * - `aborted`: the transport was closed while the operation was under way, or the app's own signal stopped it.
 */
export type TransportErrorCode =
  | 'session-expired'
  | 'outcome-unknown'
  | 'not-sent'
  | 'resumption-rejected'
  | 'http'
  | 'network'
  | 'protocol'
  | 'store'
  | 'aborted'

// Every code, for transportErrorCodeOf: `satisfies` makes the compiler refuse a code missing here, or one too many.
const transportErrorCodes = Object.keys({
  'session-expired': true,
  'outcome-unknown': true,
  'not-sent': true,
  'resumption-rejected': true,
  http: true,
  network: true,
  protocol: true,
  store: true,
  aborted: true,
} satisfies Record<TransportErrorCode, true>) as TransportErrorCode[]

export interface TransportErrorOptions {
  /** The HTTP status that caused the error, when there was one. */
  status?: number | undefined
  /** The body of that HTTP answer (secrets masked), when it was read. */
  body?: string | undefined
  /** The underlying error. */
  cause?: unknown
}

/** What the v2 SDK's `SdkHttpError` carries as `data`: the status, and the body of the answer. */
export interface HttpErrorData {
  readonly status: number
  readonly text: string | undefined
}

/**
 * [SDK interop] the v2 SDK's error brands (`Symbol.for`, so shared by every copy of it): an error carrying the
 * `SdkHttpError` brand is `instanceof SdkHttpError` there, which is how the v2 Client's version negotiation tells
 * an HTTP answer (401, 403, 5xx, or a body it can classify) from a network failure.
 */
const sdkErrorBrands = Symbol.for('mcp.sdk.errorBrands')

/** The one error class of this library: branch on `code`, never on `message`. */
export class TransportError extends Error {
  override readonly name = 'TransportError'
  readonly code: TransportErrorCode
  readonly status: number | undefined
  /** Present with a `status`: the answer as the v2 SDK's `SdkHttpError.data` holds it (this error is one there). */
  readonly data: HttpErrorData | undefined

  constructor(code: TransportErrorCode, message: string, options: TransportErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.code = code
    this.status = options.status
    this.data = options.status === undefined ? undefined : {status: options.status, text: options.body}
    if (options.status !== undefined)
      Object.defineProperty(this, sdkErrorBrands, {value: new Set(['mcp.SdkError', 'mcp.SdkHttpError'])})
  }
}

/** True for a {@link TransportError}, also one from another realm or another copy of this library. */
export function isTransportError(value: unknown, code?: TransportErrorCode): value is TransportError {
  const isOne =
    value instanceof TransportError ||
    (value instanceof Error && value.name === 'TransportError' && typeof (value as {code?: unknown}).code === 'string')
  return isOne && (code === undefined || (value as TransportError).code === code)
}

/**
 * The {@link TransportErrorCode} a failed call carries, whichever way it failed: the TransportError `send` threw,
 * or the JSON-RPC error a settled request was answered with (the SDK Client rejects with an `McpError` whose
 * `data.code` holds the code). Undefined for any other error.
 */
export function transportErrorCodeOf(error: unknown): TransportErrorCode | undefined {
  if (isTransportError(error)) return error.code
  const code = (error as {data?: {code?: unknown}} | null | undefined)?.data?.code
  return transportErrorCodes.find((known) => known === code)
}

/** `error` as an Error: a thrown non-Error is wrapped, with its text as the message. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

/**
 * A part of this library loaded on first use (a chunk of its own in a bundled app) that did not load: `what` names
 * it and what it was for, `remedy` what else the app can do. The operation that needed it rejects with this; the
 * next one loads it again.
 */
export function notLoaded(what: string, cause: unknown, remedy = ''): TransportError {
  return new TransportError('network', `${what} could not be loaded: ${asError(cause).message}${remedy}`, {cause})
}

/** What `calls.wait()` rejects with for a call the journal does not hold (it holds none while off or not loaded). */
export function unknownCall(callId: string): TypeError {
  return new TypeError(`The call journal holds no call ${JSON.stringify(callId)}`)
}

/**
 * The abort reason of `signal` as a TransportError: `close()`'s own, or one that wraps the reason of an app's signal
 * (`calls.wait`), saying so.
 */
export function abortedError(signal: AbortSignal): TransportError {
  return isTransportError(signal.reason)
    ? signal.reason
    : new TransportError('aborted', 'The operation was stopped by its signal', {cause: signal.reason})
}

/** Error codes of a connection that was never opened: nothing of the request reached the server. */
const notConnected = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
])

/**
 * True when `error` (or an error in its `cause` chain) says the connection was never opened. Browsers say nothing
 * of the kind ("Failed to fetch"): there the request may have been sent, and this is false.
 */
export function neverConnected(error: unknown): boolean {
  for (let link = error, depth = 0; link instanceof Error && depth < 8; link = link.cause, depth++) {
    const code = (link as {code?: unknown}).code
    if (typeof code === 'string' && notConnected.has(code)) return true
  }
  return false
}
