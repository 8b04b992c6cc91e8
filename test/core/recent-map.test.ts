import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {RecentMap} from '../../src/recent-map.ts'

// Internal, but the de-duplication of every stream rests on it: checked against a plain model.
describe('RecentMap: the bounded memory behind de-duplication', () => {
  it('remembers at least the last `capacity` keys and at most twice that, whatever the sequence', () => {
    fc.assert(
      fc.property(fc.integer({min: 1, max: 8}), fc.array(fc.integer({min: 0, max: 40}), {maxLength: 300}), (capacity, keys) => {
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
        const remembered = [...new Set(added)].filter((key) => recent.has(key))
        expect(remembered.length).toBeLessThanOrEqual(2 * capacity)
        for (const key of added.slice(-capacity)) expect(recent.has(key)).toBe(true)
      }),
    )
  })

  it('weighs what it remembers: never more than maxBytes plus two keys, however few keys that is', () => {
    fc.assert(
      fc.property(fc.integer({min: 1, max: 200}), fc.array(fc.string({maxLength: 60}), {maxLength: 300}), (maxBytes, keys) => {
        const recent = new RecentMap<string, true>(1000, maxBytes, (key) => key.length)
        const added: string[] = []
        for (const key of keys) {
          if (!added.includes(key)) expect(recent.addIfNew(key, true)).toBe(true)
          else recent.addIfNew(key, true)
          added.push(key)
          const weight = [...recent.entries()].reduce((sum, [remembered]) => sum + remembered.length, 0)
          expect(weight).toBeLessThanOrEqual(maxBytes + 2 * 60)
        }
        // The last key is always remembered.
        if (keys.length > 0) expect(recent.has(keys.at(-1)!)).toBe(true)
      }),
    )
  })
})
