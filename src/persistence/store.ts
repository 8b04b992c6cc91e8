/** A JSON value, as a {@link ResumptionStore} keeps it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | {[key: string]: JsonValue}

/**
 * Where the transport keeps what it needs to resume: the session and each stream's cursor.
 * The only persistence seam: implement it over any key-value storage. Values are JSON; all calls are async.
 */
export interface ResumptionStore {
  get(key: string): Promise<JsonValue | undefined>
  set(key: string, value: JsonValue): Promise<void>
  delete(key: string): Promise<void>
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
}
