// A ResumptionStore wrapper that counts what reaches the store it wraps: stores are a public seam, so the
// benchmark measures persistence cost from outside the transport, whatever records the core chooses to keep.

export class CountingStore {
  #inner
  sets = 0
  deletes = 0
  /** Characters of JSON handed to `set` (`JSON.stringify(value).length`), counted while `countBytes` is on. */
  bytes = 0
  /** Serializing a large record costs CPU of its own: off while the client's CPU is measured. */
  countBytes = true

  constructor(inner) {
    this.#inner = inner
  }

  get(key) {
    return this.#inner.get(key)
  }

  set(key, value) {
    this.sets++
    if (this.countBytes) this.bytes += JSON.stringify(value).length
    return this.#inner.set(key, value)
  }

  delete(key) {
    this.deletes++
    return this.#inner.delete(key)
  }

  /** The counts so far; `since(earlier)` gives the counts after `earlier` was taken. */
  snapshot() {
    return {sets: this.sets, deletes: this.deletes, bytes: this.bytes}
  }

  since(earlier) {
    return {sets: this.sets - earlier.sets, deletes: this.deletes - earlier.deletes, bytes: this.bytes - earlier.bytes}
  }
}
