import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {RecentMap} from '../../src/delivery/recent-map.ts'

/** The keys of `added` that `recent` still remembers. */
function remembered<K>(recent: RecentMap<K, unknown>, added: Iterable<K>): K[] {
  return [...new Set(added)].filter((key) => recent.has(key))
}

// Internal, but the de-duplication of every stream rests on it: checked against a plain model.
describe('RecentMap: the bounded memory behind de-duplication', () => {
  it('remembers at least the last `capacity` keys and at most twice that, whatever the sequence', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 8}),
        fc.array(fc.integer({min: 0, max: 40}), {maxLength: 300}),
        (capacity, keys) => {
          const recent = new RecentMap<number, true>(capacity)
          const added: number[] = []
          for (const key of keys) {
            const lastKeys = new Set(added.slice(-capacity))
            const isNew = recent.addIfNew(key, true)
            // Never a false duplicate for a key never added; always a duplicate for one among the last `capacity`.
            if (!added.includes(key)) expect(isNew).toBe(true)
            if (lastKeys.has(key)) expect(isNew).toBe(false)
            if (isNew) added.push(key)
          }
          expect(remembered(recent, added).length).toBeLessThanOrEqual(2 * capacity)
          for (const key of added.slice(-capacity)) expect(recent.has(key)).toBe(true)
        },
      ),
    )
  })

  it('weighs what it remembers: never more than maxBytes plus two keys, however few keys that is', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 200}),
        fc.array(fc.string({maxLength: 60}), {maxLength: 300}),
        (maxBytes, keys) => {
          const recent = new RecentMap<string, true>(1000, maxBytes, (key) => key.length)
          const added: string[] = []
          for (const key of keys) {
            if (!added.includes(key)) expect(recent.addIfNew(key, true)).toBe(true)
            else recent.addIfNew(key, true)
            added.push(key)
            const weight = remembered(recent, added).reduce((sum, key) => sum + key.length, 0)
            expect(weight).toBeLessThanOrEqual(maxBytes + 2 * 60)
          }
          // The last key is always remembered.
          if (keys.length > 0) expect(recent.has(keys.at(-1)!)).toBe(true)
        },
      ),
    )
  })

  it('fills a generation up to half of maxBytes, not past it: keys of weight one never weigh more than maxBytes', () => {
    const recent = new RecentMap<number, true>(1000, 4, () => 1)
    const counts = []
    for (let key = 0; key < 8; key++) {
      recent.addIfNew(key, true)
      counts.push(remembered(recent, [0, 1, 2, 3, 4, 5, 6, 7]).length)
    }
    expect(counts).toEqual([1, 2, 3, 4, 3, 4, 3, 4])
  })

  it('set keeps the last value of a key, bounded like addIfNew by count and by weight', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 6}),
        fc.array(fc.tuple(fc.integer({min: 0, max: 20}), fc.integer()), {maxLength: 200}),
        (capacity, writes) => {
          const byCount = new RecentMap<number, number>(capacity)
          const byWeight = new RecentMap<number, number>(1000, 2 * capacity, () => 1)
          const last = new Map<number, number>()
          const order: number[] = []
          for (const [key, value] of writes) {
            byCount.set(key, value)
            byWeight.set(key, value)
            last.set(key, value)
            order.splice(order.indexOf(key) >>> 0, order.includes(key) ? 1 : 0)
            order.push(key)
            for (const recent of [byCount, byWeight]) {
              // The last `capacity` keys written are remembered with their last value; never more than twice that.
              for (const recentKey of order.slice(-capacity)) expect(recent.get(recentKey)).toBe(last.get(recentKey))
              expect(remembered(recent, order).length).toBeLessThanOrEqual(2 * capacity)
              for (const key of remembered(recent, order)) expect(recent.get(key)).toBe(last.get(key))
            }
          }
        },
      ),
    )
  })

  it('counts the weight of a key set again once: rewriting one key does not push the others out', () => {
    const recent = new RecentMap<string, number>(1000, 10, () => 1)
    for (let write = 0; write < 20; write++) recent.set('a', write)
    for (const key of ['b', 'c', 'd']) recent.set(key, 0)
    expect(remembered(recent, ['a', 'b', 'c', 'd'])).toEqual(['a', 'b', 'c', 'd'])
    for (const key of ['e', 'f', 'g']) recent.set(key, 0)
    expect(recent.get('a')).toBe(19)
  })

  it('a key set again moves to the newer generation: it outlives the keys written before its rewrite', () => {
    const recent = new RecentMap<string, number>(2)
    recent.set('a', 1)
    recent.set('b', 1)
    recent.set('c', 1) // a and b are now the older generation
    recent.set('a', 2) // a joins c in the newer one
    recent.set('d', 1) // the newer one was full: a and c become the older one, b is forgotten
    expect(remembered(recent, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd'])
    expect(recent.get('a')).toBe(2)
  })

  it('says when a generation is dropped for its weight, never when for its count', () => {
    let overweight = 0
    const byCount = new RecentMap<number, true>(2, 1000, () => 1)
    byCount.onOverweight = () => overweight++
    for (let key = 0; key < 10; key++) byCount.addIfNew(key, true)
    expect(overweight).toBe(0)
    const byWeight = new RecentMap<number, true>(1000, 4, () => 1)
    byWeight.onOverweight = () => overweight++
    for (let key = 0; key < 10; key++) byWeight.addIfNew(key, true)
    expect(overweight).toBe(4)
  })

  it('forgets everything on clear, and then fills again from empty', () => {
    const recent = new RecentMap<number, true>(1000, 8, () => 1)
    for (let key = 0; key < 7; key++) recent.set(key, true)
    recent.clear()
    expect(remembered(recent, [0, 1, 2, 3, 4, 5, 6])).toEqual([])
    const after = [10, 11, 12, 13, 14, 15, 16, 17]
    for (const key of after) recent.set(key, true)
    // Two generations of four keys of weight one (half of maxBytes 8 each): the clear left no weight behind.
    expect(remembered(recent, after)).toEqual(after)
  })
})
