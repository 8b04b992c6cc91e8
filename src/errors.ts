/**
 * Why a transport operation failed.
 *
 * - `session-expired`: the server answered 404 to a request that carried `Mcp-Session-Id`; the session,
 *   its cursors and every pending request are gone. Re-initialize to continue.
 * - `outcome-unknown`: the request reached the server (or may have), but its answer was lost and cannot be
 *   recovered. The transport never re-sends it: the app decides whether running it again is safe.
 * - `resumption-rejected`: the server refused a `Last-Event-ID`; that cursor is dropped and never sent again.
 * - `http`: an unexpected HTTP status (see `status`).
 * - `network`: the request could not be sent or its connection failed (see `cause`).
 * - `protocol`: the server sent something that is not valid Streamable HTTP or JSON-RPC.
 * - `aborted`: the transport was closed while the operation was under way.
 */
export type TransportErrorCode = (typeof transportErrorCodes)[number]

const transportErrorCodes = ['session-expired', 'outcome-unknown', 'resumption-rejected', 'http', 'network', 'protocol', 'aborted'] as const

export interface TransportErrorOptions {
  /** The HTTP status that caused the error, when there was one. */
  status?: number | undefined
  /** The underlying error. */
  cause?: unknown
}

/** The one error class of this library: branch on `code`, never on `message`. */
export class TransportError extends Error {
  override readonly name = 'TransportError'
  readonly code: TransportErrorCode
  readonly status: number | undefined

  constructor(code: TransportErrorCode, message: string, options: TransportErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.code = code
    this.status = options.status
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

/** The abort reason of `signal` as a TransportError, for work cut short by `close()`. */
export function abortedError(signal: AbortSignal): TransportError {
  return isTransportError(signal.reason)
    ? signal.reason
    : new TransportError('aborted', 'The transport was closed', {cause: signal.reason})
}
