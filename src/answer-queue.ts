import {abortedError} from './errors.ts'

/**
 * At most `max` tasks at once; the others wait their turn in order (docs/design.md#sending). Bounds the answers
 * and notifications POSTed at once, so that a server flooding the client with requests cannot exhaust its sockets.
 */
export class AnswerQueue {
  readonly #max: number
  /** Told when a task has to wait while none was waiting (the start of a congestion), with the running count. */
  readonly #congested: (running: number) => void
  #running = 0
  /** In arrival order; a Set, so that thousands leaving at once (on close) cost O(1) each. */
  readonly #waiting = new Set<() => void>()

  constructor(max: number, congested: (running: number) => void) {
    this.#max = max
    this.#congested = congested
  }

  /** Runs `task` once fewer than `max` run; a task whose `signal` aborts while it waits is not run. */
  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#running < this.#max) this.#running++
    else {
      if (this.#waiting.size === 0) this.#congested(this.#running)
      // The place of a task that ends is handed over as it is: `#running` stays, and nobody can jump the line.
      await this.#turn(signal)
    }
    try {
      return await task()
    } finally {
      const next = this.#waiting.values().next()
      if (next.done === true) this.#running--
      else {
        this.#waiting.delete(next.value)
        next.value()
      }
    }
  }

  /** Resolves when a running task hands its place over; rejects, leaving the line, when `signal` aborts. */
  #turn(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const go = (): void => {
        signal.removeEventListener('abort', leave)
        resolve()
      }
      const leave = (): void => {
        this.#waiting.delete(go)
        reject(abortedError(signal))
      }
      if (signal.aborted) {
        leave()
        return
      }
      signal.addEventListener('abort', leave, {once: true})
      this.#waiting.add(go)
    })
  }
}
