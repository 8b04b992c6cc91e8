import {usableCursor, type ReconnectBranch, type ReconnectInput} from '../policy/decision.ts'
import type {TransportError} from '../errors.ts'
import {limitExceeded, type StreamKind, type TransportEvent} from '../events.ts'
import {isHeaderValue, type Limits} from '../policy/limits.ts'
import type {CallRecord} from '../events.ts'
import type {StreamRecord} from '../persistence/records.ts'
import {moment} from '../delivery/server-requests.ts'
import {ChildAbort} from '../policy/abort.ts'
import {SeenEventIds} from './seen-ids.ts'

/** Event IDs remembered per stream to drop replayed duplicates. */
const seenEventIds = 1024

/** The caps a stream enforces, and where it reports a breach. */
export interface StreamCaps {
  readonly limits: Pick<Limits, 'maxEventBytes' | 'maxEventIdBytes' | 'dedupeBytes' | 'maxRetryMs'>
  emit(event: TransportEvent): void
}

/** How a stream that has no connection yet starts. */
export type Opening =
  /** The standalone stream, first opened after `notifications/initialized`: a GET without cursor. */
  | 'open'
  /** Re-attaching a held session (a new process, an app-kept session ID): decided like a reconnect, at once. */
  | 'reattach'
  /** A stream that broke, or a previous process's stream: decided like a reconnect, after the stream's wait. */
  | 'resume'

/** How a stream is known before it has a connection. */
export interface StreamInit {
  kind: StreamKind
  /** The wire ID of the request whose answer the stream carries; undefined for the standalone stream. */
  requestId: number | undefined
  /** The request as the app sent it, kept with the cursor so a later process can say whose answer it is. */
  call: CallRecord | undefined
  /** Left by a previous process: its messages were meant for that process's Client. */
  orphan: boolean
  /** The stored position to resume from, and the session that produced it. */
  stored: {record: StreamRecord; sessionId: string} | undefined
  /** Hears each new position of the stream (the SDK's `onresumptiontoken`); must not throw. */
  onCursor?: ((eventId: string) => void) | undefined
  /** Hears that the stream ended, unless the transport closed (the v2 SDK's `onRequestStreamEnd`). */
  onEnd?: (() => void) | undefined
}

/**
 * One SSE stream with its own cursor and `retry`, across all the connections that carry it. It keeps the cursor
 * (docs/design.md#cursor); `usableCursor` says when it may be sent: only inside the session that produced it, only
 * when not empty, and never again once the server refused it. The next event the stream brings makes a new one.
 */
export class Stream {
  readonly key: string
  readonly kind: StreamKind
  readonly requestId: number | undefined
  readonly call: CallRecord | undefined
  readonly orphan: boolean
  readonly #onCursor: ((eventId: string) => void) | undefined
  /** See {@link StreamInit.onEnd}: called as the stream is forgotten, never on `close()`. */
  readonly onEnd: (() => void) | undefined
  /** Aborts this stream alone; aborted too when the transport closes (by OpenStreams). */
  readonly controller = new AbortController()
  /** Event IDs seen lately, bounded in count and in characters (`limits.dedupeBytes`). */
  readonly #seen: SeenEventIds
  readonly #caps: StreamCaps
  #retryMs: number | undefined
  #answered = false
  #refusal: TransportError | undefined
  /** Not before this `Date.now()`, as the last answer's `Retry-After` asked. */
  #retryAfterUntil: number | undefined
  #silentResumes = 0
  /**
   * A stream resumed from a previous process's record: settles once a connection of it has opened, or the stream
   * ended. The answers to the server requests it brought wait for it (docs/design.md#session); undefined otherwise.
   */
  readonly resumed: Promise<void> | undefined
  #opened: (() => void) | undefined
  /** The connection this stream reads now, if any: see {@link connect}. */
  #connection: Connection | undefined
  #lastEventId: string | undefined
  #cursorSession: string | undefined
  #refused = false

  constructor({kind, requestId, call, orphan, stored, onCursor, onEnd}: StreamInit, caps: StreamCaps) {
    this.key = kind === 'standalone' ? 'standalone' : requestKey(requestId!)
    this.kind = kind
    this.requestId = requestId
    this.call = call
    this.orphan = orphan
    this.#onCursor = onCursor
    this.onEnd = onEnd
    this.#lastEventId = stored?.record.lastEventId
    this.#cursorSession = stored?.sessionId
    this.#retryMs = stored?.record.retryMs
    this.#caps = caps
    this.#seen = new SeenEventIds(seenEventIds, caps.limits.dedupeBytes)
    this.#seen.onOverweight = () => this.exceeded('dedupeBytes', undefined)
    if (stored !== undefined) {
      this.resumed = new Promise((resolve) => (this.#opened = resolve))
      this.controller.signal.addEventListener('abort', () => this.opened(), {once: true})
    }
  }

  /** A connection of this stream opened: the server holds it now. */
  opened(): void {
    this.#opened?.()
    this.#opened = undefined
  }

  /** [spec 2025-11-25 transports] the wait before reconnecting this stream, from its own `retry` field. */
  get retryMs(): number | undefined {
    return this.#retryMs
  }

  /** Its request's response was delivered: the stream has nothing more to bring. */
  get answered(): boolean {
    return this.#answered
  }

  /** Why the server last refused this stream's cursor, to say why its request was settled. */
  get refusal(): TransportError | undefined {
    return this.#refusal
  }

  /** The last answer to a GET asked, with `Retry-After`, for `ms` more before the next attempt. */
  retryAfter(ms: number): void {
    this.#retryAfterUntil = Date.now() + ms
  }

  /** How long the last answer's `Retry-After` still asks to wait (0 or less: no more); asked once per attempt. */
  takeRetryAfter(): number {
    const until = this.#retryAfterUntil ?? 0
    this.#retryAfterUntil = undefined
    return until - Date.now()
  }

  /** A batch brought an event that was no duplicate: the silent resumptions in a row start again from none. */
  broughtNews(): void {
    this.#silentResumes = 0
  }

  /**
   * A resumed connection fell silent (`resumeTimeoutMs`) without bringing anything new: how many did in a row,
   * this one included. Past `silentResumesAllowed`, the request is settled (docs/design.md#the-state-machine).
   */
  fellSilent(): number {
    return ++this.#silentResumes
  }

  /**
   * An event with ID `id` arrived in `sessionId`. False: it was seen lately, drop it. True: it is the new
   * position, valid even after a refused one. An ID longer than `maxEventIdBytes` is reported and not remembered,
   * and leaves the stream not resumable until the next valid ID; whether the position is a valid header value is
   * checked once per batch, by {@link settlePosition}, since only a batch's last position can ever be sent back.
   */
  arrived(id: string, sessionId: string | undefined): boolean {
    let position = id
    // [WHATWG SSE] an empty `id:` resets the cursor; the stream is then not resumable until the next ID.
    if (id.length > this.#caps.limits.maxEventIdBytes) {
      this.exceeded('maxEventIdBytes', id.length)
      position = ''
    } else if (id !== '' && !this.#seen.addIfNew(id)) return false
    this.#lastEventId = position
    this.#cursorSession = sessionId
    this.#refused = false
    // The app's tokens are checked one by one: it may store any of them and send it back. An empty one is no
    // header value.
    // Stryker disable next-line ConditionalExpression: the absent callback throws inside the try
    if (this.#onCursor !== undefined && isHeaderValue(position)) {
      try {
        this.#onCursor(position)
      } catch {
        // The app's callback; its failure is not the stream's.
      }
    }
    return true
  }

  /**
   * The events of a batch have arrived: a position that is no header value (RFC 9110) can never be sent back as
   * `Last-Event-ID`, so it is reported (as over `maxEventIdBytes`) and the stream is not resumable until the next
   * valid ID. Checking here rather than per event keeps the check off the per-event path.
   */
  settlePosition(): void {
    const id = this.#lastEventId
    // Stryker disable next-line ConditionalExpression: isHeaderValue(undefined) is true
    if (id === undefined || id === '' || isHeaderValue(id)) return
    this.exceeded('maxEventIdBytes', id.length)
    this.#lastEventId = ''
  }

  /** [spec 2025-11-25 transports] the server's `retry` for this stream, cut to `limits.maxRetryMs` (reported). */
  setRetry(retryMs: number): void {
    const max = this.#caps.limits.maxRetryMs
    if (retryMs > max) this.exceeded('maxRetryMs', retryMs)
    this.#retryMs = Math.min(retryMs, max)
  }

  /** Reports that something this stream brought went past `limit`. */
  exceeded(limit: keyof StreamCaps['limits'], size: number | undefined): void {
    this.#caps.emit(
      limitExceeded(limit, this.#caps.limits[limit], {size, stream: this.kind, requestId: this.requestId}),
    )
  }

  /** The server refused the cursor it was sent: that cursor is never sent again. */
  refuse(error: TransportError): void {
    this.#refused = true
    this.#refusal = error
  }

  /** The reconnect decision chose a path without the cursor: it is of no further use. */
  dropCursor(): void {
    this.#lastEventId = this.#cursorSession = undefined
  }

  /** The `Last-Event-ID` this stream may send to `sessionId`, if any (the cursor rule, `usableCursor`). */
  cursorFor(sessionId: string): string | undefined {
    const {cursor, cursorRejected} = this.cursorFacts()
    return usableCursor(cursor, cursorRejected, sessionId)
  }

  /** What the reconnect decision needs to know of the cursor. */
  cursorFacts(): Pick<ReconnectInput, 'cursor' | 'cursorRejected'> {
    const lastEventId = this.#lastEventId
    return {
      // Stryker disable next-line ConditionalExpression: a cursor of no session matches no session
      cursor: lastEventId === undefined ? undefined : {sessionId: this.#cursorSession, lastEventId},
      cursorRejected: this.#refused,
    }
  }

  /** What a restarted process could resume from, in `sessionId`; undefined: nothing (its record goes). */
  persistable(sessionId: string): StreamRecord | undefined {
    const lastEventId = this.cursorFor(sessionId)
    if (lastEventId === undefined || this.#answered) return undefined
    return {lastEventId, retryMs: this.#retryMs, call: this.call}
  }

  /** Its request's response was delivered, on this stream or another: the connection it reads now, if any, ends. */
  markAnswered(): void {
    this.#answered = true
    this.endConnection('answered')
  }

  /** Ends the connection this stream has now (its GET on its way, or read), if any; the stream lives on. */
  endConnection(why: ConnectionEnd): void {
    this.#connection?.end(why)
  }

  /**
   * A connection of this stream, from its request (sent at `sentAt`, a `moment()`: now unless it went before) to the
   * end of its reading: see {@link Connection}.
   */
  connect(branch: ReconnectBranch | 'open', lastEventId: string | undefined, sentAt = moment()): Connection {
    const connection: Connection = new Connection(this, branch, lastEventId, sentAt, () => {
      if (this.#connection === connection) this.#connection = undefined
    })
    this.#connection = connection
    return connection
  }

  describe(): string {
    return this.kind === 'standalone' ? 'the standalone GET stream' : `the response stream of request ${this.requestId}`
  }
}

/** Why a connection ended while its stream lives on (see {@link Connection.end}). */
export type ConnectionEnd =
  /** The standalone stream re-attaches without its cursor. */
  | 'reattach'
  /** Resumed, it brought nothing within `resumeTimeoutMs` (src/streams/silence.ts). */
  | 'silent'
  /** The stream's request was answered, on this stream or another: nothing more to read. */
  | 'answered'

/**
 * One HTTP response carrying a stream, from its request to the end of its reading, and how it was opened. Its
 * `signal` aborts with the stream's, or alone by `end` while the stream lives on, and is what fetch and reading hang
 * their listeners on: they go with the connection, and the stream's own signal, which lives across every reconnect,
 * holds one listener per connection while it lasts and none after. (fetch's listener on the signal it is given goes
 * only once its request is garbage-collected: on one long-lived signal, they piled up by the thousand.)
 */
export class Connection extends ChildAbort {
  readonly stream: Stream
  readonly branch: ReconnectBranch | 'open'
  /** The `Last-Event-ID` it was sent with, if any: what arrives then is a replay. */
  readonly lastEventId: string | undefined
  /** Why it ended alone, if it did. */
  endedBy: ConnectionEnd | undefined
  /** When it was requested, in the order answers are taken in (see `asksAgain`). */
  readonly sentAt: number
  readonly #released: () => void

  constructor(
    stream: Stream,
    branch: ReconnectBranch | 'open',
    lastEventId: string | undefined,
    sentAt: number,
    released: () => void,
  ) {
    super(stream.controller.signal)
    this.stream = stream
    this.branch = branch
    this.lastEventId = lastEventId
    this.sentAt = sentAt
    this.#released = released
  }

  /** Sent with `Last-Event-ID`: what arrives is a replay. */
  get resumed(): boolean {
    return this.lastEventId !== undefined
  }

  /** Attached without `Last-Event-ID` to a session: the server re-emits its pending requests on it. */
  get reemits(): boolean {
    return this.branch === 'session-resumption'
  }

  /** Ends this connection alone, saying why; the stream lives on. Nothing once it is aborted already. */
  end(why: ConnectionEnd): void {
    if (this.signal.aborted) return
    this.endedBy = why
    this.abort()
  }

  /** The connection is over: its listener leaves the stream's signal. */
  override release(): void {
    super.release()
    this.#released()
  }
}

export function requestKey(wireId: number): string {
  return `request:${wireId}`
}

/** The wire ID of a stored request stream's key, if `key` is one. */
export function wireIdOfKey(key: string): number | undefined {
  // Digits only: `Number('')` is 0, so a bare `request:` would otherwise name request 0.
  const digits = /^request:(\d+)$/.exec(key)?.[1]
  // Without a match, `Number(undefined)` is NaN: no safe integer either.
  const wireId = Number(digits)
  return Number.isSafeInteger(wireId) ? wireId : undefined
}
