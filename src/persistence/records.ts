import type {CallRecord, TransportEvent} from '../events.ts'
import {isJsonRpcId} from '../wire/jsonrpc.ts'
import {isSendableEventId, isSessionId, sessionIdRule, type Limits} from '../policy/limits.ts'
import type {StoreNamespace} from '../wire/namespace.ts'
import {GuardedStore} from './guarded-store.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import type {ResumptionStore} from './store.ts'

/**
 * What the transport keeps, one record per thing that changes on its own (docs/design.md#what-is-persisted):
 *
 *     <namespace>#session                 the session: identity, protocol version, initialize result, IDs reserved
 *     <namespace>#stream:<stream key>     one open stream's cursor, and the call its answer belongs to
 *     <namespace>#request:<JSON of id>    one server request not yet answered, or the Client's answer to it
 *     <namespace>#call:<call ID>          one journaled call, in either era (src/calls/call-journal.ts); no session's
 *     <namespace>#wire-ids                request IDs below this may have been used on the wire, in either era
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

/** What the transport keeps of one stream: its position, valid only inside the session that produced it. */
/** A server request kept for a restart: the request, or the Client's answer and whether the server took it. */
export interface KeptRecord {
  message: JsonValue
  /** The key of the stream that brought the request. */
  stream: string | undefined
  /** The server confirmed the answer: it is kept only to recognise a replayed copy of the request. */
  taken: boolean
}

export interface StreamRecord {
  lastEventId: string
  retryMs: number | undefined
  call: CallRecord | undefined
}

/** A protocol version is a date (2025-11-25); longer than this is no plausible one. */
const maxProtocolVersion = 64
/**
 * The highest `requestIdsReserved` taken from a store: a process counts wire IDs up from it, and past 2^53 two
 * requests would share one (1e20 + 1 === 1e20). Leaves room for 2^52 requests.
 */
const maxReservedWireId = 2 ** 52

/** What the records need of the options (resolved: src/options.ts). */
export interface RecordsOptions {
  readonly store: ResumptionStore
  /** The names of this server's records (and `storeKey`'s). */
  readonly namespace: StoreNamespace
  readonly storeTimeoutMs: number
  /** A stored cursor is checked against `maxEventIdBytes`, and a stored `retry` cut to `maxRetryMs`. */
  readonly limits: Pick<Limits, 'maxEventIdBytes' | 'maxRetryMs'>
}

/**
 * The records of one server (and `storeKey`) in one store, each read and written through a {@link GuardedStore}
 * (bounded in time, a failure reported once and never thrown, the writes of a record coalesced). Every record read
 * is checked whole; an invalid one is reported (`record-discarded`), not used, and deleted.
 */
export class SessionRecords {
  readonly #store: GuardedStore
  readonly #namespace: StoreNamespace
  readonly #options: RecordsOptions
  readonly #emit: (event: TransportEvent) => void

  constructor(options: RecordsOptions, emit: (event: TransportEvent) => void) {
    this.#store = new GuardedStore(options.store, options.storeTimeoutMs, (error, key) =>
      emit({type: 'store-error', key, error}),
    )
    this.#namespace = options.namespace
    this.#options = options
    this.#emit = emit
  }

  /** The stored session, or undefined when there is none or it is not valid whole (then it is discarded). */
  async loadSession(): Promise<SessionRecord | undefined> {
    // The first store access of `prior()`: a URL with a query has its namespace once its digest is computed.
    const digest = this.#namespace.known()
    if (digest !== undefined) await digest
    const key = this.#key('session')
    const value = await this.#store.read(key)
    if (value === undefined) return undefined
    const reason = invalidSession(value)
    if (reason === undefined) {
      const session = value as {[key: string]: JsonValue}
      return {
        sessionId: session['sessionId'] as string,
        protocolVersion: session['protocolVersion'] as string | undefined,
        initializeResult: session['initializeResult'],
        requestIdsReserved: (session['requestIdsReserved'] as number | undefined) ?? 0,
      }
    }
    this.#emit({type: 'record-discarded', key, reason})
    await this.clearSession()
    return undefined
  }

  saveSession(session: SessionRecord): Promise<void> {
    const value: {[key: string]: JsonValue} = {
      sessionId: session.sessionId,
      requestIdsReserved: session.requestIdsReserved,
    }
    if (session.protocolVersion !== undefined) value['protocolVersion'] = session.protocolVersion
    if (session.initializeResult !== undefined) value['initializeResult'] = session.initializeResult
    return this.#store.coalesced(this.#key('session'), () => value)
  }

  /**
   * Forgets the session and every record of it: nothing outlives the session that produced it. The session record
   * goes first: a process that dies before the rest are gone leaves records no session names (loads skip them), never
   * a session to resume without the answers it kept (docs/design.md#what-is-persisted). Each delete follows a write
   * of its record under way and replaces one queued, so no late write brings a record back. A failed delete stops
   * the store, so the rest stays.
   */
  clearSession(): Promise<void> {
    const session = this.#key('session')
    const forget = (key: string): Promise<void> => this.#store.coalesced(key, () => undefined)
    return this.#store.write(session, async () => {
      await forget(session)
      const prefixes = [this.#key('stream:'), this.#key('request:')]
      const keys = await Promise.all(prefixes.map((prefix) => this.#store.keys(prefix)))
      await Promise.all(keys.flat().map(forget))
    })
  }

  /** The stored streams of `sessionId`, by stream key; invalid ones are reported and dropped. */
  async loadStreams(sessionId: string): Promise<Map<string, StreamRecord>> {
    const streams = new Map<string, StreamRecord>()
    for (const [streamKey, value] of await this.#loadAll('stream:', sessionId)) {
      const {lastEventId, retryMs, call} = value
      const reason =
        typeof lastEventId !== 'string' || lastEventId === ''
          ? 'no cursor'
          : !isSendableEventId(lastEventId, this.#options.limits)
            ? `a cursor of ${lastEventId.length} characters, or no header value (limits.maxEventIdBytes)`
            : retryMs !== undefined && !isWireId(retryMs)
              ? 'a retry that is no whole number of milliseconds'
              : call !== undefined && !isCall(call)
                ? 'a call that is not one'
                : undefined
      if (reason === undefined) {
        // A `retry` stored under a higher cap is cut to this one.
        const retry = retryMs === undefined ? undefined : Math.min(retryMs as number, this.#options.limits.maxRetryMs)
        streams.set(streamKey, {
          lastEventId: lastEventId as string,
          retryMs: retry,
          call: call as CallRecord | undefined,
        })
      } else this.#discard(this.#key(`stream:${streamKey}`), `invalid record of stream ${streamKey}: ${reason}`)
    }
    return streams
  }

  /**
   * Stores what `build()` gives for stream `streamKey` when the write starts, or deletes its record when it gives
   * nothing; resolves once that is done.
   */
  saveStream(sessionId: string, streamKey: string, build: () => StreamRecord | undefined): Promise<void> {
    return this.#store.coalesced(this.#key(`stream:${streamKey}`), () => {
      const stream = build()
      if (stream === undefined) return undefined
      const value: {[key: string]: JsonValue} = {sessionId, lastEventId: stream.lastEventId}
      if (stream.retryMs !== undefined) value['retryMs'] = stream.retryMs
      if (stream.call !== undefined) value['call'] = stripUndefined(stream.call)
      return value
    })
  }

  /**
   * The stored server requests and answers of `sessionId`, by `JSON.stringify` of the request ID, each with the key of
   * the stream that brought the request (undefined in a record of an earlier version, or one not a string), and
   * whether the server took the answer.
   */
  async loadServerRequests(sessionId: string): Promise<Map<string, KeptRecord>> {
    const kept = new Map<string, KeptRecord>()
    for (const [id, value] of await this.#loadAll('request:', sessionId)) {
      const {message, stream, taken} = value
      if (isObject(message) && isJsonRpcId(parsedId(id)))
        kept.set(id, {message, stream: typeof stream === 'string' ? stream : undefined, taken: taken === true})
      else this.#discard(this.#key(`request:${id}`), 'not a JSON-RPC message under a JSON-RPC ID')
    }
    return kept
  }

  /**
   * Stores server request `id`'s message (the request, or the Client's answer to it), the key of the stream that
   * brought the request, and whether the server took the answer; deletes it when `message` is undefined.
   */
  saveServerRequest(
    sessionId: string,
    id: string,
    message: JsonValue | undefined,
    stream: string | undefined,
    taken: boolean,
  ): Promise<void> {
    return this.#store.coalesced(this.#key(`request:${id}`), () => {
      if (message === undefined) return undefined
      const value: {[key: string]: JsonValue} = {sessionId, message}
      if (stream !== undefined) value['stream'] = stream
      if (taken) value['taken'] = true
      return value
    })
  }

  /** Every journaled call, by call ID: calls outlive sessions (the 2026-07-28 era has none). */
  loadCalls(): Promise<Map<string, JsonValue>> {
    return this.#list('call:')
  }

  /** Stores what `build()` gives for journaled call `callId` when the write starts (deletes it when nothing). */
  saveCall(callId: string, build: () => JsonValue | undefined): Promise<void> {
    return this.#store.coalesced(this.#key(`call:${callId}`), build)
  }

  /** A journaled call's record is invalid (`reason`): reported and deleted. */
  discardCall(callId: string, reason: string): void {
    this.#discard(this.#key(`call:${callId}`), reason)
  }

  /** The bound below which wire IDs may have been used, in either era; 0 when none (or an invalid one) is stored. */
  async loadWireIds(): Promise<number> {
    const value = await this.#store.read(this.#key('wire-ids'))
    return isWireId(value) && value <= maxReservedWireId ? value : 0
  }

  /** Stores the bound below which wire IDs may have been used. */
  saveWireIds(reserved: number): Promise<void> {
    return this.#store.coalesced(this.#key('wire-ids'), () => reserved)
  }

  /** Every record under `kind` that belongs to `sessionId`, by the rest of its key. */
  async #loadAll(kind: string, sessionId: string): Promise<Map<string, {[key: string]: JsonValue}>> {
    const records = new Map<string, {[key: string]: JsonValue}>()
    for (const [name, value] of await this.#list(kind)) {
      if (!isObject(value) || typeof value['sessionId'] !== 'string') {
        this.#discard(this.#key(`${kind}${name}`), 'a record that names no session')
        continue
      }
      if (value['sessionId'] === sessionId) records.set(name, value)
    }
    return records
  }

  /** Every record under `kind`, by the rest of its key. */
  async #list(kind: string): Promise<Map<string, JsonValue>> {
    const prefix = this.#key(kind)
    const records = new Map<string, JsonValue>()
    for (const key of await this.#store.keys(prefix)) {
      const value = await this.#store.read(key)
      if (value !== undefined) records.set(key.slice(prefix.length), value)
    }
    return records
  }

  #key(name: string): string {
    return `${this.#namespace.value}#${name}`
  }

  /** Resolves once every write started so far is done. */
  settled(): Promise<void> {
    return this.#store.settled()
  }

  /** An invalid record: reported, and deleted so that it is not met again. */
  #discard(key: string, reason: string): void {
    this.#emit({type: 'record-discarded', key, reason})
    const {store} = this.#store
    void this.#store.write(key, () => this.#store.call(() => store.delete(key)))
  }
}

/** Why a stored session cannot be used, or undefined when it can. */
function invalidSession(value: JsonValue): string | undefined {
  if (!isObject(value)) return 'a session record that is not an object'
  const {sessionId, protocolVersion, requestIdsReserved} = value
  if (!isSessionId(sessionId)) return `a session ID that is not ${sessionIdRule}`
  if (
    protocolVersion !== undefined &&
    (typeof protocolVersion !== 'string' || protocolVersion.length > maxProtocolVersion)
  )
    return 'an invalid protocol version'
  if (requestIdsReserved !== undefined && !(isWireId(requestIdsReserved) && requestIdsReserved <= maxReservedWireId)) {
    return `requestIdsReserved that is not a whole number from 0 to 2^52`
  }
  return undefined
}

/** The JSON-RPC ID a server request's key names (`JSON.stringify` of it), or undefined. */
function parsedId(key: string): unknown {
  try {
    return JSON.parse(key)
    // Stryker disable next-line BlockStatement: the function then returns undefined too
  } catch {
    return undefined
  }
}

function isObject(value: unknown): value is {[key: string]: JsonValue} {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function optional<T extends 'string' | 'number'>(
  value: unknown,
  type: T,
): value is (T extends 'string' ? string : number) | undefined {
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
    (typeof value['clientId'] === 'string' || typeof value['clientId'] === 'number') &&
    optional(value['traceparent'], 'string') &&
    optional(value['tracestate'], 'string')
  )
}

function stripUndefined(call: CallRecord): {[key: string]: JsonValue} {
  const value: {[key: string]: JsonValue} = {method: call.method, clientId: call.clientId}
  if (call.name !== undefined) value['name'] = call.name
  if (call.traceparent !== undefined) value['traceparent'] = call.traceparent
  if (call.tracestate !== undefined) value['tracestate'] = call.tracestate
  return value
}
