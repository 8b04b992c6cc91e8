import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {RecentMap} from './bounded.ts'
import type {TransportError} from './errors.ts'
import type {TransportEvent, TransportMetrics} from './events.ts'
import {requestIdOf, responseIdOf, settlementFor, type JsonRpcId} from './jsonrpc.ts'

/** At least how many settled request IDs and server requests are remembered to recognise duplicates. */
const memory = 1024

export interface InboxHooks {
  /** Hands a message to the Client. */
  deliver: (message: JSONRPCMessage) => void
  /** Sends the cached answer to a server request that came again after it was answered. */
  resendAnswer: (answer: JSONRPCMessage) => void
  onEvent: (event: TransportEvent) => void
  metrics: TransportMetrics
}

/**
 * Everything that reaches the Client passes here, and each JSON-RPC message does so once:
 * a response only for a request still pending, a server request only while it has not been seen.
 * Memory is bounded by the requests in flight plus {@link memory} remembered IDs.
 */
export class Inbox {
  readonly #hooks: InboxHooks
  /** Requests sent and not yet answered. */
  readonly #pending = new Set<JsonRpcId>()
  /** Requests answered or settled lately: a second answer is a duplicate. */
  readonly #settled = new RecentMap<JsonRpcId, true>(memory)
  /** Server-to-client requests seen lately, with the Client's answer once it has one. */
  readonly #serverRequests = new RecentMap<JsonRpcId, JSONRPCMessage | undefined>(memory)

  constructor(hooks: InboxHooks) {
    this.#hooks = hooks
  }

  expect(id: JsonRpcId): void {
    this.#pending.add(id)
  }

  /** Stops waiting for `id` without delivering anything (the Client cancelled it, or `send` rejected). */
  forget(id: JsonRpcId): void {
    this.#pending.delete(id)
  }

  isPending(id: JsonRpcId): boolean {
    return this.#pending.has(id)
  }

  /** Remembers the Client's answer to a server request, to re-send it if the request comes again. */
  recordAnswer(message: JSONRPCMessage): void {
    const id = responseIdOf(message)
    if (id !== undefined && this.#serverRequests.has(id)) this.#serverRequests.set(id, message)
  }

  /**
   * Delivers `message` unless it was delivered already. `reemitted` marks a stream attached without
   * `Last-Event-ID`, where the server re-emits its pending requests.
   * Returns the ID of the request this message answered, if it answered one.
   */
  receive(message: JSONRPCMessage, reemitted: boolean): JsonRpcId | undefined {
    const responseId = responseIdOf(message)
    if (responseId !== undefined) {
      if (!this.#pending.delete(responseId)) {
        if (this.#settled.has(responseId)) this.#dropped('response', responseId)
        else this.#hooks.onEvent({type: 'unmatched-response', id: responseId})
        return undefined
      }
      this.#settled.set(responseId, true)
      this.#hooks.deliver(message)
      return responseId
    }
    const requestId = requestIdOf(message)
    if (requestId !== undefined) {
      if (reemitted) this.#hooks.metrics.reemittedRequests++
      if (this.#serverRequests.has(requestId)) {
        const answer = this.#serverRequests.get(requestId)
        this.#dropped('server-request', requestId)
        // Answered already: answer again instead of running the handler twice. Pending: the answer is coming.
        if (answer !== undefined) {
          this.#hooks.onEvent({type: 'cached-answer-resent', requestId})
          this.#hooks.resendAnswer(answer)
        }
        return undefined
      }
      this.#serverRequests.set(requestId, undefined)
    }
    this.#hooks.deliver(message)
    return undefined
  }

  /** Settles request `id` with a JSON-RPC error carrying `error.code`, so the caller rejects at once. */
  settle(id: JsonRpcId, error: TransportError): void {
    if (!this.#pending.delete(id)) return
    this.#settled.set(id, true)
    this.#hooks.onEvent({type: 'request-settled', requestId: id, code: error.code})
    this.#hooks.deliver(settlementFor(id, error))
  }

  /** Settles every pending request; returns how many there were. */
  settleAll(error: TransportError): number {
    const ids = [...this.#pending]
    for (const id of ids) this.settle(id, error)
    return ids.length
  }

  /** A new session starts: server request IDs of the old one mean nothing any more. */
  forgetServerRequests(): void {
    this.#serverRequests.clear()
  }

  #dropped(what: 'response' | 'server-request', id: JsonRpcId): void {
    this.#hooks.metrics.duplicatesDropped++
    this.#hooks.onEvent({type: 'duplicate-dropped', what, id})
  }
}
