import {TransportError} from '../errors.ts'
import type {SessionRecords} from '../persistence/records.ts'
import {requestKey, Stream, type StreamCaps, type StreamInit} from './stream.ts'

/** The abort reason of a stream that ended: shared, as it is thrown on every request's path. */
const streamOver = new TransportError('aborted', 'The stream is over')
/**
 * How long a cursor that delivered nothing (a priming event, an ID-only ping) may wait for its store write: a
 * request answered meanwhile writes nothing at all, and a crash loses at most this much of a stream that has
 * delivered nothing yet (docs/design.md#what-is-persisted).
 */
const quietCursorWriteMs = 250

/**
 * The streams of the transport, by key ('standalone' or 'request:<wire ID>'), and the store records of their
 * cursors: one record per stream, so that a cursor write costs one stream, however many are open.
 */
export class OpenStreams {
  readonly #records: SessionRecords
  readonly #sessionId: () => string | undefined
  readonly #track: (task: Promise<void>) => void
  readonly #caps: StreamCaps
  readonly #streams = new Map<string, Stream>()
  /**
   * Streams whose record may exist in the store, and the session it was written in: only those have one to delete,
   * and a record of an ended session went with it (a next session's stream of the same key has none).
   */
  readonly #stored = new Map<string, string | undefined>()
  /** Streams whose cursor write {@link saveCursorSoon} put off: one timer writes them all, however many they are. */
  readonly #soon = new Set<Stream>()
  #soonTimer: ReturnType<typeof setTimeout> | undefined
  /** The transport lifetime the streams follow, through one listener for all of them. */
  #lifetime: AbortSignal | undefined

  constructor(
    records: SessionRecords,
    sessionId: () => string | undefined,
    track: (task: Promise<void>) => void,
    caps: StreamCaps,
  ) {
    this.#records = records
    this.#caps = caps
    this.#sessionId = sessionId
    this.#track = track
  }

  /**
   * A new stream, aborted with `lifetime`. One listener on `lifetime` aborts every open stream: a listener per
   * stream would cost each one more than the fan-out, and past ten of them Node warns of a leak.
   */
  add(lifetime: AbortSignal, init: StreamInit): Stream {
    if (this.#lifetime !== lifetime) {
      this.#lifetime = lifetime
      lifetime.addEventListener(
        'abort',
        () => {
          // Not kept once over: its reason (the error close() made) holds the stack it was made on
          // until it is formatted.
          this.#lifetime = undefined
          this.abortAll(lifetime.reason)
        },
        {once: true},
      )
    }
    const stream = new Stream(init, this.#caps)
    this.#streams.set(stream.key, stream)
    if (init.stored !== undefined) this.#stored.set(stream.key, this.#sessionId())
    return stream
  }

  get(key: string): Stream | undefined {
    return this.#streams.get(key)
  }

  has(key: string): boolean {
    return this.#streams.has(key)
  }

  /** The answer to request `wireId` was delivered, on its stream or another: its stream has nothing more to bring. */
  markAnswered(wireId: number): void {
    const stream = this.#streams.get(requestKey(wireId))
    stream?.markAnswered()
  }

  /** Aborts every stream with `reason`. */
  abortAll(reason: unknown): void {
    for (const stream of this.#streams.values()) stream.controller.abort(reason)
  }

  /** Stores `stream`'s cursor as it is now (its record goes once it has nothing valid); coalesced per stream. */
  saveCursor(stream: Stream): Promise<void> {
    this.#cancelSoon(stream)
    const sessionId = this.#sessionId()
    // Stryker disable next-line ConditionalExpression: without a session there is no cursor nor record
    if (sessionId === undefined) return Promise.resolve()
    if (stream.persistable(sessionId) === undefined && this.#recordSession(stream) === undefined)
      return Promise.resolve()
    this.#stored.set(stream.key, sessionId)
    return this.#records.saveStream(sessionId, stream.key, () => stream.persistable(sessionId))
  }

  /** The current session, when the store may hold a record of `stream` in it. */
  #recordSession(stream: Stream): string | undefined {
    const sessionId = this.#sessionId()
    return this.#stored.get(stream.key) === sessionId ? sessionId : undefined
  }

  /** Stores `stream`'s cursor a little later, unless a write or the stream's end comes first. */
  saveCursorSoon(stream: Stream): void {
    this.#soon.add(stream)
    this.#soonTimer ??= setTimeout(() => {
      this.#soonTimer = undefined
      for (const due of this.#soon) this.#track(this.saveCursor(due))
    }, quietCursorWriteMs)
  }

  /** Stores now a cursor write that {@link saveCursorSoon} put off: the connection broke, and a crash now would lose it. */
  flushSoon(stream: Stream): void {
    if (this.#soon.has(stream)) this.#track(this.saveCursor(stream))
  }

  /**
   * Forgets `stream` and aborts it. Its record goes with it, unless the transport is `closing` and the stream was
   * not answered: a stream cut short by `close()` keeps its cursor in the store, so the next process resumes from it.
   */
  remove(stream: Stream, closing: boolean): void {
    if (this.#streams.get(stream.key) !== stream) return
    this.#streams.delete(stream.key)
    stream.controller.abort(streamOver)
    const waiting = this.#cancelSoon(stream)
    if (!closing) stream.onEnd?.()
    if (closing && !stream.answered) {
      if (waiting) this.#track(this.saveCursor(stream))
      return
    }
    const sessionId = this.#recordSession(stream)
    this.#stored.delete(stream.key)
    if (sessionId === undefined) return
    this.#track(this.#records.saveStream(sessionId, stream.key, () => undefined))
  }

  #cancelSoon(stream: Stream): boolean {
    if (!this.#soon.delete(stream)) return false
    if (this.#soon.size === 0) {
      clearTimeout(this.#soonTimer)
      this.#soonTimer = undefined
    }
    return true
  }
}
