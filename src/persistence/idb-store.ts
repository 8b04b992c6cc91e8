import {createStore, del, get, keys, set, type UseStore} from 'idb-keyval'
import type {JsonValue, ResumptionStore} from './store.ts'

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

  async set(key: string, value: JsonValue): Promise<void> {
    return set(key, value, this.#open())
  }

  async delete(key: string): Promise<void> {
    return del(key, this.#open())
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
