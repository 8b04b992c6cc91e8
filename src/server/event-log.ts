/**
 * The seam between {@link ResumableEventStore} and where its events live (docs/server.md#logs): one log per
 * store, numbered streams of numbered events, bounded as the store asks. `MemoryEventLog` here (no Node built-in:
 * Workers, Deno, Bun, browsers); `RedisEventLog` in `mcp-resumable-http/server/redis`.
 */

/** How much a log keeps: applied on every call, oldest events first. */
export interface EventBounds {
  /** Every held event's weight summed (its data's characters plus 64 for its numbers, its time and its place in the queues) stays within this. */
  maxBytes: number
  /** An event older than this, in milliseconds, is dropped. */
  maxAgeMs: number
}

/** One event as a log holds it: its number within its stream and its data (the JSON text of the message). */
export interface LoggedEvent {
  seq: number
  data: string
}

/** Where one event went: its stream's number in the log, its own number in that stream. */
export interface Appended {
  /** The log's nonce (see {@link EventLog}). */
  nonce: string
  stream: number
  seq: number
  /** How many events the bounds dropped to make room (this one included, when it alone is over `maxBytes`). */
  evicted: number
}

/** What the log says of a position. */
export interface Lookup {
  /** The log's nonce, or undefined while it holds nothing. */
  nonce: string | undefined
  /** What the position replays, or undefined when the log does not hold every event after it. */
  held: Held | undefined
  /** How many events the bounds dropped first. */
  evicted: number
}

/** What a position of a stream still replays. */
export interface Held {
  /** The SDK's ID of the stream. */
  streamId: string
  /** The events after the position, in order: empty when asked without them. */
  events: LoggedEvent[]
}

/**
 * Where a {@link ResumableEventStore} keeps its events. Streams are numbered from 1 in the order they first
 * store an event, events from 1 within their stream; a stream none of whose events is held any more is
 * forgotten, and stores afresh under a new number. Every call first drops what `bounds` no longer allows.
 *
 * A log has a nonce, random, made by its first append and kept with the events (a restarted process reads it back
 * from Redis), so that the event IDs of two logs never meet.
 */
export interface EventLog {
  /** Appends one event to the stream `streamId`, at time `now`. */
  append(streamId: string, data: string, now: number, bounds: EventBounds): Promise<Appended>
  /**
   * The stream numbered `stream` and its events after `seq`, if the log holds every one of them: `seq` is its
   * last event, or any from the one before its oldest held event on.
   */
  after(stream: number, seq: number, now: number, bounds: EventBounds, withEvents: boolean): Promise<Lookup>
  /** Drops every event and stream, and the nonce. */
  clear(): Promise<void>
}

/** What each event weighs beyond its data: its numbers, its time, its place in the queues. */
export const eventOverhead = 64

interface MemoryEvent {
  stream: MemoryStream
  seq: number
  at: number
  weight: number
  data: string
}

interface MemoryStream {
  id: string
  number: number
  /** The last event number given. */
  last: number
  /** The held events, oldest first, from `head` on. */
  events: MemoryEvent[]
  head: number
}

/** 96 random bits in base64url: 16 characters, none of them a `.`. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12))
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
}

/**
 * An {@link EventLog} in memory: one store's events, gone with the process. No Node built-in.
 */
export class MemoryEventLog implements EventLog {
  #nonce: string | undefined
  #streams = new Map<string, MemoryStream>()
  #numbers = new Map<number, MemoryStream>()
  #streamCount = 0
  /** Every held event, oldest first, from `#head` on: the order in which the bounds drop them. */
  #queue: MemoryEvent[] = []
  #head = 0
  #weight = 0

  append(streamId: string, data: string, now: number, bounds: EventBounds): Promise<Appended> {
    this.#nonce ??= newNonce()
    let stream = this.#streams.get(streamId)
    if (stream === undefined) {
      stream = {id: streamId, number: ++this.#streamCount, last: 0, events: [], head: 0}
      this.#streams.set(streamId, stream)
      this.#numbers.set(stream.number, stream)
    }
    const event: MemoryEvent = {stream, seq: ++stream.last, at: now, weight: data.length + eventOverhead, data}
    stream.events.push(event)
    this.#queue.push(event)
    this.#weight += event.weight
    const nonce = this.#nonce
    return Promise.resolve({nonce, stream: stream.number, seq: event.seq, evicted: this.#evict(now, bounds)})
  }

  after(stream: number, seq: number, now: number, bounds: EventBounds, withEvents: boolean): Promise<Lookup> {
    const evicted = this.#evict(now, bounds)
    const nonce = this.#nonce
    const held = this.#numbers.get(stream)
    // A stream is forgotten with its last held event, so a known one holds at least one.
    const oldest = held?.events[held.head]
    if (held === undefined || oldest === undefined || seq < oldest.seq - 1 || seq > held.last)
      return Promise.resolve({nonce, held: undefined, evicted})
    const events = withEvents
      ? held.events.slice(held.head + seq - oldest.seq + 1).map(({seq: number, data}) => ({seq: number, data}))
      : []
    return Promise.resolve({nonce, held: {streamId: held.id, events}, evicted})
  }

  clear(): Promise<void> {
    this.#nonce = undefined
    this.#streams.clear()
    this.#numbers.clear()
    this.#streamCount = 0
    this.#queue = []
    this.#head = 0
    this.#weight = 0
    return Promise.resolve()
  }

  /** Drops the oldest events while the bounds ask; returns how many. */
  #evict(now: number, bounds: EventBounds): number {
    let evicted = 0
    for (let oldest = this.#queue[this.#head]; oldest !== undefined; oldest = this.#queue[this.#head]) {
      if (this.#weight <= bounds.maxBytes && now - oldest.at <= bounds.maxAgeMs) break
      this.#head++
      this.#weight -= oldest.weight
      evicted++
      const {stream} = oldest
      stream.head++
      if (stream.head === stream.events.length) {
        this.#streams.delete(stream.id)
        this.#numbers.delete(stream.number)
      } else compact(stream)
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
    }
    return evicted
  }
}

/** Lets go of a stream's dropped events once they are most of its array (dropping one by one is O(1)). */
function compact(stream: MemoryStream): void {
  if (stream.head > 64 && stream.head * 2 > stream.events.length) {
    stream.events = stream.events.slice(stream.head)
    stream.head = 0
  }
}
