import type {JsonValue} from '../wire/jsonrpc.ts'

/**
 * One write in flight at a time; every request made meanwhile shares the single write that follows it, which
 * stores what the latest of them builds.
 */
export class CoalescedWriter {
  readonly #persist: (value: JsonValue | undefined) => Promise<void>
  #inFlight: Promise<void> | undefined
  #queued: Promise<void> | undefined
  /** The build of the latest request waiting for the write that follows the one in flight. */
  #latest: (() => JsonValue | undefined) | undefined

  constructor(persist: (value: JsonValue | undefined) => Promise<void>) {
    this.#persist = persist
  }

  get idle(): boolean {
    return this.#inFlight === undefined && this.#queued === undefined
  }

  /** Resolves once a write of a value built after this call has completed. */
  write(build: () => JsonValue | undefined): Promise<void> {
    if (this.#inFlight !== undefined) {
      this.#latest = build
      this.#queued ??= this.#inFlight.then(() => {
        const latest = this.#latest!
        this.#queued = this.#latest = undefined
        return this.write(latest)
      })
      return this.#queued
    }
    this.#inFlight = this.#persist(build()).finally(() => {
      this.#inFlight = undefined
    })
    return this.#inFlight
  }
}
