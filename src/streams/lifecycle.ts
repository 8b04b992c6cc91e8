import {isAuthorizationFailure} from '../wire/auth.ts'
import {firstBackoff, retryAfterMs, retryWithBackoff, sleep} from '../policy/backoff.ts'
import {classifyStreamAnswer, decideReconnect, type ReconnectBranch} from '../policy/decision.ts'
import {abortedError, asError, isTransportError, TransportError} from '../errors.ts'
import type {TransportEvent, TransportMetrics} from '../events.ts'
import {discard, exchange, httpError, isEventStream, type HttpClient} from '../wire/http.ts'
import type {ResolvedOptions} from '../options.ts'
import type {OpenStreams} from './open-streams.ts'
import type {ReadOutcome} from './reader.ts'
import {silentResumesAllowed} from './silence.ts'
import type {Standalone} from './standalone.ts'
import type {Connection, Opening, Stream} from './stream.ts'

/*
 * The life of one stream, from its first connection to its end: the reconnect state machine
 * (docs/design.md#the-state-machine). Every box is a step below; every arrow is named after what happened.
 *
 *   follow(stream, body): a POST answered with an event stream      open(stream, 'open' | 'reattach' | 'resume')
 *         │                                                                   │
 *         ▼                                                                   ▼
 *   ┌─► READING ── completed ───────────────────────────────────────► ENDED completed
 *   │      │  ──── silent (resumed, no event within resumeTimeoutMs) ──► WAITING: resumed again from the newest cursor
 *   │      │         (a GET per resumeTimeoutMs of silence); the 4th silence in a row with nothing new ──► ENDED silent
 *   │      │  ──── broke-after-progress ──► a new series of attempts: WAITING, attempt 1
 *   │      └───── broke-before-progress ──► FAILED ATTEMPT
 *   │
 *   │   WAITING ── the stream's `retry`, else the backoff ──► DECIDING
 *   │   DECIDING (decideReconnect, from what is held now)
 *   │      ├── stream-resumption, or session-resumption of the standalone stream ──► CONNECTING
 *   │      └── session-resumption of a request stream, new-session ──► ENDED abandoned (its request settled)
 *   │   CONNECTING: GET, its answer classified (classifyStreamAnswer)
 *   └───── open
 *          ├── cursor-refused ──► DECIDING at once, without that cursor
 *          ├── transient (408, 425, 429, 5xx, network failure; Retry-After honoured) ──► FAILED ATTEMPT
 *          ├── session-expired ──► ENDED: the session ends, and every stream with it
 *          ├── not-offered, ended-by-server ──► ENDED (its request settled outcome-unknown)
 *          └── unauthorized, refused (any other status) ──► ENDED given-up
 *   FAILED ATTEMPT ── attempts and maxOutageMs left ──► WAITING (the backoff grows); none left ──► ENDED given-up
 *   ENDED given-up, for the standalone stream ──► DEGRADED: one attempt every maxDelayMs, or at once when a
 *          request succeeds, until a connection opens (stream-recovered) ──► READING
 *   READING or CONNECTING, the standalone stream, when a request's answer can no longer arrive (wantReemission),
 *          or 250 ms into the resumed connection of a re-attached session ──► DECIDING at once, without the cursor:
 *          RE-ATTACHING
 *
 * An abort (close, cancellation, the session ending) stops it at any step, silently: whoever aborted accounts for it.
 */

/** How a stream ended, named after what happened. */
type Ending =
  | {reason: 'completed' | 'abandoned'}
  | {reason: 'silent' | 'not-offered' | 'ended-by-server' | 'given-up'; error: TransportError}

/** Where a stream is after a connection: ended, broken after progress, or to re-attach without its cursor at once. */
type Step = Ending | 'broke' | 'reattach'

/** What the next connection sends, or the stream's end. */
type Plan = {branch: ReconnectBranch | 'open'; lastEventId: string | undefined} | Ending

/** What the state machine needs from the transport. */
export interface LifecycleHost {
  readonly http: HttpClient
  readonly options: Pick<ResolvedOptions, 'reconnect' | 'resumeTimeoutMs' | 'limits'>
  readonly metrics: TransportMetrics
  sessionId(): string | undefined
  protocolVersion(): string | undefined
  /** Reads one connection (docs/design.md#reading-a-connection). */
  read(connection: Connection, body: ReadableStream<Uint8Array>): Promise<ReadOutcome>
  /** The open streams: where cursors are stored (a refused one's record is deleted), and the standalone one. */
  readonly streams: Pick<OpenStreams, 'saveCursor' | 'get'>
  /** Settles `stream`'s request, if it carries one, with `error`. */
  settle(stream: Stream, error: TransportError): void
  /** [spec transports, session management] the session is gone: end it, report it once. */
  expireSession(error: TransportError): Promise<void>
  /** The standalone stream's policy: when it opens, re-attaches without cursor, degrades. */
  readonly standalone: Pick<
    Standalone,
    'open' | 'notOffered' | 'wantReemission' | 'deciding' | 'connecting' | 'opened' | 'degrade'
  >
  removeStream(stream: Stream): void
  emit(event: TransportEvent): void
  report(error: unknown): void
  track(task: Promise<void>): void
}

export class StreamLifecycle {
  readonly #host: LifecycleHost

  constructor(host: LifecycleHost) {
    this.#host = host
  }

  /** Follows `stream` from its first connection, already open: a POST answered with an event stream. */
  follow(stream: Stream, body: ReadableStream<Uint8Array>, sentAt: number): Promise<void> {
    return this.#run(stream, async () => {
      // Stryker disable next-line StringLiteral: a branch is read only to tell a session resumption
      const connection = stream.connect('open', undefined, sentAt)
      const outcome = await this.#host.read(connection, body).finally(() => connection.release())
      return outcome === 'completed' ? {reason: 'completed'} : 'broke'
    })
  }

  /** Opens `stream`, then follows it to its end. */
  open(stream: Stream, opening: Opening): Promise<void> {
    return this.#run(stream, () => this.#series(stream, opening))
  }

  async #run(stream: Stream, first: () => Promise<Step>): Promise<void> {
    try {
      let step = await this.#settled(stream, first)
      for (;;) {
        // A connection that made progress and broke starts a fresh series: the attempt count is reset.
        if (step === 'broke') step = await this.#settled(stream, () => this.#series(stream, 'resume'))
        // Ended to re-attach without its cursor: at once, not after a backoff.
        else if (step === 'reattach') step = await this.#settled(stream, () => this.#series(stream, 'reattach'))
        // [docs/failures.md] the standalone stream is never abandoned while its session lives.
        else if (step.reason === 'given-up' && stream.kind === 'standalone')
          // Stryker disable next-line StringLiteral: #series tells only 'open' and 'resume' apart
          step = await this.#host.standalone.degrade(stream, step.error, () => this.#series(stream, 'reattach', 1))
        else break
      }
      this.#end(stream, step)
    } catch {
      // Closed, cancelled or expired: already accounted for by whoever aborted it.
    } finally {
      this.#host.removeStream(stream)
    }
  }

  /** How `run` went: a failure that ran out of attempts is the stream given up; an abort is thrown on. */
  async #settled(stream: Stream, run: () => Promise<Step>): Promise<Step> {
    try {
      return await run()
    } catch (error) {
      stream.controller.signal.throwIfAborted()
      return this.#givenUp(stream, error)
    }
  }

  /**
   * One series of attempts to reconnect `stream` (p-retry spaces failed attempts). Resolves 'broke' when a
   * connection made progress and broke, or how the stream ended; rejects when attempts run out.
   */
  #series(stream: Stream, opening: Opening, attempts?: number): Promise<Step> {
    const {signal} = stream.controller
    const policy =
      attempts === undefined ? this.#host.options.reconnect : {...this.#host.options.reconnect, maxAttempts: attempts}
    return retryWithBackoff(
      async (attempt) => {
        // [spec 2025-11-25 transports] the client MUST wait the stream's `retry` before reconnecting; without one,
        // the first reconnect of a series waits a first backoff (p-retry spaces the later ones).
        if (opening === 'resume' || attempt > 1) {
          const wait = stream.retryMs ?? (attempt === 1 ? firstBackoff(policy) : 0)
          if (wait > 0) await sleep(wait, signal)
        }
        // [RFC 9110 10.2.3] what the last answer's Retry-After asked for, beyond the backoff already waited.
        const retryAfter = stream.takeRetryAfter()
        // Stryker disable next-line EqualityOperator: a wait of 0 ms is none
        if (retryAfter > 0) await sleep(retryAfter, signal)
        let plan: Plan =
          opening === 'open' && attempt === 1 ? {branch: 'open', lastEventId: undefined} : this.#decide(stream)
        for (;;) {
          if ('reason' in plan) return plan
          const step = await this.#connect(stream, plan, attempt)
          if (step !== 'cursor-refused') return step
          // Decided again at once, without that cursor: a refused cursor is never sent again (Stream.cursorFor), and a
          // 4xx to a GET without one is no refusal of a cursor, so this turns once at most.
          plan = this.#decide(stream)
        }
      },
      policy,
      signal,
      (error, attempt) =>
        this.#host.emit({type: 'reconnect-failed', stream: stream.kind, requestId: stream.requestId, attempt, error}),
    )
  }

  /** DECIDING: what the next connection of `stream` sends, from what is held now, or how the stream ends. */
  #decide(stream: Stream): Plan {
    const host = this.#host
    // Answered on another stream (the standalone one, a replay) while this one waited: nothing left to resume.
    if (stream.answered) return {reason: 'completed'}
    host.standalone.deciding(stream)
    const decision = decideReconnect({sessionId: host.sessionId(), ...stream.cursorFacts(), stream: stream.kind})
    if (decision.branch === 'stream-resumption') return {branch: decision.branch, lastEventId: decision.lastEventId}
    // Stryker disable next-line ConditionalExpression,CallExpression: a dropped cursor is never sent anyway
    if (decision.dropCursor) stream.dropCursor()
    if (decision.settleRequest) {
      host.standalone.wantReemission()
      // The answer was on this stream and only a cursor could have brought it back.
      const why = stream.refusal?.message ?? 'the stream broke before any event ID'
      host.settle(
        stream,
        outcomeUnknown(`${stream.describe()}: ${why}; the request was not sent again`, stream.refusal),
      )
    }
    if (decision.branch === 'session-resumption' && stream.kind === 'standalone') {
      return {branch: decision.branch, lastEventId: undefined}
    }
    // The session's server requests come back on a fresh standalone stream, attached without a cursor.
    // Stryker disable next-line StringLiteral: the first GET without a cursor clears the flag
    if (decision.branch === 'session-resumption') host.standalone.open('reattach', undefined)
    return {reason: 'abandoned'}
  }

  /** CONNECTING: one GET for `stream`, then READING when it opened. Throws for a failed attempt. */
  async #connect(
    stream: Stream,
    {branch, lastEventId}: Exclude<Plan, Ending>,
    attempt: number,
  ): Promise<Step | 'cursor-refused'> {
    const host = this.#host
    const sessionId = host.sessionId()
    const headers = {'mcp-session-id': sessionId, 'last-event-id': lastEventId}
    const {kind, requestId} = stream
    host.standalone.connecting(stream, lastEventId)
    if (branch === 'open') {
      host.emit({type: 'stream-opened', stream: kind, requestId, headers})
    } else {
      if (branch === 'stream-resumption') host.metrics.streamResumptions++
      if (branch === 'session-resumption') host.metrics.sessionResumptions++
      host.emit({type: 'reconnect', stream: kind, requestId, branch, attempt, headers, call: stream.call})
    }
    const connection = stream.connect(branch, lastEventId)
    return this.#opened(connection, sessionId, lastEventId).finally(() => connection.release())
  }

  /** The GET of `connection`, its answer classified, then READING when it opened. Throws for a failed attempt. */
  async #opened(
    connection: Connection,
    sessionId: string | undefined,
    lastEventId: string | undefined,
  ): Promise<Step | 'cursor-refused'> {
    const host = this.#host
    const {stream} = connection
    const {kind, requestId} = stream
    // [spec 2025-11-25 transports] resumption is always a GET with Last-Event-ID, whatever opened the stream.
    let response: Response
    try {
      response = await exchange(host.http, {
        method: 'GET',
        sessionId,
        protocolVersion: host.protocolVersion(),
        lastEventId,
        signal: connection.signal,
      })
    } catch (error) {
      // Ended alone while its GET was on its way: to re-attach at once, or answered elsewhere.
      if (connection.endedBy !== undefined)
        return connection.endedBy === 'reattach' ? 'reattach' : {reason: 'completed'}
      // A redirect the policy refuses (code `http`) would be refused again: no further attempt.
      if (isTransportError(error, 'http')) return this.#givenUp(stream, error)
      // The authorization flow failed (the user must authorize): running it again would not help. Said once.
      if (isAuthorizationFailure(error)) {
        if (kind === 'request') host.report(error)
        return this.#givenUp(stream, error)
      }
      throw error
    }
    const {status} = response
    const answer = classifyStreamAnswer({
      status,
      eventStream: isEventStream(response.headers.get('content-type')),
      sentSession: sessionId !== undefined,
      sentCursor: lastEventId !== undefined,
    })
    const what = `GET ${stream.describe()}`
    if (answer === 'open') {
      stream.opened()
      host.standalone.opened(stream)
      return this.#read(connection, response.body!)
    }
    if (answer === 'transient') {
      const wait = retryAfterMs(response.headers.get('retry-after'), host.options.limits.maxRetryMs)
      stream.retryAfter(wait ?? 0)
      throw await httpError(host.http, response, what)
    }
    if (answer === 'refused' || answer === 'unauthorized')
      return this.#givenUp(stream, await httpError(host.http, response, what))
    discard(response)
    switch (answer) {
      case 'session-expired':
        await host.expireSession(
          new TransportError('session-expired', `Session ${sessionId} has expired (HTTP ${status} on GET)`, {status}),
        )
        // The session's end aborted its streams, this one too: it ends silently, as any aborted stream.
        throw abortedError(stream.controller.signal)
      case 'cursor-refused': {
        const error = new TransportError(
          'resumption-rejected',
          `The server refused Last-Event-ID ${JSON.stringify(lastEventId)} of ${stream.describe()} (HTTP ${status})`,
          {status},
        )
        stream.refuse(error)
        // Its record goes too: a later process must not send it again.
        host.track(host.streams.saveCursor(stream))
        host.emit({type: 'cursor-rejected', stream: kind, requestId, lastEventId: lastEventId!, status})
        // A request stream reports it through its request; the standalone stream has no caller.
        if (kind === 'standalone') host.report(error)
        return 'cursor-refused'
      }
      case 'not-offered':
        host.standalone.notOffered(stream)
        return {
          reason: 'not-offered',
          error: outcomeUnknown(
            `${stream.describe()} cannot be resumed: the server offers no GET stream (HTTP ${status})`,
            undefined,
            status,
          ),
        }
      case 'ended-by-server':
        return {
          reason: 'ended-by-server',
          error: outcomeUnknown(
            `The server ended ${stream.describe()} before answering (HTTP ${status})`,
            undefined,
            status,
          ),
        }
    }
  }

  /** READING a reconnected connection. Throws for a failed attempt: it brought nothing new. */
  async #read(connection: Connection, body: ReadableStream<Uint8Array>): Promise<Step> {
    const {stream} = connection
    const outcome = await this.#host.read(connection, body)
    if (connection.endedBy === 'reattach') return 'reattach'
    switch (outcome) {
      case 'completed':
        return {reason: 'completed'}
      case 'broke-after-progress':
        return 'broke'
      case 'broke-before-progress':
        throw new TransportError('network', `${stream.describe()} closed before any new event`)
      case 'silent': {
        // [SDK interop] server-everything's event store (2026.8.31) maps a resumed connection to no stream: it replays,
        // then the answer is stored and sent nowhere. Resumed again from the newest cursor, it replays what came since.
        const silences = stream.fellSilent()
        if (silences <= silentResumesAllowed) return 'broke'
        // [SDK interop] the SDK's example InMemoryEventStore answers a Last-Event-ID it does not know with 200 and a
        // stream that never carries anything: waiting longer would hang the request for ever.
        const why = `${silences} resumptions in a row brought nothing new within ${this.#host.options.resumeTimeoutMs} ms, the last from Last-Event-ID ${JSON.stringify(connection.lastEventId)}`
        return {reason: 'silent', error: outcomeUnknown(`${stream.describe()}: ${why}; the request was not sent again`)}
      }
    }
  }

  #givenUp(stream: Stream, error: unknown): Ending {
    const cause = asError(error)
    return {
      reason: 'given-up',
      error: outcomeUnknown(
        `${stream.describe()} could not be resumed: ${cause.message}; the request was not sent again`,
        cause,
      ),
    }
  }

  /** ENDED: what the end means for the stream's request, or for the app when it is the standalone stream. */
  #end(stream: Stream, ending: Ending): void {
    const host = this.#host
    // The standalone stream ends with an error only when the server offers it no more (not-offered, ended-by-server):
    // nothing to report (given up, it degrades instead of ending), nothing to settle, and a later one attaches without
    // a cursor anyway.
    if ('error' in ending) {
      // Ended for want of the user's authorization: re-attaching now would only meet it again (and report it again).
      host.standalone.wantReemission(!isAuthorizationFailure(ending.error.cause))
      host.settle(stream, ending.error)
    }
    host.emit({type: 'stream-closed', stream: stream.kind, requestId: stream.requestId, reason: ending.reason})
  }
}

/** The request may have run and its answer cannot arrive: the app decides whether running it again is safe. */
function outcomeUnknown(message: string, cause?: unknown, status?: number): TransportError {
  return new TransportError('outcome-unknown', message, {cause, status})
}
