// IndexedDB for Node, in this test file only (vitest isolates test files).
import 'fake-indexeddb/auto'
import {get as appGet, set as appSet} from 'idb-keyval'
import {afterEach, describe, expect, expectTypeOf, test, vi} from 'vitest'
import {isTransportError, ResumableHTTPClientTransport, type ResumptionStore} from '../../src/index.ts'
import {IdbStore, type IdbStoreOptions} from '../../src/idb.ts'
import {expectSessionSurvivesRestart, expectStoreContract} from '../fixtures/store-contract.ts'

const installed = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB')!

afterEach(() => {
  Object.defineProperty(globalThis, 'indexedDB', installed)
})

function removeIndexedDB(): void {
  delete (globalThis as {indexedDB?: IDBFactory}).indexedDB
}

describe('IdbStore', () => {
  test('round trip of JSON values; a missing key is undefined; delete removes', async () => {
    await expectStoreContract(new IdbStore())
  })

  test('keeps a structured clone: a value mutated after set is stored as it was', async () => {
    const store = new IdbStore()
    const value = {streams: {standalone: 'e1'}}
    await store.set('cursors', value)
    value.streams.standalone = 'mutated'
    expect(await store.get('cursors')).toEqual({streams: {standalone: 'e1'}})
  })

  test("uses its own database, never the app's default keyval-store", async () => {
    const store = new IdbStore()
    await appSet('shared-key', 'the app')
    expect(await store.get('shared-key')).toBeUndefined()
    await store.set('shared-key', 'the transport')
    expect(await appGet('shared-key')).toBe('the app')
    expect(await store.get('shared-key')).toBe('the transport')
    const names = (await indexedDB.databases()).map((database) => database.name)
    expect(names).toEqual(expect.arrayContaining(['mcp-resumable-http', 'keyval-store']))
  })

  test('two stores with different names stay apart; two with the same names share', async () => {
    const first = new IdbStore({databaseName: 'app-a', storeName: 'records'})
    const second = new IdbStore({databaseName: 'app-b', storeName: 'records'})
    await first.set('session', 'a')
    await second.set('session', 'b')
    expect(await first.get('session')).toBe('a')
    expect(await second.get('session')).toBe('b')
    expect(await new IdbStore({databaseName: 'app-a', storeName: 'records'}).get('session')).toBe('a')
    expect(await new IdbStore().get('session')).toBeUndefined()
  })

  test('option errors name the option', () => {
    expect(() => new IdbStore({databaseName: ''})).toThrow(/databaseName/)
    expect(() => new IdbStore({storeName: 7 as unknown as string})).toThrow(/storeName/)
  })

  test('where IndexedDB is missing: importing and constructing are fine; each call rejects with a TypeError', async () => {
    removeIndexedDB()
    vi.resetModules()
    const module = await import('../../src/idb.ts')
    const store = new module.IdbStore()
    for (const call of [store.get('a'), store.set('a', 1), store.delete('a')]) {
      await expect(call).rejects.toThrow(TypeError)
      await expect(call).rejects.toThrow(/IdbStore needs IndexedDB/)
    }
    // Nothing is cached from the failure: once IndexedDB exists, the same store works.
    Object.defineProperty(globalThis, 'indexedDB', installed)
    await store.set('a', 1)
    expect(await store.get('a')).toBe(1)
  })

  test('keeps a session for the transport: a new store on the same database finds it again', async () => {
    expectTypeOf<IdbStore>().toExtend<ResumptionStore>()
    expectTypeOf<IdbStoreOptions>().toEqualTypeOf<{databaseName?: string | undefined; storeName?: string | undefined}>()
    const databaseName = `transport-${Math.random()}`
    await expectSessionSurvivesRestart(() => new IdbStore({databaseName}))
  })

  test("where IndexedDB is missing, the transport says so once through onerror, with the store's own TypeError", async () => {
    removeIndexedDB()
    const transport = new ResumableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'), {store: new IdbStore()})
    const errors: Error[] = []
    transport.onerror = (error) => errors.push(error)
    await transport.start()
    await transport.close()

    expect(errors).toHaveLength(1)
    expect(isTransportError(errors[0], 'store')).toBe(true)
    expect(errors[0]!.cause).toBeInstanceOf(TypeError)
    expect((errors[0]!.cause as Error).message).toMatch(/IdbStore needs IndexedDB/)
  })
})
