/**
 * The SDK's `EventStore` done right (docs/server.md#the-event-store, docs/design.md#what-a-server-must-do): events
 * kept per stream, bounded in bytes and in age; an event ID names its store and its stream; a `Last-Event-ID` is
 * replayed from its own stream only, and one the store did not issue, or no longer holds, is refused.
 */
import {checkKeys, positiveInteger} from './checks.ts'
import {MemoryEventLog, type EventBounds, type EventLog, type Held} from './event-log.ts'

/** A JSON-RPC message as the SDK hands it over: v1's and v2's `JSONRPCMessage` both are one. */
export interface JsonRpcMessage {
  jsonrpc: '2.0'
}

export interface ResumableEventStoreOptions {
  /**
   * Where the events live. A {@link MemoryEventLog} is gone with the process; a `RedisEventLog`
   * (`mcp-resumable-http/server/redis`) outlives it, so that a restarted server still replays.
   * @defaultValue `new MemoryEventLog()`
   */
  log?: EventLog | undefined
  /**
   * How much the store keeps, in characters of the events' JSON plus 64 per event; past it the oldest events
   * of the store (whatever their stream) are dropped. One session's worth: give each session a store.
   * @defaultValue 1048576 (1 MiB)
   */
  maxBytes?: number | undefined
  /**
   * How long an event is kept, in milliseconds. Longer than clients try to resume (this package's client gives
   * up after five minutes of outage by default).
   * @defaultValue 600000 (ten minutes)
   */
  maxAgeMs?: number | undefined
}

/** What the store did since it was made: for logs or metrics. Replays are counted apart from re-emissions. */
export interface EventStoreMetrics {
  /** Events stored (priming events included). */
  storedEvents: number
  /** Events dropped by `maxBytes` or `maxAgeMs`. */
  evictedEvents: number
  /** `Last-Event-ID`s accepted: stream resumptions. */
  streamResumptions: number
  /** Events sent again by those resumptions. */
  replayedEvents: number
  /** `Last-Event-ID`s refused: with the SDK, one per `GET` refused (it asks `getStreamIdForEventId` first). */
  refusedEventIds: number
}

/** Why an event ID was refused. */
export type RefusedEventIdReason = 'malformed' | 'foreign' | 'not-held'

/**
 * What {@link ResumableEventStore.replayEventsAfter} throws for an event ID it cannot replay from: the SDK answers
 * the `GET` 500 and reports it through the transport's `onerror`. Branch on `reason`, never on the message.
 */
export class RefusedEventIdError extends Error {
  override readonly name = 'RefusedEventIdError'
  /** The `Last-Event-ID` refused. */
  readonly eventId: string
  readonly reason: RefusedEventIdReason

  constructor(eventId: string, reason: RefusedEventIdReason) {
    super(`Last-Event-ID refused (${reason}): ${explanation(reason)}`)
    this.eventId = eventId
    this.reason = reason
  }
}

function explanation(reason: RefusedEventIdReason): string {
  switch (reason) {
    case 'malformed':
      return 'not an event ID of a ResumableEventStore'
    case 'foreign':
      return 'issued by another store (another session, or a process that kept its events in memory)'
    case 'not-held':
      return 'the events after it are no longer held (evicted, expired or never stored)'
  }
}

// An event ID is `<nonce>.<stream>.<seq>`: the store's nonce (16 base64url characters), the stream's number in the
// store and the event's number in the stream, in decimal without leading zeros. Why each part:
// - The nonce, because numbers start again in every store: without it, an ID of another session's store, or of
//   this session's store before a restart that lost it, would name some other event here and be replayed from
//   the wrong place. With it, such an ID is refused (docs/server.md#event-ids).
// - The stream's number rather than the SDK's stream ID: the spec asks that an ID encode its stream (2025-11-25),
//   and a number is short and always a valid header value, whatever string the server uses as a stream ID.
// - The event's number, increasing in its stream: an ID's position is read off the ID, and a later ID of a
//   stream is longer, or as long and greater, which lets a client tell a new event without a look-up.
const eventIdPattern = /^([A-Za-z0-9_-]{16})\.([1-9]\d{0,14})\.([1-9]\d{0,14})$/

interface Position {
  nonce: string
  stream: number
  seq: number
}

function parse(eventId: string): Position | undefined {
  const match = eventIdPattern.exec(eventId)
  if (match === null) return undefined
  return {nonce: match[1]!, stream: Number(match[2]), seq: Number(match[3])}
}

const where = 'ResumableEventStore'

function checkLog(log: unknown): EventLog {
  if (log === undefined) return new MemoryEventLog()
  const methods = ['append', 'after', 'clear'] as const
  if (
    typeof log !== 'object' ||
    log === null ||
    methods.some((method) => typeof (log as Record<string, unknown>)[method] !== 'function')
  ) {
    throw new TypeError(
      `ResumableEventStore: options.log must be an EventLog (${methods.join(', ')}): a MemoryEventLog or a RedisEventLog`,
    )
  }
  return log as EventLog
}

/**
 * The SDK's `EventStore` (v1 `@modelcontextprotocol/sdk` and v2 `@modelcontextprotocol/server`), one per session:
 * the SDK names every session's standalone stream `_GET_stream` and never tells the store the session, so a store
 * shared by sessions would mix their standalone streams.
 *
 * - `storeEvent` gives each event an ID naming this store and its stream
 *   ([event IDs](https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/server.md#event-ids)).
 * - `getStreamIdForEventId` names the stream of an ID it can replay from, and nothing for any other: the SDK then
 *   answers the `GET` 400 (`Invalid event ID format`), which a client reads as its cursor refused.
 * - `replayEventsAfter` sends the events of that stream after that ID, and throws {@link RefusedEventIdError} for
 *   an ID it cannot replay from (the SDK answers 500): never a silent 200.
 *
 * Operations run one at a time, in the order called: an event stored while a replay runs is stored after it,
 * once the SDK has attached the resumed connection, so it goes out live instead of being missed by both.
 *
 * @example
 * ```ts
 * const transport = new WebStandardStreamableHTTPServerTransport({
 *   sessionIdGenerator: () => crypto.randomUUID(),
 *   eventStore: new ResumableEventStore(),
 * })
 * ```
 */
export class ResumableEventStore {
  readonly #log: EventLog
  readonly #bounds: EventBounds
  #tail: Promise<unknown> = Promise.resolve()
  readonly #metrics: EventStoreMetrics = {
    storedEvents: 0,
    evictedEvents: 0,
    streamResumptions: 0,
    replayedEvents: 0,
    refusedEventIds: 0,
  }

  constructor(options: ResumableEventStoreOptions = {}) {
    checkKeys(options, ['log', 'maxBytes', 'maxAgeMs'], where)
    this.#bounds = {
      maxBytes: positiveInteger(options.maxBytes, 1_048_576, where, 'maxBytes'),
      maxAgeMs: positiveInteger(options.maxAgeMs, 600_000, where, 'maxAgeMs'),
    }
    this.#log = checkLog(options.log)
  }

  /** A copy of the counters. */
  get metrics(): EventStoreMetrics {
    return {...this.#metrics}
  }

  storeEvent(streamId: string, message: JsonRpcMessage): Promise<string> {
    return this.#run(async () => {
      const {nonce, stream, seq, evicted} = await this.#log.append(
        streamId,
        JSON.stringify(message),
        Date.now(),
        this.#bounds,
      )
      this.#metrics.storedEvents++
      this.#metrics.evictedEvents += evicted
      return `${nonce}.${stream}.${seq}`
    })
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#run(async () => (await this.#find(eventId, false)).held?.streamId)
  }

  replayEventsAfter(
    lastEventId: string,
    {send}: {send: (eventId: string, message: JsonRpcMessage) => Promise<void>},
  ): Promise<string> {
    return this.#run(async () => {
      const {held, reason} = await this.#find(lastEventId, true)
      if (held === undefined) throw new RefusedEventIdError(lastEventId, reason)
      const prefix = lastEventId.slice(0, lastEventId.lastIndexOf('.') + 1)
      this.#metrics.streamResumptions++
      for (const event of held.events) {
        await send(`${prefix}${event.seq}`, JSON.parse(event.data) as JsonRpcMessage)
        this.#metrics.replayedEvents++
      }
      return held.streamId
    })
  }

  /** Drops every event (for a session that ended: a `DELETE`, or its expiry); later IDs are new ones. */
  clear(): Promise<void> {
    return this.#run(() => this.#log.clear())
  }

  async #find(eventId: string, withEvents: boolean): Promise<{held: Held | undefined; reason: RefusedEventIdReason}> {
    const position = parse(eventId)
    if (position === undefined) return this.#refused('malformed')
    const {nonce, held, evicted} = await this.#log.after(
      position.stream,
      position.seq,
      Date.now(),
      this.#bounds,
      withEvents,
    )
    this.#metrics.evictedEvents += evicted
    // An ID of another log is refused even when this one holds the same numbers.
    if (nonce !== position.nonce) return this.#refused(nonce === undefined ? 'not-held' : 'foreign')
    return held === undefined ? this.#refused('not-held') : {held, reason: 'not-held'}
  }

  #refused(reason: RefusedEventIdReason): {held: undefined; reason: RefusedEventIdReason} {
    this.#metrics.refusedEventIds++
    return {held: undefined, reason}
  }

  /** Runs `operation` after every one called before it, whether they succeeded or not. */
  #run<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(operation)
    this.#tail = result.catch(() => {})
    return result
  }
}
