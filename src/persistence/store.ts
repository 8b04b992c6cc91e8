/** A JSON value, as a {@link ResumptionStore} keeps it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | {[key: string]: JsonValue}

/**
 * Where the transport keeps what a restart needs (docs/design.md#what-is-persisted): the session, the cursor of
 * each open stream, and each server request not yet answered, every one in its own record so that a write costs
 * what changed, not the size of the session. The only persistence seam: implement it over any key-value storage.
 * Values are JSON; all calls are async.
 */
export interface ResumptionStore {
  get(key: string): Promise<JsonValue | undefined>
  set(key: string, value: JsonValue): Promise<void>
  delete(key: string): Promise<void>
  /** The keys that start with `prefix`, in any order. Called when a transport starts, to find its records. */
  list(prefix: string): Promise<string[]>
}

/** The default store: lives as long as the process or page, so it survives dropped connections only. */
export class MemoryStore implements ResumptionStore {
  readonly #entries = new Map<string, JsonValue>()

  get(key: string): Promise<JsonValue | undefined> {
    return Promise.resolve(this.#entries.get(key))
  }

  set(key: string, value: JsonValue): Promise<void> {
    this.#entries.set(key, value)
    return Promise.resolve()
  }

  delete(key: string): Promise<void> {
    this.#entries.delete(key)
    return Promise.resolve()
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
}
