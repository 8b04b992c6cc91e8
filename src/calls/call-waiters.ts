import {abortedError} from '../errors.ts'
import type {JournaledCall} from '../events.ts'

/** One `calls.wait()` under way: given the call once settled, or the signal that stopped it. */
type Waiter = (call: JournaledCall | undefined, stopped?: AbortSignal) => void

/**
 * Who waits for which call to settle (`calls.wait()`). Each wait ends once: with the call settled, when its own
 * signal aborts, or when the transport closes, so that no wait waits for ever.
 */
export class CallWaiters {
  readonly #waiters = new Map<string, Set<Waiter>>()

  /** Resolves with call `callId` once it is settled; rejects when `signal` or the transport's `lifetime` aborts. */
  wait(callId: string, lifetime: AbortSignal, signal?: AbortSignal): Promise<JournaledCall> {
    return new Promise((resolve, reject) => {
      const waiters = this.#waiters.get(callId) ?? new Set()
      const waiter: Waiter = (call, stopped) => {
        waiters.delete(waiter)
        signal?.removeEventListener('abort', onAbort)
        if (call === undefined) reject(abortedError(stopped!))
        else resolve(call)
      }
      const onAbort = (): void => waiter(undefined, signal)
      const stopped = signal?.aborted === true ? signal : lifetime.aborted ? lifetime : undefined
      if (stopped !== undefined) {
        waiter(undefined, stopped)
        return
      }
      signal?.addEventListener('abort', onAbort, {once: true})
      waiters.add(waiter)
      this.#waiters.set(callId, waiters)
    })
  }

  /** Call `callId` settled (or left the journal) as `call`: each of its waits resolves with it. */
  settle(callId: string, call: JournaledCall): void {
    const waiters = this.#waiters.get(callId)
    this.#waiters.delete(callId)
    for (const waiter of waiters ?? []) waiter(call)
  }

  /** The transport closed (`lifetime` aborted): no call settles in this process any more, so every wait ends. */
  stopAll(lifetime: AbortSignal): void {
    const waiting = [...this.#waiters.values()]
    this.#waiters.clear()
    for (const waiters of waiting) for (const waiter of waiters) waiter(undefined, lifetime)
  }
}
