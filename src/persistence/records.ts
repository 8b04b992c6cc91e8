import type {JsonValue, ResumptionStore} from './store.ts'

/** What the transport keeps of a session: its identity across streams and processes. */
export interface SessionRecord {
  sessionId: string
  protocolVersion: string | undefined
  /** The server's answer to `initialize`, for a process that re-attaches without initializing. */
  initializeResult: JsonValue | undefined
  /** Request IDs below this may have been used on the wire in this session: a new process starts here. */
  requestIdsReserved: number
}

/** What the transport keeps of one stream: its position, valid only inside the session that produced it. */
export interface CursorRecord {
  lastEventId: string
  retryMs: number | undefined
}

type Reporter = (error: unknown, key: string) => void

/**
 * The session, the cursors of its streams and the answers given to its server requests: three records of
 * one store, namespaced by the server URL. Cursor and answer writes are coalesced: while one is in flight,
 * every later change waits for a single follow-up write, so a long stream costs a handful of writes.
 * A store failure is reported, never thrown: losing persistence must not take the live connection down.
 */
export class SessionRecords {
  readonly #store: ResumptionStore
  readonly #keys: {session: string; cursors: string; answers: string}
  readonly #report: Reporter
  readonly #writers = new Map<string, CoalescedWriter>()

  constructor(store: ResumptionStore, namespace: string, report: Reporter) {
    this.#store = store
    this.#keys = {session: `${namespace}#session`, cursors: `${namespace}#cursors`, answers: `${namespace}#answers`}
    this.#report = report
  }

  /** The stored session, or undefined when there is none or it cannot be read whole (then it is discarded). */
  async loadSession(): Promise<SessionRecord | undefined> {
    const value = await this.#read(this.#keys.session)
    if (value === undefined) return undefined
    if (isObject(value) && typeof value['sessionId'] === 'string' && optional(value['protocolVersion'], 'string') && optional(value['requestIdsReserved'], 'number')) {
      return {
        sessionId: value['sessionId'],
        protocolVersion: value['protocolVersion'],
        initializeResult: value['initializeResult'],
        requestIdsReserved: value['requestIdsReserved'] ?? 0,
      }
    }
    this.#report(new Error('corrupt session record, discarded'), this.#keys.session)
    await this.clearSession()
    return undefined
  }

  saveSession(session: SessionRecord): Promise<void> {
    const value: {[key: string]: JsonValue} = {sessionId: session.sessionId, requestIdsReserved: session.requestIdsReserved}
    if (session.protocolVersion !== undefined) value['protocolVersion'] = session.protocolVersion
    if (session.initializeResult !== undefined) value['initializeResult'] = session.initializeResult
    return this.#write(this.#keys.session, () => this.#store.set(this.#keys.session, value))
  }

  /** Forgets the session and, with it, its cursors and answers: nothing outlives the session that produced it. */
  clearSession(): Promise<void> {
    return this.#write(this.#keys.session, async () => {
      await this.#store.delete(this.#keys.cursors)
      await this.#store.delete(this.#keys.answers)
      await this.#store.delete(this.#keys.session)
    })
  }

  /** The stored cursors of `sessionId`; those of any other session, or unreadable ones, are dropped. */
  async loadCursors(sessionId: string): Promise<Map<string, CursorRecord>> {
    const cursors = new Map<string, CursorRecord>()
    for (const [stream, cursor] of await this.#loadEntries(this.#keys.cursors, sessionId)) {
      if (isObject(cursor) && typeof cursor['lastEventId'] === 'string' && optional(cursor['retryMs'], 'number')) {
        cursors.set(stream, {lastEventId: cursor['lastEventId'], retryMs: cursor['retryMs']})
      } else {
        this.#report(new Error(`corrupt cursor of stream ${stream}, discarded`), this.#keys.cursors)
      }
    }
    return cursors
  }

  /** Persists the cursors `snapshot()` gives when the write starts; resolves once they are stored. */
  saveCursors(sessionId: string, snapshot: () => Map<string, CursorRecord>): Promise<void> {
    return this.#coalesced(this.#keys.cursors, () => {
      const entries: {[stream: string]: JsonValue} = {}
      for (const [stream, {lastEventId, retryMs}] of snapshot()) {
        entries[stream] = retryMs === undefined ? {lastEventId} : {lastEventId, retryMs}
      }
      return {sessionId, entries}
    })
  }

  /** The stored answers to server requests of `sessionId`, by request ID. */
  async loadAnswers(sessionId: string): Promise<Map<string, JsonValue>> {
    return this.#loadEntries(this.#keys.answers, sessionId)
  }

  /** Persists the answers `snapshot()` gives when the write starts; resolves once they are stored. */
  saveAnswers(sessionId: string, snapshot: () => Map<string, JsonValue>): Promise<void> {
    return this.#coalesced(this.#keys.answers, () => ({sessionId, entries: Object.fromEntries(snapshot())}))
  }

  async #loadEntries(key: string, sessionId: string): Promise<Map<string, JsonValue>> {
    const value = await this.#read(key)
    if (value === undefined) return new Map()
    if (!isObject(value) || typeof value['sessionId'] !== 'string' || !isObject(value['entries'])) {
      this.#report(new Error('corrupt record, discarded'), key)
      return new Map()
    }
    return value['sessionId'] === sessionId ? new Map(Object.entries(value['entries'])) : new Map()
  }

  #coalesced(key: string, build: () => JsonValue): Promise<void> {
    let writer = this.#writers.get(key)
    if (writer === undefined) {
      writer = new CoalescedWriter((value) => this.#write(key, () => this.#store.set(key, value)))
      this.#writers.set(key, writer)
    }
    return writer.write(build)
  }

  async #read(key: string): Promise<JsonValue | undefined> {
    try {
      return await this.#store.get(key)
    } catch (error) {
      this.#report(error, key)
      return undefined
    }
  }

  async #write(key: string, operation: () => Promise<void>): Promise<void> {
    try {
      await operation()
    } catch (error) {
      this.#report(error, key)
    }
  }
}

/** One write in flight at a time; every request made meanwhile shares the single write that follows it. */
class CoalescedWriter {
  readonly #persist: (value: JsonValue) => Promise<void>
  #inFlight: Promise<void> | undefined
  #queued: Promise<void> | undefined

  constructor(persist: (value: JsonValue) => Promise<void>) {
    this.#persist = persist
  }

  /** Resolves once a write of a value built after this call has completed. */
  write(build: () => JsonValue): Promise<void> {
    if (this.#inFlight !== undefined) {
      this.#queued ??= this.#inFlight.then(() => {
        this.#queued = undefined
        return this.write(build)
      })
      return this.#queued
    }
    this.#inFlight = this.#persist(build()).finally(() => {
      this.#inFlight = undefined
    })
    return this.#inFlight
  }
}

function isObject(value: unknown): value is {[key: string]: JsonValue} {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function optional<T extends 'string' | 'number'>(value: unknown, type: T): value is (T extends 'string' ? string : number) | undefined {
  return value === undefined || typeof value === type
}
