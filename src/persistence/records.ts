import type {JsonValue, ResumptionStore} from './store.ts'

/**
 * What the transport keeps, one record per thing that changes on its own (docs/design.md#what-is-persisted):
 *
 *     <namespace>#session                 the session: identity, protocol version, initialize result, IDs reserved
 *     <namespace>#stream:<stream key>     one open stream's cursor, and the call its answer belongs to
 *     <namespace>#request:<JSON of id>    one server request not yet answered, or the Client's answer to it
 *
 * A write costs one record, whatever the number of open streams. Every record names its session: one left by
 * another session is ignored, and ending a session deletes them all.
 */

/** What the transport keeps of a session: its identity across streams and processes. */
export interface SessionRecord {
  sessionId: string
  protocolVersion: string | undefined
  /** The server's answer to `initialize`, for a process that re-attaches without initializing. */
  initializeResult: JsonValue | undefined
  /** Request IDs below this may have been used on the wire in this session: a new process starts here. */
  requestIdsReserved: number
}

/** The request a response stream answers, as the app sent it: lets a later process tell the app whose answer it is. */
export interface CallRecord {
  method: string
  /** The tool, prompt or resource the request names (`params.name` or `params.uri`), when it names one. */
  name?: string | undefined
  /** The request ID the Client used (the wire carries another). */
  clientId: string | number
}

/** What the transport keeps of one stream: its position, valid only inside the session that produced it. */
export interface StreamRecord {
  lastEventId: string
  retryMs: number | undefined
  call: CallRecord | undefined
}

type Reporter = (error: unknown, key: string) => void

/** [spec transports, session management] a session ID is visible ASCII; longer than this is no plausible one. */
const validSessionId = /^[\x21-\x7E]{1,1024}$/

/**
 * The records of one server (and `storeKey`) in one store. Writes of one record are coalesced: while one is in
 * flight, every later change waits for a single follow-up write of the value as it is then. A store failure is
 * reported, never thrown: losing persistence must not take the live connection down.
 */
export class SessionRecords {
  readonly #store: ResumptionStore
  readonly #namespace: string
  readonly #report: Reporter
  readonly #writers = new Map<string, CoalescedWriter>()
  /** Writes under way, so that `close()` can wait for them. */
  readonly #writing = new Set<Promise<void>>()

  constructor(store: ResumptionStore, namespace: string, report: Reporter) {
    this.#store = store
    this.#namespace = namespace
    this.#report = report
  }

  /** The stored session, or undefined when there is none or it is not valid whole (then it is discarded). */
  async loadSession(): Promise<SessionRecord | undefined> {
    const key = this.#key('session')
    const value = await this.#read(key)
    if (value === undefined) return undefined
    if (
      isObject(value) &&
      typeof value['sessionId'] === 'string' &&
      validSessionId.test(value['sessionId']) &&
      optional(value['protocolVersion'], 'string') &&
      (value['requestIdsReserved'] === undefined || isWireId(value['requestIdsReserved']))
    ) {
      return {
        sessionId: value['sessionId'],
        protocolVersion: value['protocolVersion'],
        initializeResult: value['initializeResult'],
        requestIdsReserved: value['requestIdsReserved'] ?? 0,
      }
    }
    this.#report(new Error('invalid session record, discarded'), key)
    await this.clearSession()
    return undefined
  }

  saveSession(session: SessionRecord): Promise<void> {
    const value: {[key: string]: JsonValue} = {sessionId: session.sessionId, requestIdsReserved: session.requestIdsReserved}
    if (session.protocolVersion !== undefined) value['protocolVersion'] = session.protocolVersion
    if (session.initializeResult !== undefined) value['initializeResult'] = session.initializeResult
    return this.#coalesced(this.#key('session'), () => value)
  }

  /** Forgets the session and every record of it: nothing outlives the session that produced it. */
  clearSession(): Promise<void> {
    const session = this.#key('session')
    return this.#write(session, async () => {
      const prefixes = [this.#key('stream:'), this.#key('request:')]
      for (const prefix of prefixes) for (const key of await this.#store.list(prefix)) await this.#store.delete(key)
      await this.#store.delete(session)
    })
  }

  /** The stored streams of `sessionId`, by stream key; invalid ones are reported and dropped. */
  async loadStreams(sessionId: string): Promise<Map<string, StreamRecord>> {
    const streams = new Map<string, StreamRecord>()
    for (const [streamKey, value] of await this.#loadAll('stream:', sessionId)) {
      const call = value['call']
      if (
        typeof value['lastEventId'] === 'string' &&
        value['lastEventId'] !== '' &&
        optional(value['retryMs'], 'number') &&
        (call === undefined || isCall(call))
      ) {
        streams.set(streamKey, {lastEventId: value['lastEventId'], retryMs: value['retryMs'], call})
      } else {
        this.#report(new Error(`invalid record of stream ${streamKey}, discarded`), this.#key(`stream:${streamKey}`))
      }
    }
    return streams
  }

  /**
   * Stores what `build()` gives for stream `streamKey` when the write starts, or deletes its record when it gives
   * nothing; resolves once that is done.
   */
  saveStream(sessionId: string, streamKey: string, build: () => StreamRecord | undefined): Promise<void> {
    return this.#coalesced(this.#key(`stream:${streamKey}`), () => {
      const stream = build()
      if (stream === undefined) return undefined
      const value: {[key: string]: JsonValue} = {sessionId, lastEventId: stream.lastEventId}
      if (stream.retryMs !== undefined) value['retryMs'] = stream.retryMs
      if (stream.call !== undefined) value['call'] = stripUndefined(stream.call)
      return value
    })
  }

  /** The stored server requests and answers of `sessionId`, by `JSON.stringify` of the request ID. */
  async loadServerRequests(sessionId: string): Promise<Map<string, JsonValue>> {
    const kept = new Map<string, JsonValue>()
    for (const [id, value] of await this.#loadAll('request:', sessionId)) {
      if (value['message'] !== undefined) kept.set(id, value['message'])
    }
    return kept
  }

  /** Stores server request `id`'s message (the request, or the Client's answer to it); deletes it when undefined. */
  saveServerRequest(sessionId: string, id: string, message: JsonValue | undefined): Promise<void> {
    return this.#coalesced(this.#key(`request:${id}`), () => (message === undefined ? undefined : {sessionId, message}))
  }

  /** Every record under `kind` that belongs to `sessionId`, by the rest of its key. */
  async #loadAll(kind: string, sessionId: string): Promise<Map<string, {[key: string]: JsonValue}>> {
    const prefix = this.#key(kind)
    const records = new Map<string, {[key: string]: JsonValue}>()
    let keys: string[]
    try {
      keys = await this.#store.list(prefix)
    } catch (error) {
      this.#report(error, prefix)
      return records
    }
    for (const key of keys) {
      const value = await this.#read(key)
      if (value === undefined) continue
      if (!isObject(value) || typeof value['sessionId'] !== 'string') {
        this.#report(new Error('invalid record, discarded'), key)
        continue
      }
      if (value['sessionId'] === sessionId) records.set(key.slice(prefix.length), value)
    }
    return records
  }

  #key(name: string): string {
    return `${this.#namespace}#${name}`
  }

  #coalesced(key: string, build: () => JsonValue | undefined): Promise<void> {
    let writer = this.#writers.get(key)
    if (writer === undefined) {
      writer = new CoalescedWriter((value) =>
        this.#write(key, () => (value === undefined ? this.#store.delete(key) : this.#store.set(key, value))),
      )
      this.#writers.set(key, writer)
    }
    const written = writer.write(build)
    // An idle writer is dropped: there is one per open stream, and streams come and go.
    const done = written.then(() => {
      if (this.#writers.get(key) === writer && writer.idle) this.#writers.delete(key)
    })
    // A write queued behind one in flight is not under way yet: `settled()` must wait for it too.
    this.#writing.add(done)
    void done.finally(() => this.#writing.delete(done))
    return done
  }

  async #read(key: string): Promise<JsonValue | undefined> {
    try {
      return await this.#store.get(key)
    } catch (error) {
      this.#report(error, key)
      return undefined
    }
  }

  /** Resolves once every write started so far is done. */
  async settled(): Promise<void> {
    while (this.#writing.size > 0) await Promise.allSettled([...this.#writing])
  }

  #write(key: string, operation: () => Promise<void>): Promise<void> {
    const write = (async () => {
      try {
        await operation()
      } catch (error) {
        this.#report(error, key)
      }
    })()
    this.#writing.add(write)
    void write.finally(() => this.#writing.delete(write))
    return write
  }
}

/** One write in flight at a time; every request made meanwhile shares the single write that follows it. */
class CoalescedWriter {
  readonly #persist: (value: JsonValue | undefined) => Promise<void>
  #inFlight: Promise<void> | undefined
  #queued: Promise<void> | undefined

  constructor(persist: (value: JsonValue | undefined) => Promise<void>) {
    this.#persist = persist
  }

  get idle(): boolean {
    return this.#inFlight === undefined && this.#queued === undefined
  }

  /** Resolves once a write of a value built after this call has completed. */
  write(build: () => JsonValue | undefined): Promise<void> {
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

function isWireId(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function isCall(value: unknown): value is CallRecord {
  return (
    isObject(value) &&
    typeof value['method'] === 'string' &&
    optional(value['name'], 'string') &&
    (typeof value['clientId'] === 'string' || typeof value['clientId'] === 'number')
  )
}

function stripUndefined(call: CallRecord): {[key: string]: JsonValue} {
  const value: {[key: string]: JsonValue} = {method: call.method, clientId: call.clientId}
  if (call.name !== undefined) value['name'] = call.name
  return value
}
