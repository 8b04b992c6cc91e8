import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {KeptRequests} from './kept-requests.ts'
import {RecentMap} from './recent-map.ts'
import type {TransportError} from '../errors.ts'
import type {TransportEvent, TransportMetrics} from '../events.ts'
import type {CallRecord} from '../events.ts'
import type {Limits} from '../policy/limits.ts'
import {isJsonRpcId, requestIdOf, responseIdOf, settlementFor, type JsonRpcId} from '../wire/jsonrpc.ts'

/** At least how many settled request IDs and server requests are remembered to recognise duplicates. */
const memory = 1024
/** At most how many server requests (unanswered, or with the answer given) are kept for a restart; `limits.keptRequestBytes` bounds their size. */
const keptRequests = memory
/**
 * Server requests the Client may hold unanswered (or answered, the answer not yet POSTed) per answer POST
 * allowed at once (`limits.maxConcurrentAnswers`); past that, their stream waits before handing over the next.
 */
const answersPerSlot = 8

export interface InboxHooks {
  /** Hands a message to the Client. */
  deliver: (message: JSONRPCMessage) => void
  /** Request `wireId` got its answer (handed to the Client): its stream is done with. */
  answered: (wireId: number) => void
  /** Sends the cached answer to a server request that came again after it was answered. */
  resendAnswer: (answer: JSONRPCMessage) => void
  onEvent: (event: TransportEvent) => void
  /** A kept server request (by {@link keyOfId}) is no longer kept: its stored record can go. */
  forgetKept: (key: string) => void
  metrics: TransportMetrics
  limits: Pick<Limits, 'dedupeBytes' | 'keptRequestBytes' | 'maxConcurrentAnswers'>
}

/**
 * A server request seen: `answer` once the Client gave one, and whether that answer's POST is still on its
 * way. A request that comes back once answered gets the answer again, unless it is on its way already (the
 * server re-emitted it before the answer reached it).
 */
interface ServerRequest {
  answer: JSONRPCMessage | undefined
  sending: boolean
}

/** A request on the wire: the Client's own ID, and whether its progress token was renamed with it. */
interface Pending {
  clientId: JsonRpcId
  renamedToken: boolean
}

/**
 * Everything that reaches the Client passes here, and each JSON-RPC message does so once: a response only
 * for a request still pending, a server request only while it has not been seen. It also translates request
 * IDs: the Client's restart at 0 in every process, the wire's are unique within the session (see
 * {@link Inbox.registerRequest}). Memory is bounded by the requests in flight plus {@link memory} remembered IDs.
 */
export class Inbox {
  readonly #hooks: InboxHooks
  /** Requests sent and not yet answered, by wire ID. */
  readonly #pending = new Map<number, Pending>()
  /** The wire ID of each pending request, by the Client's ID. */
  readonly #wireIds = new Map<JsonRpcId, number>()
  /** Wire IDs answered or settled lately (a second answer is a duplicate), and whether their token was renamed. */
  readonly #settled = new RecentMap<JsonRpcId, boolean>(memory)
  /** Server-to-client requests seen lately (their IDs are the server's: weighed), with the Client's answer once it has one. */
  readonly #serverRequests: RecentMap<JsonRpcId, ServerRequest>
  /** What a restart must not lose (see {@link KeptRequests}), by {@link keyOfId}; at most {@link keptRequests}. */
  readonly #kept: KeptRequests
  /** Server requests handed to the Client whose answer has not yet been POSTed: the Client's work in progress. */
  readonly #inClient = new Set<JsonRpcId>()
  /** Streams waiting for {@link #inClient} to shrink, woken by {@link answerSent}. */
  readonly #roomWaiters = new Set<() => void>()
  /** Wire IDs of a previous process's requests whose response streams this one resumes (see {@link adopt}). */
  readonly #adopted = new Set<number>()
  /** The count last announced with `pending-changed`. */
  #announced = 0

  constructor(hooks: InboxHooks) {
    this.#hooks = hooks
    this.#serverRequests = new RecentMap(memory, hooks.limits.dedupeBytes, (id) =>
      typeof id === 'string' ? id.length : 0,
    )
    this.#serverRequests.onOverweight = () => this.#exceeded('dedupeBytes', undefined, undefined)
    this.#kept = new KeptRequests(keptRequests, hooks.limits.keptRequestBytes, (key, message, overweight) => {
      if (overweight !== undefined)
        this.#exceeded('keptRequestBytes', overweight, requestIdOf(message) ?? responseIdOf(message))
      hooks.forgetKept(key)
    })
  }

  /**
   * Puts request `message` on the wire as `wireId`: returns it with that ID, and its progress token too when
   * the Client used its own request ID as the token (the SDK does), since tokens must be unique among the
   * session's active requests, the previous process's included.
   */
  registerRequest(message: JSONRPCMessage, wireId: number): JSONRPCMessage {
    const clientId = requestIdOf(message)!
    const params = (message as {params?: {_meta?: {progressToken?: unknown}}}).params
    const renamedToken = params?._meta?.progressToken === clientId
    this.#pending.set(wireId, {clientId, renamedToken})
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
    this.#wireIds.delete(pending.clientId)
    this.#announce()
  }

  /**
   * Remembers the Client's answer to a server request, to re-send it if the request comes again and the
   * answer is not on its way already. Returns the request's ID when `message` was such an answer (worth
   * persisting before it is sent); report the end of its POST with {@link answerSent}.
   */
  recordAnswer(message: JSONRPCMessage): JsonRpcId | undefined {
    const id = responseIdOf(message)
    if (id === undefined) return undefined
    if (!this.#serverRequests.has(id)) {
      // Forgotten meanwhile (many newer ones came): no POST will report it sent, so the Client's hold ends here.
      this.#release(id)
      return undefined
    }
    this.#serverRequests.set(id, {answer: message, sending: true})
    this.#kept.keep(keyOfId(id), message, JSON.stringify(message).length)
    return id
  }

  /**
   * The POST of the answer to server request `id` is over: `taken` when the server took it, which then asks no more,
   * so the answer is no longer kept for a restart (only remembered here, for a re-emission already on its way).
   */
  answerSent(id: JsonRpcId, taken: boolean): void {
    const request = this.#serverRequests.get(id)
    if (request !== undefined) request.sending = false
    if (taken && request?.answer !== undefined && this.#kept.delete(keyOfId(id))) this.#hooks.forgetKept(keyOfId(id))
    this.#release(id)
  }

  /** Server request `id` is off the Client's hands; streams waiting for room go on once half the room is free. */
  #release(id: JsonRpcId): void {
    if (
      this.#inClient.delete(id) &&
      this.#inClient.size <= (this.#hooks.limits.maxConcurrentAnswers * answersPerSlot) / 2
    )
      this.#wakeRoom()
  }

  /**
   * Undefined when the Client may be handed another server request now; else a promise that resolves once it
   * has answered enough of those it holds (or `signal` aborts). A server flooding requests thus waits on its own
   * stream instead of filling the client's memory with handlers and answers in progress.
   */
  roomForRequest(signal: AbortSignal): Promise<void> | undefined {
    const max = this.#hooks.limits.maxConcurrentAnswers * answersPerSlot
    if (this.#inClient.size < max) return undefined
    this.#hooks.onEvent({
      type: 'limit-exceeded',
      limit: 'maxConcurrentAnswers',
      size: this.#inClient.size,
      max,
      stream: undefined,
      requestId: undefined,
    })
    return new Promise((resolve) => {
      const wake = (): void => {
        signal.removeEventListener('abort', wake)
        this.#roomWaiters.delete(wake)
        resolve()
      }
      signal.addEventListener('abort', wake)
      this.#roomWaiters.add(wake)
    })
  }

  #wakeRoom(): void {
    for (const wake of [...this.#roomWaiters]) wake()
  }

  /**
   * Keeps server request `message` across restarts, if it is one this inbox has not seen: true when it was
   * new (the record is then worth storing before the request is delivered).
   */
  keepRequest(message: JSONRPCMessage): boolean {
    const id = requestIdOf(message)
    if (id === undefined || this.#serverRequests.has(id)) return false
    const key = keyOfId(id)
    if (this.#kept.has(key)) return false
    const chars = JSON.stringify(message).length
    if (chars > this.#hooks.limits.keptRequestBytes) {
      // Delivered all the same; only a restart would not hand it over again.
      this.#exceeded('keptRequestBytes', chars, id)
      return false
    }
    this.#kept.keep(key, message, chars)
    return true
  }

  #exceeded(
    limit: 'dedupeBytes' | 'keptRequestBytes',
    size: number | undefined,
    requestId: JsonRpcId | undefined,
  ): void {
    this.#hooks.onEvent({
      type: 'limit-exceeded',
      limit,
      size,
      max: this.#hooks.limits[limit],
      stream: undefined,
      requestId,
    })
  }

  /**
   * What a previous process kept: the requests it received but never answered (`unanswered`: the Client must handle
   * them now, since a stream resumed after them will not bring them again), and its answers the server may not have
   * taken (`unsent`: to send again now, for the server asks again only on a stream attached without
   * `Last-Event-ID`). A request answered is never handled twice.
   */
  restore(kept: Map<string, unknown>): {unanswered: JSONRPCMessage[]; unsent: JSONRPCMessage[]} {
    const unanswered: JSONRPCMessage[] = []
    const unsent: JSONRPCMessage[] = []
    for (const [key, value] of kept) {
      const id: unknown = JSON.parse(key)
      const message = value as JSONRPCMessage
      // Stryker disable next-line ConditionalExpression: records.ts loads only keys that parse to a JSON-RPC ID; this narrows the type
      if (!isJsonRpcId(id)) continue
      if (responseIdOf(message) === id) {
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: start() re-sends it at once, and the re-send's recordAnswer sets the entry again
        this.#serverRequests.set(id, {answer: message, sending: false})
        unsent.push(message)
      } else if (requestIdOf(message) === id) {
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: `sending` is read only with an answer, and recordAnswer sets both
        this.#serverRequests.set(id, {answer: undefined, sending: false})
        unanswered.push(message)
      } else continue
      this.#kept.keep(key, message, JSON.stringify(message).length)
    }
    return {unanswered, unsent}
  }

  /**
   * Gives the Client the server requests a previous process left unanswered ({@link restore}), once `connect` has
   * returned: a turn later, and only while `alive` has not aborted.
   */
  async handOver(requests: JSONRPCMessage[], alive: AbortSignal): Promise<void> {
    await Promise.resolve()
    for (const request of requests) {
      if (alive.aborted) return
      this.#hooks.onEvent({type: 'request-restored', requestId: requestIdOf(request)!})
      this.#hooks.deliver(request)
    }
  }

  /**
   * Delivers `message` unless it was delivered already, with the Client's request ID in place of the wire's.
   * `reemitted` marks a stream attached without `Last-Event-ID`, where the server re-emits its pending
   * requests; `origin` is the call a previous process's stream answers. A response to a pending request is
   * reported with the `answered` hook.
   */
  receive(message: JSONRPCMessage, reemitted: boolean, origin?: CallRecord): void {
    const responseId = responseIdOf(message)
    if (responseId !== undefined) {
      const pending = typeof responseId === 'number' ? this.#pending.get(responseId) : undefined
      if (pending === undefined) {
        if (this.#settled.has(responseId)) this.#dropped('response', responseId)
        else {
          this.#hooks.metrics.unmatchedResponses++
          this.#hooks.onEvent({type: 'unmatched-response', id: responseId, message, call: origin})
          this.#releaseAdopted(responseId)
        }
        return
      }
      this.#close(responseId as number, pending)
      this.#hooks.deliver({...message, id: pending.clientId})
      this.#hooks.answered(responseId as number)
      return
    }
    const requestId = requestIdOf(message)
    if (requestId === undefined) {
      const notification = this.#progressForClient(message)
      if (notification !== undefined) this.#hooks.deliver(notification)
      return
    }
    if (reemitted) this.#hooks.metrics.reemittedRequests++
    const seen = this.#serverRequests.get(requestId)
    if (seen !== undefined) {
      this.#dropped('server-request', requestId)
      // Answered already: answer again instead of running the handler twice. Pending: the answer is coming. The re-send
      // marks the answer on its way at once (send() calls recordAnswer before its first await).
      if (seen.answer !== undefined && !seen.sending) {
        this.#hooks.onEvent({type: 'cached-answer-resent', requestId})
        this.#hooks.resendAnswer(seen.answer)
      }
      return
    }
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: `sending` is read only with an answer, and recordAnswer sets both
    this.#serverRequests.set(requestId, {answer: undefined, sending: false})
    this.#inClient.add(requestId)
    this.#hooks.deliver(message)
  }

  /** True while request `wireId` awaits its answer. */
  isPending(wireId: number): boolean {
    return this.#pending.has(wireId)
  }

  /**
   * Requests awaiting an answer: the Client's, and a previous process's whose response streams are resumed
   * ({@link adopt}). Every change is announced with a `pending-changed` event.
   */
  get pendingRequests(): number {
    return this.#pending.size + this.#adopted.size
  }

  /**
   * Request `wireId` of a previous process, whose response stream this process resumes: pending until its answer
   * arrives (as an `unmatched-response`) or the stream is settled. Its answer is never delivered to the Client.
   */
  adopt(wireId: number): void {
    this.#adopted.add(wireId)
    this.#announce()
  }

  /**
   * Settles request `wireId` with a JSON-RPC error carrying `error.code`, so the caller rejects at once; an
   * adopted one ({@link adopt}) just stops being pending: no Client is waiting for it.
   */
  settle(wireId: number, error: TransportError): void {
    const pending = this.#pending.get(wireId)
    if (pending === undefined) {
      this.#releaseAdopted(wireId)
      return
    }
    this.#close(wireId, pending)
    this.#hooks.onEvent({type: 'request-settled', requestId: pending.clientId, code: error.code})
    this.#hooks.deliver(settlementFor(pending.clientId, error))
  }

  /** Settles every pending request, adopted ones too; returns how many of the Client's there were. */
  settleAll(error: TransportError): number {
    const wireIds = [...this.#pending.keys()]
    for (const wireId of [...wireIds, ...this.#adopted]) this.settle(wireId, error)
    return wireIds.length
  }

  /**
   * A new session starts: server request IDs of the old one mean nothing any more. Streams waiting for room need no
   * wake: the session's end aborts every stream, and their waits with them.
   */
  forgetServerRequests(): void {
    this.#serverRequests.clear()
    this.#kept.clear()
    this.#inClient.clear()
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

  /** Emits `pending-changed` when {@link pendingRequests} differs from what was last announced. */
  #announce(): void {
    const pending = this.pendingRequests
    if (pending === this.#announced) return
    this.#announced = pending
    this.#hooks.onEvent({type: 'pending-changed', pending})
  }

  /**
   * A progress notification names the token the Client chose, not the one that went on the wire; one for a
   * request already answered (replayed from too far back) is dropped: the Client could only report it.
   */
  #progressForClient(message: JSONRPCMessage): JSONRPCMessage | undefined {
    const params = (message as {params?: {progressToken?: unknown}}).params
    const token = params?.progressToken
    // Stryker disable next-line ConditionalExpression: pending and settled requests are keyed by number: another token finds neither
    if (typeof token !== 'number') return message
    const pending = this.#pending.get(token)
    if (pending === undefined && this.#settled.get(token) === true) {
      this.#dropped('progress', token)
      return undefined
    }
    if (pending?.renamedToken !== true) return message
    return {...message, params: {...params, progressToken: pending.clientId}}
  }

  #dropped(what: 'response' | 'server-request' | 'progress', id: JsonRpcId): void {
    this.#hooks.metrics.duplicatesDropped++
    this.#hooks.onEvent({type: 'duplicate-dropped', what, id})
  }
}

/** The key of a JSON-RPC ID among kept server requests: `JSON.stringify`, which keeps 1 and "1" apart. */
export function keyOfId(id: JsonRpcId): string {
  return JSON.stringify(id)
}
