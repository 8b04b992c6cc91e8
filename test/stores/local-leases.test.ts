/**
 * The leases kept in this realm (MemoryStore's, IdbStore's without Web Locks): the expiry to the millisecond, and
 * what a refused write says.
 */
import {afterEach, describe, expect, test, vi} from 'vitest'
import {isLeaseLost, LeaseLostError, MemoryStore} from '../../src/index.ts'

afterEach(() => {
  vi.useRealTimers()
})

describe('MemoryStore leases', () => {
  test('a lease expiring this very millisecond is expired: taken, with the next token', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: 1_700_000_000_000})
    const store = new MemoryStore()
    expect((await store.acquire('session', 1000))?.token).toBe(1)
    vi.setSystemTime(1_700_000_000_999)
    expect(await store.acquire('session', 1000)).toBeUndefined()
    vi.setSystemTime(1_700_000_001_000)
    expect((await store.acquire('session', 1000))?.token).toBe(2)
  })

  test('a write fenced with a lease that expired and was taken again is refused (the error itself: lease-keeping.test.ts)', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: 1_700_000_000_000})
    const store = new MemoryStore()
    const first = await store.acquire('session', 1000)
    vi.setSystemTime(1_700_000_001_000)
    await store.acquire('session', 1000)
    const refused = await store.set('record', 1, {lease: 'session', token: first!.token}).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toMatchObject({code: 'lease-lost', lease: 'session'})
  })
})

describe('isLeaseLost', () => {
  test.each([
    ['a LeaseLostError', new LeaseLostError({lease: 'session', token: 1}), true],
    ['one of another copy of the library (its code)', {code: 'lease-lost'}, true],
    ['another error', new Error('lease-lost'), false],
    ['null', null, false],
    ['undefined', undefined, false],
    ['the code alone', 'lease-lost', false],
  ])('of %s is %s', (_, error, expected) => {
    expect(isLeaseLost(error)).toBe(expected)
  })
})
