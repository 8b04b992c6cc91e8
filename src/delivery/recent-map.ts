/**
 * A map that remembers at least the last `capacity` keys written (and at least `maxBytes / 2` of their weight),
 * and at most twice that: two generations, the older dropped whole when the newer fills, by count or by weight.
 * O(1) per operation with no per-write allocation, which keeps the per-event de-duplication cheap, and memory
 * bounded whatever the stream length and the size of its keys.
 */
export class RecentMap<K, V> {
  readonly #capacity: number
  readonly #halfBytes: number
  readonly #weigh: (key: K) => number
  #current = new Map<K, V>()
  #previous = new Map<K, V>()
  /** The weight of the keys of {@link #current}. */
  #currentBytes = 0
  /** Called when a generation is dropped because of its weight, not its count. */
  onOverweight: (() => void) | undefined

  /** `weigh` gives a key's weight (its length, say): the keys held weigh at most `maxBytes` plus one key. */
  // Stryker disable next-line ArrowFunction: NaN >= Infinity is as false as 0 >= Infinity
  constructor(capacity: number, maxBytes = Infinity, weigh: (key: K) => number = () => 0) {
    this.#capacity = capacity
    this.#halfBytes = maxBytes / 2
    this.#weigh = weigh
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
    if (this.#full()) {
      if (this.#current.has(key)) return false
      this.#rotate()
    }
    const size = this.#current.size
    this.#current.set(key, value)
    if (this.#current.size === size) return false
    this.#currentBytes += this.#weigh(key)
    return true
  }

  set(key: K, value: V): void {
    if (!this.#current.has(key)) {
      if (this.#full()) this.#rotate()
      this.#currentBytes += this.#weigh(key)
    }
    // A stale value left in #previous is never read (get looks in #current first) and goes with the next rotation.
    this.#current.set(key, value)
  }

  #full(): boolean {
    return this.#current.size >= this.#capacity || this.#currentBytes >= this.#halfBytes
  }

  #rotate(): void {
    if (this.#current.size < this.#capacity) this.onOverweight?.()
    this.#previous = this.#current
    this.#current = new Map()
    this.#currentBytes = 0
  }

  clear(): void {
    this.#current.clear()
    this.#previous.clear()
    this.#currentBytes = 0
  }
}
