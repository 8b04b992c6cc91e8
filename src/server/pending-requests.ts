/**
 * Session resumption for an SDK server transport (docs/server.md#pending-requests,
 * docs/design.md#what-a-server-must-do): every server-to-client request is remembered until it is answered or
 * cancelled, and a stream attached without `Last-Event-ID` gets each one still unanswered again, or a cancellation of
 * each. No SDK server does this itself: a request whose stream was lost waits for its timeout.
 */
import {checkKeys, oneOf, positiveInteger} from './checks.ts'
import type {JsonRpcMessage} from './event-store.ts'

type JsonRpcId = string | number

/** What a stream attached without `Last-Event-ID` gets for each server request still unanswered. */
export type PendingOnAttach = 're-emit' | 'cancel'

export interface PendingRequestsOptions {
  /**
   * `'re-emit'`: each unanswered server request is sent again, as it was, on the new stream. `'cancel'`: the
   * client gets a `notifications/cancelled` for each on the new stream, and the tool that asked gets a JSON-RPC
   * error (-32800) as its answer. A client that does not recognise a request it has seen by its ID (the SDK's
   * transport) may handle a re-emitted one twice; cancelling never asks twice.
   * @defaultValue 're-emit'
   */
  pendingOnAttach?: PendingOnAttach | undefined
  /**
   * How many unanswered server requests are kept, at most: past it the oldest is forgotten (never sent again;
   * its tool still waits for its answer, or its timeout).
   * @defaultValue 100
   */
  maxPending?: number | undefined
  /**
   * How much the unanswered server requests may weigh together, in characters of their JSON: past it the
   * oldest are forgotten.
   * @defaultValue 1048576 (1 MiB)
   */
  maxPendingBytes?: number | undefined
  /**
   * Called after each session resumption, once every server request still unanswered has gone out again on the new
   * stream (or its cancellation has), with how many of each: in the async context of that `GET`, so that a tracer's
   * active span is the `GET`'s (`mcp-resumable-http/otel` adds its span event there). One that throws is ignored.
   * @defaultValue none
   */
  onSessionResumption?: ((resumption: SessionResumption) => void) | undefined
}

/** One session resumption, as {@link PendingRequestsOptions.onSessionResumption} hears of it. */
export interface SessionResumption {
  /** Server requests sent again on the new stream. */
  reemittedRequests: number
  /** Server requests cancelled on it (`pendingOnAttach: 'cancel'`). */
  cancelledRequests: number
}

/** What the wrapper did since it was made: for logs or metrics. Re-emissions are counted apart from replays. */
export interface PendingRequestsMetrics {
  /** Server requests unanswered now. */
  pendingRequests: number
  /** `GET`s without `Last-Event-ID` answered with a stream: session resumptions. */
  sessionResumptions: number
  /** Server requests sent again on such a stream. */
  reemittedRequests: number
  /** Server requests cancelled on such a stream (`pendingOnAttach: 'cancel'`). */
  cancelledRequests: number
  /** Unanswered server requests forgotten past `maxPending` or `maxPendingBytes`. */
  forgottenRequests: number
}

/** The handle {@link reemitPendingRequests} returns. */
export interface PendingRequests {
  /** A copy of the counters. */
  readonly metrics: PendingRequestsMetrics
}

/**
 * The members of an SDK server transport the wrapper uses: v1's `StreamableHTTPServerTransport` and
 * `WebStandardStreamableHTTPServerTransport`, and v2's `WebStandardStreamableHTTPServerTransport`.
 */
export interface SdkServerTransport {
  send(message: never, options?: never): Promise<void>
  handleRequest(...args: never[]): Promise<unknown>
  onmessage?: ((message: never, extra?: never) => void) | undefined
  onclose?: (() => void) | undefined
  onerror?: ((error: never) => void) | undefined
}

/** The same members, as the wrapper calls them. */
interface Wrapped {
  send(message: JsonRpcMessage, options?: {relatedRequestId?: JsonRpcId}): Promise<void>
  handleRequest(...args: unknown[]): Promise<unknown>
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
}

/** A Web-standard request, or Node's `IncomingMessage` with its `ServerResponse`: the parts read here. */
interface WebRequest {
  method: string
  headers: {get(name: string): string | null}
}
interface NodeRequest {
  method?: string | undefined
  headers: Record<string, string | string[] | undefined>
}
interface NodeResponse {
  writeHead(status: number, ...rest: unknown[]): unknown
}

interface Envelope {
  id?: unknown
  method?: unknown
  params?: {requestId?: unknown} | undefined
}

const isId = (value: unknown): value is JsonRpcId => typeof value === 'string' || typeof value === 'number'
/** The error code of a request cancelled before its answer: LSP's RequestCancelled (MCP names none), as the reference server of `./testing` answers. */
const requestCancelled = -32800
const cancelReason = 'the stream that carried it was lost'

const where = 'reemitPendingRequests'
const wrapped = new WeakSet<object>()

/** Whether a request is a `GET` without `Last-Event-ID`: a stream attached for the session, not resumed. */
function attachesWithoutCursor(method: string | undefined, lastEventId: string | string[] | null | undefined): boolean {
  // The SDK reads an empty `Last-Event-ID` as none, as SSE does.
  return method === 'GET' && (lastEventId === null || lastEventId === undefined || lastEventId === '')
}

/**
 * Wraps an SDK server transport in place, before or after `server.connect(transport)`: its `send`, its
 * `handleRequest` and its `onmessage`/`onclose` (which the SDK's `connect` chains). Every server-to-client request
 * it sends is remembered until the client answers it or the server cancels it (a request's timeout sends
 * `notifications/cancelled`), or the transport closes; a `GET` without `Last-Event-ID` that the SDK answers with a
 * stream (status 200) then gets each one again on that stream, or a cancellation of each
 * (`pendingOnAttach`). A `GET` with `Last-Event-ID` is stream resumption: the event store replays, nothing is
 * re-emitted.
 *
 * @example
 * ```ts
 * const transport = new StreamableHTTPServerTransport({
 *   sessionIdGenerator: () => randomUUID(),
 *   eventStore: new ResumableEventStore(),
 * })
 * const pending = reemitPendingRequests(transport)
 * ```
 */
export function reemitPendingRequests(
  transport: SdkServerTransport,
  options: PendingRequestsOptions = {},
): PendingRequests {
  const target = transport as unknown as Wrapped
  if (
    typeof target !== 'object' ||
    (target as unknown) === null ||
    typeof target.send !== 'function' ||
    typeof target.handleRequest !== 'function'
  ) {
    throw new TypeError(
      'reemitPendingRequests: transport must be an SDK server transport (with send and handleRequest)',
    )
  }
  if (wrapped.has(target)) throw new TypeError('reemitPendingRequests: this transport is wrapped already')
  checkKeys(options, ['pendingOnAttach', 'maxPending', 'maxPendingBytes', 'onSessionResumption'], where)
  const pendingOnAttach = oneOf<PendingOnAttach>(
    options.pendingOnAttach,
    ['re-emit', 'cancel'],
    're-emit',
    where,
    'pendingOnAttach',
  )
  const maxPending = positiveInteger(options.maxPending, 100, where, 'maxPending')
  const maxPendingBytes = positiveInteger(options.maxPendingBytes, 1_048_576, where, 'maxPendingBytes')
  const {onSessionResumption} = options
  if (onSessionResumption !== undefined && typeof onSessionResumption !== 'function')
    throw new TypeError(`${where}: options.onSessionResumption must be a function`)
  wrapped.add(target)

  const pending = new Map<JsonRpcId, {message: JsonRpcMessage; weight: number}>()
  let pendingWeight = 0
  const metrics: Omit<PendingRequestsMetrics, 'pendingRequests'> = {
    sessionResumptions: 0,
    reemittedRequests: 0,
    cancelledRequests: 0,
    forgottenRequests: 0,
  }

  const forget = (id: JsonRpcId): void => {
    const entry = pending.get(id)
    if (entry === undefined) return
    pending.delete(id)
    pendingWeight -= entry.weight
  }
  const remember = (id: JsonRpcId, message: JsonRpcMessage): void => {
    forget(id)
    const weight = JSON.stringify(message).length
    pending.set(id, {message, weight})
    pendingWeight += weight
    for (const [oldest] of pending) {
      if (pending.size <= maxPending && pendingWeight <= maxPendingBytes) break
      forget(oldest)
      metrics.forgottenRequests++
    }
  }

  const send = target.send.bind(target)
  target.send = (message, sendOptions) => {
    const {id, method, params} = message as Envelope
    if (typeof method === 'string' && isId(id)) remember(id, message)
    else if (method === 'notifications/cancelled' && isId(params?.requestId)) forget(params.requestId)
    return send(message, sendOptions)
  }

  const answered = (message: JsonRpcMessage): void => {
    const envelope = message as Envelope & {result?: unknown; error?: unknown}
    if (envelope.method === undefined && isId(envelope.id) && ('result' in envelope || 'error' in envelope))
      forget(envelope.id)
  }
  const nextMessage = target.onmessage
  target.onmessage = (message, extra) => {
    answered(message)
    nextMessage?.(message, extra)
  }
  const nextClose = target.onclose
  target.onclose = () => {
    pending.clear()
    pendingWeight = 0
    nextClose?.()
  }

  /** The new stream is the standalone one now: everything still unanswered goes on it, in the order sent. */
  const attached = async (): Promise<void> => {
    metrics.sessionResumptions++
    const resumption: SessionResumption = {reemittedRequests: 0, cancelledRequests: 0}
    try {
      for (const [id, {message}] of [...pending]) {
        if (pendingOnAttach === 're-emit') {
          await send(message)
          metrics.reemittedRequests++
          resumption.reemittedRequests++
          continue
        }
        forget(id)
        metrics.cancelledRequests++
        resumption.cancelledRequests++
        await send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: {requestId: id, reason: cancelReason},
        } as JsonRpcMessage)
        // The server's own Protocol learns it through the transport, as an answer: the tool's request rejects.
        target.onmessage?.({
          jsonrpc: '2.0',
          id,
          error: {code: requestCancelled, message: `Request cancelled: ${cancelReason}`},
        } as JsonRpcMessage)
      }
    } finally {
      try {
        onSessionResumption?.(resumption)
      } catch {
        // The app's observer; its failure is not the session's.
      }
    }
  }
  const attach = (): void => {
    attached().catch((error: unknown) => target.onerror?.(error instanceof Error ? error : new Error(String(error))))
  }

  const handleRequest = target.handleRequest.bind(target)
  target.handleRequest = async (...args) => {
    const request = args[0] as WebRequest | NodeRequest
    if (typeof (request.headers as Partial<WebRequest['headers']>).get === 'function') {
      const web = request as WebRequest
      const response = (await handleRequest(...args)) as Response
      if (attachesWithoutCursor(web.method, web.headers.get('last-event-id')) && response.status === 200) attach()
      return response
    }
    const node = request as NodeRequest
    if (attachesWithoutCursor(node.method, node.headers['last-event-id'])) {
      // The Node transport writes its answer to the response and returns once the stream ends: its head is the
      // moment the stream is attached (Node calls writeHead for an implicit head too).
      const response = args[1] as NodeResponse
      const writeHead = response.writeHead.bind(response)
      response.writeHead = (status, ...rest) => {
        response.writeHead = writeHead
        const result = writeHead(status, ...rest)
        if (status === 200) attach()
        return result
      }
    }
    return handleRequest(...args)
  }

  return {
    get metrics() {
      return {pendingRequests: pending.size, ...metrics}
    },
  }
}
