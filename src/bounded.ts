/**
 * A map that forgets its oldest entries past `capacity`: O(1) per operation, memory bounded whatever the
 * stream length. Insertion order is Map's own, so the oldest key is always the first one.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly #capacity: number

  constructor(capacity: number) {
    super()
    this.#capacity = capacity
  }

  override set(key: K, value: V): this {
    super.set(key, value)
    if (this.size > this.#capacity) this.delete(this.keys().next().value as K)
    return this
  }
}
