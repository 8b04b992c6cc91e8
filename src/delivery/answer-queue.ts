import {abortedError} from '../errors.ts'
import {ChildAbort} from '../policy/abort.ts'
import {limitExceeded, type TransportEvent} from '../events.ts'

/**
 * At most `max` tasks at once; the others wait their turn in order (SECURITY.md, "exhaust the
 * client's memory"). Bounds the answers and notifications POSTed at once, so that a server flooding
 * the client with requests cannot exhaust its sockets.
 */
export class AnswerQueue {
  readonly #max: number
  /** Told when a task has to wait while none was waiting: the start of a congestion. */
  readonly #emit: (event: TransportEvent) => void
  #running = 0
  /** The tasks waiting, in arrival order. */
  readonly #waiting = new Set<() => void>()

  constructor(max: number, emit: (event: TransportEvent) => void) {
    this.#max = max
    this.#emit = emit
  }

  /**
   * Runs `task` once fewer than `max` run. A task whose `signal` aborted meanwhile is not run: it rejects when its
   * turn comes (soon, as the running ones end with the same signal), without one abort listener per waiting task.
   */
  async run<T>(task: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#running < this.#max) this.#running++
    else {
      if (this.#waiting.size === 0) {
        this.#emit(limitExceeded('maxConcurrentAnswers', this.#max, {size: this.#running + 1}))
      }
      // The place of a task that ends is handed over as it is: `#running` stays, and nobody can jump the line.
      await new Promise<void>((resolve) => this.#waiting.add(resolve))
    }
    // Each task gets a signal of its own, released when it ends: fetch may keep a listener on the signal it was
    // given until the request is garbage-collected, and thousands of answers share the transport's.
    const own = new ChildAbort(signal)
    try {
      if (signal.aborted) throw abortedError(signal)
      return await task(own.signal)
    } finally {
      own.release()
      const next = this.#waiting.values().next()
      if (next.done === true) this.#running--
      else {
        this.#waiting.delete(next.value)
        next.value()
      }
    }
  }
}
