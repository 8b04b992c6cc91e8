// IndexedDB for Node, in this test file only (vitest isolates test files). Node 20 has no Web Locks: IdbStore's
// leases then exclude the transports of this realm only; test/e2e/two-tabs.test.ts covers real tabs.
import 'fake-indexeddb/auto'
import {describe, expect, it} from 'vitest'
import {isLeaseLost} from '../../src/index.ts'
import {IdbStore} from '../../src/idb.ts'

describe('IdbStore leases without Web Locks', () => {
  it('says so: IdbStore.webLocks is false where navigator.locks is missing', () => {
    expect(IdbStore.webLocks).toBe(typeof (globalThis as {navigator?: {locks?: unknown}}).navigator?.locks === 'object')
  })

  it('gives one lease per name in this realm, larger tokens to each next owner, and refuses writes fenced with an older one', async () => {
    const store = new IdbStore({databaseName: 'leases'})
    const first = await store.acquire('session-a')
    expect(first?.token).toBe(1)
    // Another store on the same database: the same realm, so the same locks.
    expect(await new IdbStore({databaseName: 'leases'}).acquire('session-a')).toBeUndefined()
    const other = await store.acquire('session-b')
    expect(other?.token).toBe(1)
    await other!.release()

    const fence = {lease: 'session-a', token: first!.token}
    await store.set('record', {by: 'first'}, fence)
    expect(await first!.renew()).toBe(true)
    await first!.release()
    const second = await store.acquire('session-a')
    expect(second?.token).toBe(2)
    expect(await first!.renew()).toBe(false)
    const refused: unknown = await store.set('record', {by: 'first, late'}, fence).catch((error: unknown) => error)
    expect(isLeaseLost(refused)).toBe(true)
    expect(isLeaseLost(await store.delete('record', fence).catch((error: unknown) => error))).toBe(true)
    expect(await store.get('record')).toEqual({by: 'first'})
    await store.set('record', {by: 'second'}, {lease: 'session-a', token: 2})
    expect(await store.get('record')).toEqual({by: 'second'})
    await second!.release()
  })
})
