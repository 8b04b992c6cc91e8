import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {CallRecord, TransportEvent, TransportMetrics} from '../events.ts'
import {requestIdOf, type JsonRpcId} from '../wire/jsonrpc.ts'
import {RecentMap} from './recent-map.ts'

/** At least how many settled request IDs are remembered to recognise a second answer. */
const settledMemory = 1024

/** What request IDs need of the transport. */
export interface RequestIdsHooks {
  onEvent: (event: TransportEvent) => void
  readonly metrics: TransportMetrics
  /** Reports a message dropped as a duplicate. */
  dropped: (what: 'response' | 'progress', id: JsonRpcId) => void
}

/**
 * A request on the wire: the Client's own ID, whether its progress token was renamed with it, and the last progress
 * handed over for it.
 */
interface Pending {
  clientId: JsonRpcId
  renamedToken: boolean
  progress: number | undefined
}

/**
 * The Client's requests on the wire, and their IDs: the Client's restart at 0 in every process, the wire's are
 * unique within the session. A request goes out under its wire ID ({@link register}) and its answer comes back
 * under the Client's ID ({@link answer}), once: a second answer is a duplicate. Memory is bounded by the requests
 * in flight plus {@link settledMemory} remembered IDs.
 */
export class RequestIds {
  readonly #hooks: RequestIdsHooks
  /** Requests sent and not yet answered, by wire ID. */
  readonly #pending = new Map<number, Pending>()
  /** The wire ID of each pending request, by the Client's ID. */
  readonly #wireIds = new Map<JsonRpcId, number>()
  /** Wire IDs answered or settled lately (a second answer is a duplicate), and whether their token was renamed. */
  readonly #settled = new RecentMap<JsonRpcId, boolean>(settledMemory)
  /** Wire IDs of a previous process's requests whose response streams this one resumes (see {@link adopt}). */
  readonly #adopted = new Set<number>()
  /**
   * Wire IDs lately given up on without an answer (a failed POST, a cancelled request) or adopted from a previous
   * process: progress under them is never for a call of the Client's.
   */
  readonly #pastTokens = new RecentMap<number, true>(settledMemory)
  /** The count last announced with `pending-changed`. */
  #announced = 0

  constructor(hooks: RequestIdsHooks) {
    this.#hooks = hooks
  }

  /**
   * Puts request `message` on the wire as `wireId`: returns it with that ID, and its progress token too when
   * the Client used its own request ID as the token (the SDK does), since tokens must be unique among the
   * session's active requests, the previous process's included.
   */
  register(message: JSONRPCMessage, wireId: number): JSONRPCMessage {
    const clientId = requestIdOf(message)!
    const params = (message as {params?: {_meta?: {progressToken?: unknown}}}).params
    const renamedToken = params?._meta?.progressToken === clientId
    this.#pending.set(wireId, {clientId, renamedToken, progress: undefined})
    this.#wireIds.set(clientId, wireId)
    this.#announce()
    const renamed = {...message, id: wireId} as JSONRPCMessage & {params?: object}
    if (renamedToken) renamed.params = {...params, _meta: {...params._meta, progressToken: wireId}}
    return renamed
  }

  /**
   * The Client cancelled its request `clientId`: stops waiting for it, and returns the cancellation naming the wire
   * ID instead (undefined when that request is not pending).
   */
  cancel(message: JSONRPCMessage, clientId: JsonRpcId): {message: JSONRPCMessage; wireId: number} | undefined {
    const wireId = this.#wireIds.get(clientId)
    if (wireId === undefined) return undefined
    this.forget(wireId)
    const params = (message as {params: object}).params
    return {message: {...message, params: {...params, requestId: wireId}}, wireId}
  }

  /** Stops waiting for `wireId` without delivering anything (the Client cancelled it, or `send` rejected). */
  forget(wireId: number): void {
    const pending = this.#pending.get(wireId)
    if (pending === undefined) return
    this.#pending.delete(wireId)
    // A tool that may have run goes on reporting progress under the wire ID, which can be one of the Client's IDs.
    if (pending.renamedToken) this.#pastTokens.set(wireId, true)
    this.#wireIds.delete(pending.clientId)
    this.#announce()
  }

  /** True while request `wireId` awaits its answer. */
  isPending(wireId: number): boolean {
    return this.#pending.has(wireId)
  }

  /**
   * Requests awaiting an answer: the Client's, and a previous process's whose response streams are resumed
   * ({@link adopt}). Every change is announced with a `pending-changed` event.
   */
  get count(): number {
    return this.#pending.size + this.#adopted.size
  }

  /** The wire IDs of the Client's pending requests, then of the adopted ones. */
  pendingWireIds(): {client: number[]; adopted: number[]} {
    return {client: [...this.#pending.keys()], adopted: [...this.#adopted]}
  }

  /**
   * Request `wireId` of a previous process, whose response stream this process resumes: pending until its answer
   * arrives (as an `unmatched-response`) or the stream is settled. Its answer is never delivered to the Client.
   */
  adopt(wireId: number): void {
    this.#adopted.add(wireId)
    this.#pastTokens.set(wireId, true)
    this.#announce()
  }

  /**
   * Response `message` arrived with ID `id`: the Client's ID of the request it answers, now answered; undefined
   * when it answers no pending request (a duplicate dropped, or an `unmatched-response` reported).
   */
  answer(id: JsonRpcId, message: JSONRPCMessage, origin: CallRecord | undefined): JsonRpcId | undefined {
    const pending = typeof id === 'number' ? this.#pending.get(id) : undefined
    if (pending !== undefined) {
      this.#close(id as number, pending)
      return pending.clientId
    }
    if (this.#settled.has(id)) this.#hooks.dropped('response', id)
    else {
      this.#hooks.metrics.unmatchedResponses++
      this.#hooks.onEvent({type: 'unmatched-response', id, message, call: origin})
      this.#releaseAdopted(id)
    }
    return undefined
  }

  /**
   * Request `wireId` is settled without its answer: the Client's ID when the Client waits for it; an adopted one
   * ({@link adopt}) just stops being pending, as no Client waits for it.
   */
  settle(wireId: number): JsonRpcId | undefined {
    const pending = this.#pending.get(wireId)
    if (pending === undefined) {
      this.#releaseAdopted(wireId)
      return undefined
    }
    this.#close(wireId, pending)
    return pending.clientId
  }

  /**
   * A progress notification names the token the Client chose, not the one that went on the wire; one for a
   * request already answered (replayed from too far back) is dropped: the Client could only report it. So is one
   * whose progress does not exceed the last one handed over, and one of a request given up on or of a previous
   * process's: replays from another stream, which the event check cannot see (a server that replays the whole
   * session's log). The latter's token may be an ID of this process's Client, which would take it for its own
   * request's progress.
   */
  progressForClient(message: JSONRPCMessage): JSONRPCMessage | undefined {
    const params = (message as {params?: {progressToken?: unknown; progress?: unknown}}).params
    const token = params?.progressToken
    // Stryker disable next-line ConditionalExpression: requests are keyed by number
    if (typeof token !== 'number') return message
    const pending = this.#pending.get(token)
    // [spec basic utilities progress] the progress value MUST increase with each notification.
    const progress = params?.progress
    const stale = typeof progress === 'number' && pending?.progress !== undefined && progress <= pending.progress
    const foreign = pending === undefined && (this.#settled.get(token) === true || this.#pastTokens.has(token))
    if (stale || foreign) {
      this.#hooks.dropped('progress', token)
      return undefined
    }
    if (pending !== undefined && typeof progress === 'number') pending.progress = progress
    if (pending?.renamedToken !== true) return message
    return {...message, params: {...params, progressToken: pending.clientId}}
  }

  #close(wireId: number, pending: Pending): void {
    this.#pending.delete(wireId)
    this.#wireIds.delete(pending.clientId)
    this.#settled.set(wireId, pending.renamedToken)
    this.#announce()
  }

  #releaseAdopted(wireId: JsonRpcId): void {
    // Stryker disable next-line ConditionalExpression: #announce emits only when the count changed
    if (typeof wireId === 'number' && this.#adopted.delete(wireId)) this.#announce()
  }

  /** Emits `pending-changed` when {@link count} differs from what was last announced. */
  #announce(): void {
    const pending = this.count
    if (pending === this.#announced) return
    this.#announced = pending
    this.#hooks.onEvent({type: 'pending-changed', pending})
  }
}
