import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {SeenEventIds} from '../../src/streams/seen-ids.ts'

/** A fresh instance that was given `ids`, in order. */
function seenAfter(capacity: number, maxBytes: number, ids: string[]): SeenEventIds {
  const seen = new SeenEventIds(capacity, maxBytes)
  for (const id of ids) seen.addIfNew(id)
  return seen
}

// Internal, but the de-duplication of every stream rests on it: checked against a plain model.
describe('SeenEventIds: the bounded memory of the event IDs a stream saw', () => {
  it('remembers at least the last `capacity` IDs and at most twice that, whatever the sequence and however it grew', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 40}),
        fc.array(fc.integer({min: 0, max: 120}).map(String), {maxLength: 400, size: 'max'}),
        (capacity, ids) => {
          const seen = new SeenEventIds(capacity, Infinity)
          const added: string[] = []
          for (const id of ids) {
            const isNew = seen.addIfNew(id)
            // Never a false duplicate for an ID never added, nor for one older than twice the capacity;
            // always a duplicate for one among the last `capacity`.
            if (!added.includes(id) || !added.slice(-2 * capacity).includes(id)) expect(isNew).toBe(true)
            if (added.slice(-capacity).includes(id)) expect(isNew).toBe(false)
            if (isNew) added.push(id)
          }
        },
      ),
    )
  })

  it('weighs what it remembers: an ID followed by more than maxBytes plus two IDs of characters is forgotten', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 200}),
        fc.uniqueArray(fc.string({minLength: 10, maxLength: 60}), {maxLength: 120}),
        (maxBytes, ids) => {
          const lastOnly = seenAfter(1000, maxBytes, ids)
          if (ids.length > 0) expect(lastOnly.addIfNew(ids.at(-1)!)).toBe(false)
          for (const [index, id] of ids.entries()) {
            const after = ids.slice(index + 1).reduce((sum, later) => sum + later.length, 0)
            if (after > maxBytes + 2 * 60) expect(seenAfter(1000, maxBytes, ids).addIfNew(id)).toBe(true)
          }
        },
      ),
    )
  })

  it('reports each generation dropped for its weight rather than its count', () => {
    const seen = new SeenEventIds(1024, 100)
    let reports = 0
    seen.onOverweight = () => reports++
    for (let n = 0; n < 10; n++) seen.addIfNew(`${n}`.padEnd(25, 'x'))
    // 50 characters per generation: a new one every second ID after the first two.
    expect(reports).toBe(4)
  })

  it('never reports a weight it does not have: ordinary IDs by the hundred thousand find their slots', () => {
    for (const idOf of [(n: number) => `${n}`, (n: number) => `e${n}`, (n: number) => `stream-${n % 7}_${n}`]) {
      const seen = new SeenEventIds(1024, 1024 * 1024)
      let reports = 0
      seen.onOverweight = () => reports++
      let added = 0
      for (let n = 0; n < 100_000; n++) if (seen.addIfNew(idOf(n))) added++
      expect([added, reports]).toEqual([100_000, 0])
    }
  })

  it('tells IDs apart that differ in one character anywhere, or only in length', () => {
    const base = 'a'.repeat(300)
    const variants = [
      base,
      `${base}a`,
      base.slice(1),
      ...Array.from({length: 300}, (_, index) => `${base.slice(0, index)}b${base.slice(index + 1)}`),
    ]
    const seen = new SeenEventIds(1024, Infinity)
    for (const id of variants) expect(seen.addIfNew(id)).toBe(true)
    for (const id of variants) expect(seen.addIfNew(id)).toBe(false)
  })
})

/**
 * What `SeenEventIds` promises, as a plain model: two generations of IDs, the newer dropped into the older when it
 * holds `capacity` IDs or `maxBytes / 2` characters, a drop for the weight reported. How the tables grow is not in it.
 */
class ModelOfSeenIds {
  #older: string[] = []
  #newer: string[] = []
  #bytes = 0
  overweight = 0
  readonly capacity: number
  readonly maxBytes: number
  constructor(capacity: number, maxBytes: number) {
    this.capacity = capacity
    this.maxBytes = maxBytes
  }

  addIfNew(id: string): boolean {
    if (this.#older.includes(id) || this.#newer.includes(id)) return false
    if (this.#newer.length >= this.capacity || this.#bytes >= this.maxBytes / 2) {
      if (this.#newer.length < this.capacity) this.overweight++
      ;[this.#older, this.#newer, this.#bytes] = [this.#newer, [], 0]
    }
    this.#newer.push(id)
    this.#bytes += id.length
    return true
  }
}

describe('SeenEventIds against its model', () => {
  it('answers and reports weight exactly as two generations bounded by count and by characters would, however its tables grew', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 40}),
        fc.integer({min: 1, max: 600}),
        // From a small pool, so that IDs come back (replays) and both bounds are reached: 1 to 9 characters, or none.
        fc.array(
          fc.nat({max: 90}).map((n) => (n === 0 ? '' : `${'x'.repeat(n % 8)}${n % 50}`)),
          {maxLength: 400, size: 'max'},
        ),
        (capacity, maxBytes, ids) => {
          const seen = new SeenEventIds(capacity, maxBytes)
          const model = new ModelOfSeenIds(capacity, maxBytes)
          let reports = 0
          seen.onOverweight = () => reports++
          for (const id of ids) expect(seen.addIfNew(id)).toBe(model.addIfNew(id))
          expect(reports).toBe(model.overweight)
        },
      ),
      {numRuns: 300},
    )
  })

  it('answers as the model does for IDs numbered in order, with replays and jumps back among them', () => {
    // In order, an ID is only appended; the first out of order makes the look-up tables of what is held.
    const step = fc.oneof(
      {arbitrary: fc.integer({min: 1, max: 3}).map((by) => ({by})), weight: 8},
      {arbitrary: fc.nat({max: 60}).map((back) => ({back})), weight: 1},
    )
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 40}),
        fc.integer({min: 1, max: 600}),
        fc.constantFrom('', 'e', 'stream-7_'),
        fc.array(step, {maxLength: 300}),
        (capacity, maxBytes, prefix, steps) => {
          const seen = new SeenEventIds(capacity, maxBytes)
          const model = new ModelOfSeenIds(capacity, maxBytes)
          let reports = 0
          seen.onOverweight = () => reports++
          let next = 0
          for (const move of steps) {
            const n = 'by' in move ? (next += move.by) : Math.max(0, next - move.back)
            const id = `${prefix}${n}`
            expect(seen.addIfNew(id)).toBe(model.addIfNew(id))
          }
          expect(reports).toBe(model.overweight)
        },
      ),
      {numRuns: 300},
    )
  })

  it('finds an ID held before the first one out of order, in either generation and after its tables grew', () => {
    const seen = new SeenEventIds(64, Infinity)
    for (let n = 1; n <= 100; n++) expect(seen.addIfNew(`${n}`)).toBe(true)
    // '36' is in the older generation (1 to 64), '99' in the newer; '9' then '10' are in order by length.
    expect(['99', '36', '101', '64', '65', '100', '9', '10'].map((id) => seen.addIfNew(id))).toEqual([
      false,
      false,
      true,
      false,
      false,
      false,
      false,
      false,
    ])
    expect(seen.addIfNew('35x')).toBe(true)
  })

  it('drops an ID it holds that is neither longer nor greater than the last one in order, the empty ID first of all', () => {
    const seen = new SeenEventIds(8, Infinity)
    expect(['', '', 'a', 'a', '', 'b', 'a'].map((id) => seen.addIfNew(id))).toEqual([
      true,
      false,
      true,
      false,
      false,
      true,
      false,
    ])
  })

  it('keeps what it held as its tables grow: 8, 16, 32 and 64 IDs to a generation, then a count rotation', () => {
    const seen = new SeenEventIds(64, Infinity)
    const ids = Array.from({length: 64}, (_, n) => `e${n}`)
    for (const id of ids) expect(seen.addIfNew(id)).toBe(true)
    for (const id of ids) expect(seen.addIfNew(id)).toBe(false)
    // The 65th starts a new generation; the 64 before it are still remembered, until the next 64 arrive.
    for (let n = 64; n < 128; n++) expect(seen.addIfNew(`e${n}`)).toBe(true)
    for (const id of ids) expect(seen.addIfNew(id)).toBe(false)
    expect(seen.addIfNew('e128')).toBe(true)
    for (const id of ids) expect(seen.addIfNew(id)).toBe(true)
  })
})
