import type {JsonValue, ResumptionStore} from './store.ts'

/** What the transport keeps of a session: its identity across streams. */
export interface SessionRecord {
  sessionId: string
  protocolVersion: string | undefined
}

/** What the transport keeps of one stream: its position, valid only inside `sessionId`. */
export interface CursorRecord {
  lastEventId: string
  retryMs: number | undefined
}

type Reporter = (error: unknown, key: string) => void

/**
 * The session and the cursors of its streams, as two records of one store, namespaced by the server URL.
 * Cursor writes are coalesced: while one is in flight, every later change waits for a single follow-up write,
 * so a long stream costs a handful of writes however many events it carries.
 */
export class SessionRecords {
  readonly #store: ResumptionStore
  readonly #sessionKey: string
  readonly #cursorsKey: string
  readonly #report: Reporter
  #inFlight: Promise<void> | undefined
  #queued: Promise<void> | undefined

  constructor(store: ResumptionStore, namespace: string, report: Reporter) {
    this.#store = store
    this.#sessionKey = `${namespace}#session`
    this.#cursorsKey = `${namespace}#cursors`
    this.#report = report
  }

  /** The stored session, or undefined when there is none or it cannot be read whole (then it is discarded). */
  async loadSession(): Promise<SessionRecord | undefined> {
    const value = await this.#read(this.#sessionKey)
    if (value === undefined) return undefined
    if (isSessionRecord(value)) return {sessionId: value.sessionId, protocolVersion: value.protocolVersion}
    this.#report(new Error('corrupt session record'), this.#sessionKey)
    await this.clearSession()
    return undefined
  }

  saveSession(session: SessionRecord): Promise<void> {
    const value: JsonValue = {sessionId: session.sessionId}
    if (session.protocolVersion !== undefined) value['protocolVersion'] = session.protocolVersion
    return this.#write(() => this.#store.set(this.#sessionKey, value), this.#sessionKey)
  }

  /** Forgets the session and, with it, every cursor: a cursor never outlives the session that produced it. */
  clearSession(): Promise<void> {
    return this.#write(async () => {
      await this.#store.delete(this.#cursorsKey)
      await this.#store.delete(this.#sessionKey)
    }, this.#sessionKey)
  }

  /** The stored cursors of `sessionId`; those of any other session, or unreadable ones, are dropped. */
  async loadCursors(sessionId: string): Promise<Map<string, CursorRecord>> {
    const cursors = new Map<string, CursorRecord>()
    const value = await this.#read(this.#cursorsKey)
    if (value === undefined) return cursors
    if (!isObject(value) || typeof value['sessionId'] !== 'string' || !isObject(value['streams'])) {
      this.#report(new Error('corrupt cursor record'), this.#cursorsKey)
      return cursors
    }
    if (value['sessionId'] !== sessionId) return cursors
    for (const [key, cursor] of Object.entries(value['streams'])) {
      if (isCursorRecord(cursor)) cursors.set(key, {lastEventId: cursor.lastEventId, retryMs: cursor.retryMs})
      else this.#report(new Error(`corrupt cursor for stream ${key}`), this.#cursorsKey)
    }
    return cursors
  }

  /**
   * Persists `snapshot()` (taken when the write starts, so it holds every change made until then).
   * Resolves once a write that includes the caller's change is done.
   */
  saveCursors(sessionId: string, snapshot: () => Map<string, CursorRecord>): Promise<void> {
    if (this.#inFlight !== undefined) {
      this.#queued ??= this.#inFlight.then(() => {
        this.#queued = undefined
        return this.saveCursors(sessionId, snapshot)
      })
      return this.#queued
    }
    const write = this.#write(() => {
      const streams: {[key: string]: JsonValue} = {}
      for (const [key, cursor] of snapshot()) {
        streams[key] =
          cursor.retryMs === undefined
            ? {lastEventId: cursor.lastEventId}
            : {lastEventId: cursor.lastEventId, retryMs: cursor.retryMs}
      }
      return this.#store.set(this.#cursorsKey, {sessionId, streams})
    }, this.#cursorsKey)
    this.#inFlight = write.finally(() => {
      this.#inFlight = undefined
    })
    return this.#inFlight
  }

  async #read(key: string): Promise<JsonValue | undefined> {
    try {
      return await this.#store.get(key)
    } catch (error) {
      this.#report(error, key)
      return undefined
    }
  }

  // A store failure is reported, never thrown: losing persistence must not take the live connection down.
  async #write(operation: () => Promise<void>, key: string): Promise<void> {
    try {
      await operation()
    } catch (error) {
      this.#report(error, key)
    }
  }
}

function isObject(value: unknown): value is {[key: string]: JsonValue} {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isSessionRecord(value: JsonValue): value is JsonValue & SessionRecord {
  return (
    isObject(value) &&
    typeof value['sessionId'] === 'string' &&
    (value['protocolVersion'] === undefined || typeof value['protocolVersion'] === 'string')
  )
}

function isCursorRecord(value: JsonValue): value is JsonValue & CursorRecord {
  return (
    isObject(value) &&
    typeof value['lastEventId'] === 'string' &&
    (value['retryMs'] === undefined || typeof value['retryMs'] === 'number')
  )
}
