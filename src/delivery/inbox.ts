import type {JSONRPCMessage, JSONRPCResultResponse} from '@modelcontextprotocol/sdk/types.js'
import {abortedError, type TransportError} from '../errors.ts'
import type {CallRecord, TransportEvent, TransportMetrics} from '../events.ts'
import type {Limits} from '../policy/limits.ts'
import {methodOf, requestIdOf, responseIdOf, settlementFor, type JsonRpcId} from '../wire/jsonrpc.ts'
import {Backpressure} from './backpressure.ts'
import {RequestIds} from './request-ids.ts'
import {ServerRequests, type Arrival, type ServerRequestsHooks} from './server-requests.ts'

/** What the inbox needs of the transport. */
export interface InboxHooks extends Pick<ServerRequestsHooks, 'store' | 'resumed' | 'track' | 'resend'> {
  /**
   * The Client's `onmessage`: the last step of every delivery (the app's own requests are taken before it);
   * `settled` is the failure a settlement carries.
   */
  onmessage: (message: JSONRPCMessage, settled?: TransportError) => void
  /** Response `wireId` arrived, before it is matched to its request (the answer to `initialize` starts the session). */
  responded: (wireId: JsonRpcId, message: JSONRPCMessage) => void
  /** Request `wireId` got its answer (handed to the Client): its stream is done with. */
  answered: (wireId: number) => void
  onEvent: (event: TransportEvent) => void
  readonly metrics: TransportMetrics
  readonly limits: Pick<Limits, 'dedupeBytes' | 'keptRequestBytes' | 'maxConcurrentAnswers'>
}

/** The connection that brought messages (a `Connection` of src/streams/stream.ts). */
export interface Via extends Arrival {
  /** Attached without `Last-Event-ID`, where the server re-emits its pending requests. */
  readonly reemits: boolean
}

/** The stream messages came on, as delivery sees it (a `Stream` of src/streams/stream.ts). */
export interface Carrier {
  readonly controller: AbortController
  /** Left by a previous process: its messages were meant for that process's Client. */
  readonly orphan: boolean
  readonly requestId: number | undefined
  readonly call: CallRecord | undefined
  /** Its request's response arrived: the stream has nothing more to bring. */
  markAnswered(): void
}

/**
 * Everything that reaches the Client passes here ({@link deliver}), and each JSON-RPC message does so once: a
 * response only for a request still pending, with the Client's request ID in place of the wire's
 * ({@link requests}); a server request only while it has not been seen ({@link serverRequests}), and only while the
 * Client has room for it (src/delivery/backpressure.ts).
 */
export class Inbox {
  readonly #hooks: InboxHooks
  /** The Client's requests on the wire, and the translation of their IDs. */
  readonly requests: RequestIds
  /** The server's requests: de-duplicated, their answers cached, what a restart needs kept. */
  readonly serverRequests: ServerRequests
  readonly #room: Backpressure

  constructor(hooks: InboxHooks) {
    this.#hooks = hooks
    const dropped = (what: 'response' | 'server-request' | 'progress', id: JsonRpcId): void => {
      hooks.metrics.duplicatesDropped++
      hooks.onEvent({type: 'duplicate-dropped', what, id})
    }
    this.#room = new Backpressure(hooks.limits, hooks.onEvent)
    this.requests = new RequestIds({onEvent: hooks.onEvent, metrics: hooks.metrics, dropped})
    this.serverRequests = new ServerRequests({
      ...hooks,
      release: (id) => this.#room.release(id),
      dropped,
    })
  }

  /** Requests awaiting an answer (see {@link RequestIds.count}); each change is a `pending-changed` event. */
  get pendingRequests(): number {
    return this.requests.count
  }

  /**
   * Hands `messages` to the Client in order, each unless it was delivered already: those `via` a connection of
   * `stream`, or of a JSON answer without them. Yields a turn before a response that follows other messages:
   * [SDK interop] the SDK Client dispatches a notification one microtask after receiving it but settles a response
   * at once, so a request's last progress and its response in one turn would lose the progress.
   */
  async deliver(messages: readonly JSONRPCMessage[], stream?: Carrier, via?: Via): Promise<void> {
    // Stryker disable next-line BooleanLiteral: a turn more changes no order
    let delivered = false
    const signal = stream?.controller.signal
    const orphan = stream?.orphan === true ? stream : undefined
    for (const message of messages) {
      const responseId = responseIdOf(message)
      const requestId = requestIdOf(message)
      // Stryker disable next-line ConditionalExpression,LogicalOperator: a turn more changes no order
      if (delivered && responseId !== undefined) await Promise.resolve()
      // A flood of server requests waits while the Client is busy with many (limits.maxConcurrentAnswers).
      if (signal !== undefined && requestId !== undefined) {
        // Awaited only when the Client is busy: a turn per server request otherwise.
        const room = this.#room.room(signal)
        // Stryker disable next-line ConditionalExpression: awaiting undefined changes no order
        if (room !== undefined) await room
      }
      if (signal?.aborted === true) throw abortedError(signal)
      if (orphan !== undefined && responseId === undefined && requestId === undefined) {
        // Progress and logs of a request this process never made would only confuse the Client.
        this.#hooks.onEvent({type: 'orphaned-notification', method: methodOf(message), message, call: orphan.call})
        continue
      }
      if (orphan !== undefined && responseId === orphan.requestId) orphan.markAnswered()
      delivered = true
      if (responseId !== undefined) this.#response(message, responseId, orphan?.call)
      else if (requestId === undefined) this.#notification(message)
      else this.#serverRequest(message, requestId, via)
    }
  }

  /**
   * Gives the Client the server requests a previous process left unanswered (`ServerRequests.restore`), once
   * `connect` has returned: a turn later, and only while `alive` has not aborted.
   */
  async handOver(requests: JSONRPCMessage[], alive: AbortSignal): Promise<void> {
    await Promise.resolve()
    for (const request of requests) {
      if (alive.aborted) return
      this.#hooks.onEvent({type: 'request-restored', requestId: requestIdOf(request)!})
      this.#hooks.onmessage(request)
    }
  }

  /** A stored session's `initialize` is answered from the store: the request never went on the wire. */
  answerFromStore(clientId: JsonRpcId, result: JSONRPCResultResponse['result']): void {
    this.#hooks.onmessage({jsonrpc: '2.0', id: clientId, result})
  }

  /**
   * Settles request `wireId` with a JSON-RPC error carrying `error.code`, so the caller rejects at once; an
   * adopted one just stops being pending: no Client is waiting for it.
   */
  settle(wireId: number, error: TransportError): void {
    const clientId = this.requests.settle(wireId)
    if (clientId === undefined) return
    this.#hooks.onEvent({type: 'request-settled', requestId: clientId, code: error.code})
    this.#hooks.onmessage(settlementFor(clientId, error), error)
  }

  /** Settles every pending request, adopted ones too; returns how many of the Client's there were. */
  settleAll(error: TransportError): number {
    const {client, adopted} = this.requests.pendingWireIds()
    for (const wireId of [...client, ...adopted]) this.settle(wireId, error)
    return client.length
  }

  /** A new session starts: server request IDs of the old one mean nothing any more. */
  forgetServerRequests(): void {
    this.serverRequests.forget()
    this.#room.clear()
  }

  /** A response goes to the Client under the Client's ID, once; the request's stream is then done with. */
  #response(message: JSONRPCMessage, wireId: JsonRpcId, origin: CallRecord | undefined): void {
    this.#hooks.responded(wireId, message)
    const clientId = this.requests.answer(wireId, message, origin)
    if (clientId === undefined) return
    this.#hooks.onmessage({...message, id: clientId})
    this.#hooks.answered(wireId as number)
  }

  #notification(message: JSONRPCMessage): void {
    const notification = this.requests.progressForClient(message)
    if (notification !== undefined) this.#hooks.onmessage(notification)
  }

  #serverRequest(message: JSONRPCMessage, id: JsonRpcId, via: Via | undefined): void {
    if (via?.reemits === true) this.#hooks.metrics.reemittedRequests++
    if (!this.serverRequests.arrived(id, via)) return
    this.#room.hold(id)
    this.#hooks.onmessage(message)
  }
}
