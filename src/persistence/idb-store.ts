import {createStore, del, get, keys, promisifyRequest, set, type UseStore} from 'idb-keyval'
import {LeaseLostError, type Fence, type Lease} from './lease.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import type {ResumptionStore} from './store.ts'

export interface IdbStoreOptions {
  /**
   * The IndexedDB database to keep the records in. Its own database, never the app's default `keyval-store`,
   * so neither side can clear or overwrite the other's keys.
   * @defaultValue `'mcp-resumable-http'`
   */
  databaseName?: string | undefined
  /**
   * The object store inside `databaseName`. It is created with the database, so use one store name per
   * database: a second name in a database that already exists is not added (an idb-keyval limitation).
   * @defaultValue `'resumption'`
   */
  storeName?: string | undefined
}

/**
 * A {@link ResumptionStore} in IndexedDB, so a page that reloads finds its session and cursors again.
 * Values are kept as structured clones of the JSON values given to `set`; `get` of a missing key resolves
 * `undefined`.
 *
 * Importing this module and constructing the store touch nothing: the database is opened on first use. Where
 * IndexedDB is missing (Node without a polyfill), every call rejects with a `TypeError` that says so.
 *
 * Leases (`acquire`) are Web Locks (`navigator.locks`): held while the tab (or worker) that took it lives, and
 * released by the browser when it closes or crashes, so the TTL is not used. Where Web Locks are missing (Node
 * with `fake-indexeddb`), a lease excludes only the other transports of the same JavaScript realm: see
 * {@link IdbStore.webLocks}. The fencing token is kept in the database either way, and fenced writes check it
 * in the transaction that writes.
 *
 * @example
 * ```ts
 * import {IdbStore} from 'mcp-resumable-http/idb'
 * new ResumableHTTPClientTransport(url, {store: new IdbStore()})
 * ```
 */
export class IdbStore implements ResumptionStore {
  readonly #databaseName: string
  readonly #storeName: string
  #store: UseStore | undefined

  constructor(options: IdbStoreOptions = {}) {
    this.#databaseName = name(options.databaseName, 'databaseName', 'mcp-resumable-http')
    this.#storeName = name(options.storeName, 'storeName', 'resumption')
  }

  async get(key: string): Promise<JsonValue | undefined> {
    return get<JsonValue>(key, this.#open())
  }

  async set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    if (fence === undefined) return set(key, value, this.#open())
    return this.#fenced(fence, (store) => store.put(value, key))
  }

  async delete(key: string, fence?: Fence): Promise<void> {
    if (fence === undefined) return del(key, this.#open())
    return this.#fenced(fence, (store) => store.delete(key))
  }

  /** True where leases exclude other tabs and workers (Web Locks); false where they exclude this realm only. */
  static get webLocks(): boolean {
    return typeof navigator !== 'undefined' && typeof (navigator as Partial<Navigator>).locks?.request === 'function'
  }

  /** Takes the Web Lock of lease `name` if no other tab or worker holds it (see {@link IdbStore.webLocks}). */
  async acquire(name: string): Promise<Lease | undefined> {
    const lockName = `mcp-resumable-http:${this.#databaseName}/${this.#storeName}:${name}`
    const unlock = await (IdbStore.webLocks ? webLock(lockName) : realmLock(lockName))
    if (unlock === undefined) return undefined
    try {
      const token = await this.#nextToken(name)
      return {
        token,
        // Held until released (or the tab goes): renewing only tells whether the token is still the latest.
        renew: async () => (await this.#latestToken(name)) === token,
        release: () => {
          unlock()
          return Promise.resolve()
        },
      }
    } catch (error) {
      unlock()
      throw error
    }
  }

  /** Gives lease `name` the next token, in one transaction. */
  #nextToken(name: string): Promise<number> {
    return this.#open()('readwrite', async (store) => {
      const token = tokenOf(await promisifyRequest(store.get(name))) + 1
      store.put({token}, name)
      await promisifyRequest(store.transaction)
      return token
    })
  }

  async #latestToken(name: string): Promise<number> {
    return tokenOf(await get(name, this.#open()))
  }

  /** Writes with `write` in a transaction that first checks that `fence` is the latest lease of its name. */
  #fenced(fence: Fence, write: (store: IDBObjectStore) => void): Promise<void> {
    return this.#open()('readwrite', async (store) => {
      if (tokenOf(await promisifyRequest(store.get(fence.lease))) !== fence.token) throw new LeaseLostError(fence)
      write(store)
      await promisifyRequest(store.transaction)
    })
  }

  async list(prefix: string): Promise<string[]> {
    const all = await keys<IDBValidKey>(this.#open())
    return all.filter((key): key is string => typeof key === 'string' && key.startsWith(prefix))
  }

  // Checked at each call until the database is opened, so a polyfill installed after construction still works.
  #open(): UseStore {
    if (this.#store !== undefined) return this.#store
    if (typeof indexedDB === 'undefined') {
      throw new TypeError(
        "IdbStore needs IndexedDB: globalThis.indexedDB is missing. In Node, use FileStore from 'mcp-resumable-http/node' (or install an IndexedDB polyfill such as fake-indexeddb).",
      )
    }
    this.#store = createStore(this.#databaseName, this.#storeName)
    return this.#store
  }
}

function name(value: string | undefined, option: string, fallback: string): string {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || value === '') throw new TypeError(`options.${option} must be a non-empty string`)
  return value
}

function tokenOf(value: unknown): number {
  const token = (value as {token?: unknown} | undefined)?.token
  return typeof token === 'number' ? token : 0
}

/** Takes Web Lock `name` if it is free; resolves the function that releases it, or undefined. */
function webLock(name: string): Promise<(() => void) | undefined> {
  return new Promise((resolve, reject) => {
    navigator.locks
      .request(name, {ifAvailable: true}, (lock) => {
        if (lock === null) {
          resolve(undefined)
          return undefined
        }
        // The lock is held until the promise returned here settles: when the lease is released.
        return new Promise<void>((unlock) => resolve(unlock))
      })
      .catch(reject)
  })
}

/** Where Web Locks are missing: locks held in this JavaScript realm only. */
const realmLocks = new Set<string>()

function realmLock(name: string): Promise<(() => void) | undefined> {
  if (realmLocks.has(name)) return Promise.resolve(undefined)
  realmLocks.add(name)
  return Promise.resolve(() => realmLocks.delete(name))
}
