import {limitExceeded, type TransportEvent} from '../events.ts'
import type {Limits} from '../policy/limits.ts'
import type {JsonRpcId} from '../wire/jsonrpc.ts'

/**
 * Server requests the Client may hold unanswered (or answered, the answer not yet POSTed) per answer POST
 * allowed at once (`limits.maxConcurrentAnswers`); past that, their stream waits before handing over the next.
 */
const answersPerSlot = 8

/**
 * How many server requests the Client holds: those handed to it whose answer has not yet been POSTed, its work in
 * progress. A server flooding requests waits on its own stream while the Client holds too many, instead of filling
 * the client's memory with handlers and answers in progress.
 */
export class Backpressure {
  readonly #limits: Pick<Limits, 'maxConcurrentAnswers'>
  readonly #emit: (event: TransportEvent) => void
  /** Server requests handed to the Client whose answer has not yet been POSTed. */
  readonly #held = new Set<JsonRpcId>()
  /** Streams waiting for {@link #held} to shrink, woken by {@link release}. */
  readonly #waiters = new Set<() => void>()

  constructor(limits: Pick<Limits, 'maxConcurrentAnswers'>, emit: (event: TransportEvent) => void) {
    this.#limits = limits
    this.#emit = emit
  }

  /** Server request `id` is handed to the Client. */
  hold(id: JsonRpcId): void {
    this.#held.add(id)
  }

  /** Server request `id` is off the Client's hands; streams waiting for room go on once half the room is free. */
  release(id: JsonRpcId): void {
    if (this.#held.delete(id) && this.#held.size <= this.#max() / 2) {
      for (const wake of [...this.#waiters]) wake()
    }
  }

  /**
   * Undefined when the Client may be handed another server request now; else a promise that resolves once it
   * has answered enough of those it holds (or `signal` aborts).
   */
  room(signal: AbortSignal): Promise<void> | undefined {
    const max = this.#max()
    if (this.#held.size < max) return undefined
    this.#emit(limitExceeded('maxConcurrentAnswers', max, {size: this.#held.size}))
    return new Promise((resolve) => {
      const wake = (): void => {
        signal.removeEventListener('abort', wake)
        this.#waiters.delete(wake)
        resolve()
      }
      signal.addEventListener('abort', wake)
      this.#waiters.add(wake)
    })
  }

  /**
   * A new session starts: the old one's server requests are held no more. Streams waiting for room need no wake:
   * the session's end aborts every stream, and their waits with them.
   */
  clear(): void {
    this.#held.clear()
  }

  #max(): number {
    return this.#limits.maxConcurrentAnswers * answersPerSlot
  }
}
