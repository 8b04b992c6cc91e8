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

  set(key: K, value: V): void {
    if (!this.#current.has(key) && this.#current.size >= this.#capacity) {
      this.#previous = this.#current
      this.#current = new Map()
    }
    this.#current.set(key, value)
    this.#previous.delete(key)
  }

  clear(): void {
    this.#current.clear()
    this.#previous.clear()
  }
}
