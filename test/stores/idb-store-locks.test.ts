// IndexedDB for Node, in this test file only (vitest isolates test files).
import 'fake-indexeddb/auto'
import {createStore, set as appSet} from 'idb-keyval'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {isLeaseLost} from '../../src/index.ts'
import {IdbStore} from '../../src/idb.ts'

/**
 * Issue #18: what IdbStore does in Node tests could not show: its leases as Web Locks (a LockManager as the
 * Web Locks spec describes it, for `ifAvailable` requests: Node 20 has none), whether it finds Web Locks at all,
 * its `list`, the fenced delete, and one connection per store.
 */

const installed = Object.getOwnPropertyDescriptor(globalThis, 'navigator')

afterEach(() => {
  if (installed === undefined) delete (globalThis as {navigator?: unknown}).navigator
  else Object.defineProperty(globalThis, 'navigator', installed)
})

function setNavigator(value: unknown): void {
  Object.defineProperty(globalThis, 'navigator', {value, configurable: true, writable: true})
}

/**
 * The Web Locks spec's exclusive locks, for `ifAvailable` requests: a lock is held while the promise its callback
 * returned is pending; a request for a held lock calls back with null at once.
 */
function lockManager(): {locks: Pick<LockManager, 'request'>; held: Set<string>} {
  const held = new Set<string>()
  const request = (name: string, options: LockOptions, callback: (lock: Lock | null) => unknown): Promise<unknown> => {
    if (options.ifAvailable !== true) return Promise.reject(new Error('only ifAvailable requests are modelled here'))
    if (held.has(name)) return Promise.resolve(callback(null))
    held.add(name)
    return Promise.resolve(callback({name, mode: 'exclusive'})).finally(() => held.delete(name))
  }
  return {locks: {request: request as LockManager['request']}, held}
}

describe('IdbStore.webLocks', () => {
  it.each([
    ['no navigator', undefined, false],
    ['a navigator without locks', {}, false],
    ['locks whose request is no function', {locks: {request: 'request'}}, false],
    ['locks with a request function', {locks: {request: () => Promise.resolve()}}, true],
  ])('with %s is %s', (_name, navigator, expected) => {
    if (navigator === undefined) delete (globalThis as {navigator?: unknown}).navigator
    else setNavigator(navigator)
    expect(IdbStore.webLocks).toBe(expected)
  })
})

describe('IdbStore leases as Web Locks', () => {
  it('a lease is the Web Lock of its database, store and name: held until released, refused meanwhile to any store', async () => {
    const manager = lockManager()
    setNavigator({locks: manager.locks})
    const store = new IdbStore({databaseName: 'web-locks'})
    const first = await store.acquire('session-a')
    expect(first?.token).toBe(1)
    expect([...manager.held]).toEqual(['mcp-resumable-http:web-locks/resumption:session-a'])
    expect(await new IdbStore({databaseName: 'web-locks'}).acquire('session-a')).toBeUndefined()
    expect(await first!.renew()).toBe(true)
    await first!.release()
    await Promise.resolve()
    expect(manager.held.size).toBe(0)
    const second = await store.acquire('session-a')
    expect(second?.token).toBe(2)
    expect(await first!.renew()).toBe(false)
    await second!.release()
  })

  it('a LockManager that refuses the request rejects the acquire with its error', async () => {
    const refusal = new DOMException('The request was aborted', 'AbortError')
    setNavigator({locks: {request: () => Promise.reject(refusal)}})
    await expect(new IdbStore({databaseName: 'refused'}).acquire('l')).rejects.toBe(refusal)
  })
})

describe('IdbStore records', () => {
  it('keeps them in an object store named resumption by default', async () => {
    await new IdbStore({databaseName: 'default-store-name'}).set('k', 1)
    const database = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open('default-store-name')
      request.onsuccess = () => resolve(request.result)
      request.onerror = () => reject(request.error ?? new Error('the database did not open'))
    })
    expect([...database.objectStoreNames]).toEqual(['resumption'])
    database.close()
  })

  it('lists the string keys that start with the prefix, and no other', async () => {
    const store = new IdbStore({databaseName: 'listing'})
    for (const key of ['app#stream:1', 'app#stream:2', 'app#session', 'other#stream:1', 'x-app#stream:'])
      await store.set(key, 1)
    // A key that is no string, written by other code into the same object store.
    await appSet(7, 'numeric', createStore('listing', 'resumption'))
    expect((await store.list('app#stream:')).sort()).toEqual(['app#stream:1', 'app#stream:2'])
    expect((await store.list('')).sort()).toEqual([
      'app#session',
      'app#stream:1',
      'app#stream:2',
      'other#stream:1',
      'x-app#stream:',
    ])
  })

  it('a delete fenced with the latest lease of its name removes the key', async () => {
    const store = new IdbStore({databaseName: 'fenced-delete'})
    const lease = await store.acquire('session-a')
    const fence = {lease: 'session-a', token: lease!.token}
    await store.set('record', 1, fence)
    await store.delete('record', fence)
    expect(await store.get('record')).toBeUndefined()
    await lease!.release()
  })

  it('opens its database once, however many calls it serves', async () => {
    const open = vi.spyOn(indexedDB, 'open')
    const store = new IdbStore({databaseName: 'opened-once'})
    await store.set('a', 1)
    await store.get('a')
    await store.list('')
    await store.delete('a')
    expect(open).toHaveBeenCalledTimes(1)
  })

  it('a lease whose token cannot be written rejects, and leaves its lock free: asking again fails the same way', async () => {
    // The database exists with another object store: idb-keyval adds none, so every transaction fails.
    await new IdbStore({databaseName: 'no-such-store', storeName: 'first'}).set('k', 1)
    const store = new IdbStore({databaseName: 'no-such-store', storeName: 'second'})
    const failure: unknown = await store.acquire('l').catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(DOMException)
    expect(isLeaseLost(failure)).toBe(false)
    await expect(store.acquire('l')).rejects.toThrow((failure as DOMException).message)
  })
})
