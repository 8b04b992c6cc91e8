import type {JsonValue} from '../wire/jsonrpc.ts'
import {LocalLeases, type Fence, type Lease} from './lease.ts'

/**
 * Where the transport keeps what a restart needs
 * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#what-is-persisted | what is persisted}):
 * the session, the cursor of each open stream, and each server request not yet answered, every one
 * in its own record so that a write costs what changed, not the size of the session. The only
 * persistence seam: implement it over any key-value storage. Values are JSON; all calls are async.
 */
export interface ResumptionStore {
  get(key: string): Promise<JsonValue | undefined>
  /**
   * Stores `value`. With `fence` (given only by a store that implements {@link ResumptionStore.acquire}), the
   * write is made under that lease: it rejects with a `LeaseLostError` once a later lease of that name was given.
   */
  set(key: string, value: JsonValue, fence?: Fence): Promise<void>
  /** Deletes `key`; `fence` as for {@link ResumptionStore.set}. */
  delete(key: string, fence?: Fence): Promise<void>
  /** The keys that start with `prefix`, in any order. Called when a transport starts, to find its records. */
  list(prefix: string): Promise<string[]>
  /**
   * Optional: ownership
   * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/stores.md#ownership-one-session-one-owner | one owner per session}).
   * Takes the lease `name` for `ttlMs` unless a live owner holds it (then resolves undefined). Each lease taken gets a
   * larger fencing token than the one before it of that name, and the store then refuses writes fenced with an older
   * token. A store without it lets any number of transports share a session.
   */
  acquire?(name: string, ttlMs: number): Promise<Lease | undefined>
}

/** The default store: lives as long as the process or page, so it survives dropped connections only. */
export class MemoryStore implements ResumptionStore {
  readonly #entries = new Map<string, JsonValue>()
  readonly #leases = new LocalLeases()

  get(key: string): Promise<JsonValue | undefined> {
    return Promise.resolve(this.#entries.get(key))
  }

  set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    const refused = this.#leases.refusal(fence)
    if (refused !== undefined) return Promise.reject(refused)
    this.#entries.set(key, value)
    return Promise.resolve()
  }

  delete(key: string, fence?: Fence): Promise<void> {
    const refused = this.#leases.refusal(fence)
    if (refused !== undefined) return Promise.reject(refused)
    this.#entries.delete(key)
    return Promise.resolve()
  }

  /** Leases held in this process (or page): one transport at a time per session of this store. */
  acquire(name: string, ttlMs: number): Promise<Lease | undefined> {
    return Promise.resolve(this.#leases.acquire(name, ttlMs))
  }

  list(prefix: string): Promise<string[]> {
    return Promise.resolve([...this.#entries.keys()].filter((key) => key.startsWith(prefix)))
  }
}

/** Throws a TypeError naming what is missing when `store` is not a {@link ResumptionStore}. */
export function checkStore(store: unknown): asserts store is ResumptionStore {
  const missing = (['get', 'set', 'delete', 'list'] as const).filter(
    (method) => typeof (store as Partial<Record<string, unknown>> | null)?.[method] !== 'function',
  )
  if (missing.length > 0) {
    throw new TypeError(`options.store must implement get, set, delete and list; it lacks ${missing.join(', ')}`)
  }
  const {acquire} = store as {acquire?: unknown}
  if (acquire !== undefined && typeof acquire !== 'function') {
    throw new TypeError(
      'options.store.acquire, when there, must be a function (name, ttlMs) => Promise<Lease | undefined>: leave it out for a store that keeps no owner',
    )
  }
}
