/**
 * A map that remembers at least the last `capacity` keys written, and at most twice that: two generations,
 * the older dropped whole when the newer fills. O(1) per operation with no per-write allocation, which keeps
 * the per-event de-duplication cheap, and memory bounded whatever the stream length.
 */
export class RecentMap<K, V> {
  readonly #capacity: number
  #current = new Map<K, V>()
  #previous = new Map<K, V>()

  constructor(capacity: number) {
    this.#capacity = capacity
  }

  has(key: K): boolean {
    return this.#current.has(key) || this.#previous.has(key)
  }

  get(key: K): V | undefined {
    return this.#current.has(key) ? this.#current.get(key) : this.#previous.get(key)
  }

  /** Adds `key` unless it is remembered already; true when it was new. Two map operations, the hot path. */
  addIfNew(key: K, value: V): boolean {
    if (this.#previous.has(key)) return false
    if (this.#current.size >= this.#capacity) {
      if (this.#current.has(key)) return false
      this.#rotate()
    }
    const size = this.#current.size
    this.#current.set(key, value)
    return this.#current.size > size
  }

  set(key: K, value: V): void {
    if (!this.#current.has(key) && this.#current.size >= this.#capacity) this.#rotate()
    this.#current.set(key, value)
    this.#previous.delete(key)
  }

  #rotate(): void {
    this.#previous = this.#current
    this.#current = new Map()
  }

  /** Older first. */
  *entries(): IterableIterator<[K, V]> {
    yield* this.#previous
    yield* this.#current
  }

  clear(): void {
    this.#current.clear()
    this.#previous.clear()
  }
}
