/**
 * A seeded pseudo-random source (mulberry32): the same seed gives the same faults, calls and timings to
 * draw, so that a failing run can be replayed with `--seed`.
 */
export class Random {
  #state: number

  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** A number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  /** An independent source derived from this one: one per client, so that one's draws never shift another's. */
  fork(): Random {
    return new Random(this.int(0, 2 ** 32 - 1))
  }
}
