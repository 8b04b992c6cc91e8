import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {limitExceeded, type TransportEvent} from '../events.ts'
import type {Limits} from '../policy/limits.ts'
import {isJsonRpcId, requestIdOf, responseIdOf, type JsonRpcId} from '../wire/jsonrpc.ts'
import {KeptRequests} from './kept-requests.ts'
import {RecentMap} from './recent-map.ts'

/** At least how many server requests are remembered to recognise one that comes again. */
const seenMemory = 1024
/** At most how many server requests (unanswered, or with the answer given) are kept for a restart. */
const keptMemory = seenMemory

/** What server requests need of the transport. */
export interface ServerRequestsHooks {
  /**
   * Stores server request `key`'s message (the request, or the Client's answer, `taken` once the server confirmed
   * it) with the key of the stream that brought the request; deletes it when `message` is undefined.
   */
  store: (key: string, message: JSONRPCMessage | undefined, stream?: string, taken?: boolean) => Promise<void>
  /** Settles once stream `stream`, resumed from a previous process's record, has a connection again (see `Stream`). */
  resumed: (stream: string) => Promise<void> | undefined
  track: (task: Promise<void>) => void
  /** Sends the cached answer to a server request that came again after it was answered. */
  resend: (answer: JSONRPCMessage) => void
  /** Server request `id` is off the Client's hands (see `Backpressure`). */
  release: (id: JsonRpcId) => void
  /** Reports a server request dropped as a duplicate. */
  dropped: (what: 'server-request', id: JsonRpcId) => void
  onEvent: (event: TransportEvent) => void
  limits: Pick<Limits, 'dedupeBytes' | 'keptRequestBytes'>
}

/**
 * A server request seen: `answer` once the Client gave one, whether that answer's POST is still on its way, and
 * the {@link moment} the server confirmed it took the answer (202), if it did.
 */
interface Seen {
  answer: JSONRPCMessage | undefined
  sending: boolean
  takenAt: number | undefined
}

/** The last {@link moment} handed out. */
let moments = 0

/**
 * A point in the transport's own order of things, later than every one before it: when a connection was requested,
 * when the server took an answer. A counter, for clocks tie and may stand still (workerd's, during I/O).
 */
export function moment(): number {
  return ++moments
}

/** The connection a server request came on: when it was requested (a {@link moment}), and whether it is a replay. */
export interface Arrival {
  readonly sentAt: number
  /** Sent with `Last-Event-ID`: what it brings the server wrote before, on the stream it resumes. */
  readonly resumed: boolean
}

/**
 * Whether a server request that came again, on connection `via`, must get its cached answer again
 * (docs/design.md#an-answer-sent-again). Not while the answer is on its way: the server re-emitted it before the
 * answer reached it. Yes when the server never confirmed the answer. Once it did, a replay brings only what it wrote
 * before, and a connection requested before the confirmation may bring a copy written before it: no. Yes on a
 * connection requested after it, attached without `Last-Event-ID`: a server that re-emits what it took has lost it.
 */
function asksAgain(seen: Seen, via: Arrival | undefined): seen is Seen & {answer: JSONRPCMessage} {
  if (seen.answer === undefined || seen.sending) return false
  if (seen.takenAt === undefined || via === undefined) return true
  return !via.resumed && seen.takenAt < via.sentAt
}

/**
 * The server's requests to the Client: each one is handled once, however often the server sends it; the Client's
 * answer is cached, to answer again a request that comes back; and what a restart must not lose is kept in the
 * store (see {@link KeptRequests}): the requests not yet answered, and the answers the server may not have taken.
 */
export class ServerRequests {
  readonly #hooks: ServerRequestsHooks
  /** Server requests seen lately (their IDs are the server's: weighed), with the Client's answer once it has one. */
  readonly #seen: RecentMap<JsonRpcId, Seen>
  /** What a restart must not lose, by {@link keyOfId}; at most {@link keptMemory}. */
  readonly #kept: KeptRequests

  constructor(hooks: ServerRequestsHooks) {
    this.#hooks = hooks
    this.#seen = new RecentMap(seenMemory, hooks.limits.dedupeBytes, (id) => (typeof id === 'string' ? id.length : 0))
    this.#seen.onOverweight = () => this.#exceeded('dedupeBytes', undefined, undefined)
    this.#kept = new KeptRequests(keptMemory, hooks.limits.keptRequestBytes, (key, message, overweight) => {
      if (overweight !== undefined)
        this.#exceeded('keptRequestBytes', overweight, requestIdOf(message) ?? responseIdOf(message))
      hooks.track(hooks.store(key, undefined))
    })
  }

  /**
   * Server request `id` arrived, `via` a connection (undefined for a JSON answer): true when it is new, now seen.
   * Else it is dropped as a duplicate, and answered again when {@link asksAgain} says the server may have lost the
   * Client's answer.
   */
  arrived(id: JsonRpcId, via: Arrival | undefined): boolean {
    const seen = this.#seen.get(id)
    if (seen === undefined) {
      this.#seen.set(id, seenUnanswered())
      return true
    }
    this.#hooks.dropped('server-request', id)
    // Answered already: answer again instead of running the handler twice. Pending: the answer is coming. The re-send
    // marks the answer on its way at once (send() calls recordAnswer before its first await).
    if (asksAgain(seen, via)) {
      this.#hooks.onEvent({type: 'cached-answer-resent', requestId: id})
      this.#hooks.resend(seen.answer)
    }
    return false
  }

  /**
   * Keeps server request `message`, brought by stream `stream`, across restarts, if it is one not seen yet: returns
   * the store write, worth awaiting before the request is delivered; undefined when there is nothing to store.
   */
  keep(message: JSONRPCMessage, stream: string): Promise<void> | undefined {
    const id = requestIdOf(message)
    if (id === undefined || this.#seen.has(id)) return undefined
    const key = keyOfId(id)
    if (this.#kept.has(key)) return undefined
    const chars = JSON.stringify(message).length
    if (chars > this.#hooks.limits.keptRequestBytes) {
      // Delivered all the same; only a restart would not hand it over again.
      this.#exceeded('keptRequestBytes', chars, id)
      return undefined
    }
    this.#kept.keep(key, message, chars, stream)
    return this.#hooks.store(key, message, stream)
  }

  /**
   * Remembers the Client's answer to a server request, to re-send it if the request comes again and the answer is
   * not on its way already, and stores it for a restart. Returns the request's ID and the store write when
   * `message` was such an answer; report the end of its POST with {@link answerSent}. Resume, then answer
   * (docs/design.md#session): the POST waits for `resumed`, when the stream that brought the request was resumed
   * from a previous process's cursor, until it has a connection again or has ended. The server may write the result
   * the answer ends the tool with only to a live connection.
   */
  recordAnswer(
    message: JSONRPCMessage,
  ): {id: JsonRpcId; stored: Promise<void>; resumed: Promise<void> | undefined} | undefined {
    const id = responseIdOf(message)
    if (id === undefined) return undefined
    if (!this.#seen.has(id)) {
      // Forgotten meanwhile (many newer ones came): no POST will report it sent, so the Client's hold ends here.
      this.#hooks.release(id)
      return undefined
    }
    this.#seen.set(id, {answer: message, sending: true, takenAt: undefined})
    const key = keyOfId(id)
    const stream = this.#kept.streamOf(key)
    this.#kept.keep(key, message, JSON.stringify(message).length, stream)
    const resumed = stream === undefined ? undefined : this.#hooks.resumed(stream)
    return {id, stored: this.#hooks.store(key, message, stream), resumed}
  }

  /**
   * The POST of the answer to server request `id` is over: `taken` when the server took it, which then asks no more.
   * The answer stays kept, marked taken, so that a next process recognises a replayed copy of the request and
   * neither hands it to its Client nor sends the answer again.
   */
  answerSent(id: JsonRpcId, taken: boolean): void {
    const seen = this.#seen.get(id)
    if (seen !== undefined) {
      seen.sending = false
      if (taken) seen.takenAt = moment()
    }
    const key = keyOfId(id)
    if (taken && seen?.answer !== undefined && this.#kept.has(key)) {
      const stream = this.#kept.streamOf(key)
      this.#kept.keep(key, seen.answer, JSON.stringify(seen.answer).length, stream, true)
      this.#hooks.track(this.#hooks.store(key, seen.answer, stream, true))
    }
    this.#hooks.release(id)
  }

  /**
   * What a previous process kept: the requests it received but never answered (`unanswered`: the Client must handle
   * them now, since a stream resumed after them will not bring them again), and its answers the server may not have
   * taken (`unsent`: to send again once the streams are resumed, for the server asks again only on a stream attached
   * without `Last-Event-ID`). A request answered is never handled twice.
   */
  restore(kept: Map<string, {message: unknown; stream: string | undefined; taken: boolean}>): {
    unanswered: JSONRPCMessage[]
    unsent: JSONRPCMessage[]
  } {
    const unanswered: JSONRPCMessage[] = []
    const unsent: JSONRPCMessage[] = []
    for (const [key, {message: value, stream, taken}] of kept) {
      const id: unknown = JSON.parse(key)
      const message = value as JSONRPCMessage
      // Stryker disable next-line ConditionalExpression: records.ts loads only keys that are JSON-RPC IDs
      if (!isJsonRpcId(id)) continue
      if (responseIdOf(message) === id && taken) {
        // Taken before this process: before every connection of it.
        this.#seen.set(id, {answer: message, sending: false, takenAt: 0})
      } else if (responseIdOf(message) === id) {
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: start() re-sends it, which sets it again
        this.#seen.set(id, {answer: message, sending: false, takenAt: undefined})
        unsent.push(message)
      } else if (requestIdOf(message) === id) {
        this.#seen.set(id, seenUnanswered())
        unanswered.push(message)
      } else continue
      this.#kept.keep(key, message, JSON.stringify(message).length, stream, taken)
    }
    return {unanswered, unsent}
  }

  /** A new session starts: server request IDs of the old one mean nothing any more. */
  forget(): void {
    this.#seen.clear()
    this.#kept.clear()
  }

  #exceeded(
    limit: 'dedupeBytes' | 'keptRequestBytes',
    size: number | undefined,
    requestId: JsonRpcId | undefined,
  ): void {
    this.#hooks.onEvent(limitExceeded(limit, this.#hooks.limits[limit], {size, requestId}))
  }
}

/** A server request the Client has not answered yet. */
function seenUnanswered(): Seen {
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: `sending` and `takenAt` are read only with an answer
  return {answer: undefined, sending: false, takenAt: undefined}
}

/** The key of a JSON-RPC ID among kept server requests: `JSON.stringify`, which keeps 1 and "1" apart. */
function keyOfId(id: JsonRpcId): string {
  return JSON.stringify(id)
}
