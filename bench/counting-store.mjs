// A ResumptionStore wrapper that counts what reaches the store it wraps: stores are a public seam, so the
// benchmark measures persistence cost from outside the transport, whatever records the core chooses to keep.
import {statSync} from 'node:fs'
import {mapValues} from './stats.mjs'

export class CountingStore {
  #inner
  sets = 0
  deletes = 0
  /** Characters of JSON handed to `set` (`JSON.stringify(value).length`), counted while `countBytes` is on. */
  bytes = 0
  /** Serializing a large record costs CPU of its own: off while the client's CPU is measured. */
  countBytes = true

  /**
   * Bytes FileStore put on disk, as seen after each `set`: each new version of its file whole (it is rewritten when
   * the journal is folded into it), and what its journal grew by (one line per write).
   */
  diskBytes = 0
  #file
  #lastVersion
  #journal = {ino: undefined, size: 0n}

  /** `file`: the file a FileStore keeps, to count `diskBytes`. */
  constructor(inner, file) {
    this.#inner = inner
    this.#file = file
  }

  get(key) {
    return this.#inner.get(key)
  }

  list(prefix) {
    return this.#inner.list(prefix)
  }

  set(key, value) {
    this.sets++
    if (!this.countBytes) return this.#inner.set(key, value)
    this.bytes += JSON.stringify(value).length
    return this.#inner.set(key, value).then(() => this.#sawFile())
  }

  #sawFile() {
    // No file (none yet, or a store that removes it when empty): nothing on disk to count.
    if (this.#file === undefined) return
    const stat = statSync(this.#file, {bigint: true, throwIfNoEntry: false})
    if (stat !== undefined) {
      const version = `${stat.ino}:${stat.ctimeNs}`
      if (version !== this.#lastVersion) this.diskBytes += Number(stat.size)
      this.#lastVersion = version
    }
    const journal = statSync(`${this.#file}.journal`, {bigint: true, throwIfNoEntry: false}) ?? {
      ino: undefined,
      size: 0n,
    }
    const grown =
      journal.ino === this.#journal.ino && journal.size >= this.#journal.size
        ? journal.size - this.#journal.size
        : journal.size
    this.diskBytes += Number(grown)
    this.#journal = {ino: journal.ino, size: journal.size}
  }

  delete(key) {
    this.deletes++
    return this.#inner.delete(key)
  }

  /** The counts so far; `since(earlier)` gives the counts after `earlier` was taken. */
  snapshot() {
    return {sets: this.sets, deletes: this.deletes, bytes: this.bytes, diskBytes: this.diskBytes}
  }

  since(earlier) {
    return mapValues(this.snapshot(), (value, key) => value - earlier[key])
  }
}
