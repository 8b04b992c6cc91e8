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
   * Bytes of the store's file on disk, summed over each new version of it seen after a `set` (FileStore
   * rewrites its whole file, every key, on each write: one version per rename, however many sets it carries).
   */
  diskBytes = 0
  #file
  #lastVersion

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
    const stat = this.#file === undefined ? undefined : statSync(this.#file, {bigint: true, throwIfNoEntry: false})
    if (stat === undefined) return
    const {ino, ctimeNs, size} = stat
    const version = `${ino}:${ctimeNs}`
    if (version === this.#lastVersion) return
    this.#lastVersion = version
    this.diskBytes += Number(size)
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
