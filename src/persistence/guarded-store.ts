import type {JsonValue} from '../wire/jsonrpc.ts'
import {CoalescedWriter} from './coalesced-writer.ts'
import type {ResumptionStore} from './store.ts'

/** Thrown by a store call once the store has failed: the transport carries on in memory. */
const inMemory = new Error('the store failed before: carrying on in memory')

/**
 * The store as the transport calls it. Every call is bounded by `storeTimeoutMs`. A failure is reported, never
 * thrown: losing persistence must not take the live connection down. After the first failure or timeout (one
 * report) the store is not called again: every read finds nothing and every write is done at once (see
 * `storeTimeoutMs`). Writes of one key are coalesced, and {@link settled} waits for every write under way.
 */
export class GuardedStore {
  readonly #store: ResumptionStore
  readonly #timeoutMs: number
  readonly #onFailure: (error: unknown, key: string) => void
  readonly #writers = new Map<string, CoalescedWriter>()
  /** Writes under way, so that `close()` can wait for them. */
  readonly #writing = new Set<Promise<void>>()
  /** The store failed or timed out once: it is not called again. */
  #failed = false

  /** `failed` hears the first failure, with the key it was met on. */
  constructor(store: ResumptionStore, timeoutMs: number, failed: (error: unknown, key: string) => void) {
    this.#store = store
    this.#timeoutMs = timeoutMs
    this.#onFailure = failed
  }

  /** The store itself, for the operations of {@link call} and {@link write}. */
  get store(): ResumptionStore {
    return this.#store
  }

  /**
   * Stores what `build()` gives for `key` when the write starts (deletes `key` when it gives nothing). While a write
   * of `key` is in flight, every later one waits for a single follow-up write of the value as it is then.
   */
  coalesced(key: string, build: () => JsonValue | undefined): Promise<void> {
    let writer = this.#writers.get(key)
    if (writer === undefined) {
      writer = new CoalescedWriter((value) =>
        this.write(key, () =>
          this.call(() => (value === undefined ? this.#store.delete(key) : this.#store.set(key, value))),
        ),
      )
      this.#writers.set(key, writer)
    }
    const written = writer.write(build)
    // An idle writer is dropped: there is one per open stream, and streams come and go.
    const done = written.then(() => {
      if (this.#writers.get(key) === writer && writer.idle) this.#writers.delete(key)
    })
    // A write queued behind one in flight is not under way yet: `settled()` must wait for it too.
    this.#writing.add(done)
    void done.finally(() => this.#writing.delete(done))
    return done
  }

  /** The value of `key`; undefined when there is none, or the store failed. */
  async read(key: string): Promise<JsonValue | undefined> {
    try {
      return await this.call(() => this.#store.get(key))
    } catch (error) {
      this.#failure(error, key)
      return undefined
    }
  }

  /**
   * One store call, bounded by `storeTimeoutMs`. A store that throws, rejects or does not answer in time is not
   * called again: its late answer is ignored (and its rejection handled).
   */
  call<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#failed) return Promise.reject(inMemory)
    // A store that throws instead of rejecting throws to the caller: it fails the same way.
    const call = operation()
    const limit = this.#timeoutMs
    // setTimeout fires at once past 2^31 - 1 ms: such a bound is no bound.
    if (limit >= 2 ** 31) return call
    // Settled directly rather than raced: a store that answers costs no more turns than without a bound.
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      let settled = false
      call.then(
        (value) => {
          settled = true
          clearTimeout(timer)
          resolve(value)
        },
        (error: unknown) => {
          // Stryker disable next-line BooleanLiteral: a timer of a settled call rejects a settled promise
          settled = true
          clearTimeout(timer)
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the store's own reason, passed on
          reject(error)
        },
      )
      // The timer is set only for a call still pending a turn later: a store in memory answers in that turn, and a
      // timer set and cleared per call would cost it more than the call (this runs per batch of events).
      queueMicrotask(() => {
        if (!settled)
          timer = setTimeout(
            () => reject(new Error(`The store did not answer within ${limit} ms (storeTimeoutMs)`)),
            limit,
          )
      })
    })
  }

  /** The keys that start with `prefix`; none when the store failed. */
  async keys(prefix: string): Promise<string[]> {
    try {
      return await this.call(() => this.#store.list(prefix))
    } catch (error) {
      this.#failure(error, prefix)
      return []
    }
  }

  /** The first failure of the store is reported; the transport then carries on in memory. */
  #failure(error: unknown, key: string): void {
    if (this.#failed) return
    this.#failed = true
    this.#onFailure(error, key)
  }

  /** Resolves once every write started so far is done. */
  async settled(): Promise<void> {
    while (this.#writing.size > 0) await Promise.allSettled([...this.#writing])
  }

  /** Runs `operation`, a write of `key`: a failure is reported, never thrown; {@link settled} waits for it. */
  write(key: string, operation: () => Promise<void>): Promise<void> {
    const write = (async () => {
      try {
        await operation()
      } catch (error) {
        this.#failure(error, key)
      }
    })()
    this.#writing.add(write)
    void write.finally(() => this.#writing.delete(write))
    return write
  }
}
