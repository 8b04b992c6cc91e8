import type {Inbox} from '../delivery/inbox.ts'
import {asError, isTransportError, TransportError} from '../errors.ts'
import type {TransportEvent} from '../events.ts'
import {rpcErrorIn} from '../modern/answers.ts'
import {classifyStreamAnswer} from '../policy/decision.ts'
import type {OpenStreams} from '../streams/open-streams.ts'
import type {Standalone} from '../streams/standalone.ts'
import {discard, exchange, isEventStream, type HttpClient} from '../wire/http.ts'
import {deleteSession} from './post.ts'
import type {Session} from './session.ts'

/** What ending a session needs of the transport. */
export interface EndingHost {
  readonly http: HttpClient
  readonly session: Session
  readonly inbox: Inbox
  readonly streams: OpenStreams
  emit(event: TransportEvent): void
  /** Reports a failure found in the background (`onerror`). */
  report(error: unknown): void
  /** A GET of the session opened a stream of its own: the standalone stream's next connection goes without cursor. */
  readonly standalone: Pick<Standalone, 'wantReemission'>
}

/**
 * How a session ends (docs/design.md#session): the server no longer knows it, the app terminates it (`DELETE`) or
 * forgets it (no request), or a new `initialize` or the era without sessions replaces it. Every way forgets the
 * identity, aborts every stream, settles every pending request and deletes the session's records, so that a next
 * process starts clean.
 */
export class SessionEnding {
  readonly #host: EndingHost

  constructor(host: EndingHost) {
    this.#host = host
  }

  /** Drops the session, its streams and pending requests at once; `cleared`: its records are gone from the store too. */
  end(error: TransportError, expired = false): {settled: number; cleared: Promise<void>} {
    const {session, inbox, streams} = this.#host
    const cleared = expired ? session.expire() : session.end()
    inbox.forgetServerRequests()
    streams.abortAll(error)
    return {settled: inbox.settleAll(error), cleared}
  }

  /** [spec transports, session management] The server no longer knows the session. `background`: found by a stream, so reported. */
  async expire(error: TransportError, background: boolean): Promise<void> {
    const sessionId = this.#host.session.id
    if (sessionId === undefined) return
    const {settled, cleared} = this.end(error, true)
    this.#host.emit({type: 'session-expired', sessionId, settledRequests: settled})
    if (background) this.#host.report(error)
    await cleared
  }

  /**
   * [docs/failures.md#a-session-the-server-no-longer-knows] A POST that carried session `sessionId` was refused 400
   * or 410 (`refusal`): was it the session, or the message? Resolves the status of the session's GET when that
   * refused the session too, else undefined (the message's refusal, or no one can tell). A refusal whose body answers
   * the request (a JSON-RPC error with its ID) is the request's: then no GET is sent.
   */
  async sessionRefused(
    sessionId: string,
    refusal: TransportError,
    requestId: number | undefined,
    signal: AbortSignal,
  ): Promise<number | undefined> {
    if (requestId !== undefined && rpcErrorIn(refusal, requestId) !== undefined) return undefined
    const {http, session} = this.#host
    let response: Response
    try {
      // [spec transports, listening for messages] the one request that carries nothing but the
      // session: a stream or 405.
      response = await exchange(http, {method: 'GET', sessionId, protocolVersion: session.protocolVersion, signal})
    } catch {
      // No answer (a network failure, the request cancelled, the user to authorize): no one can tell.
      return undefined
    }
    discard(response)
    const answer = classifyStreamAnswer({
      status: response.status,
      eventStream: isEventStream(response.headers.get('content-type')),
      sentSession: true,
      sentCursor: false,
    })
    // The session lives. What the server may have put on that stream comes again to one attached without cursor.
    if (answer === 'open') this.#host.standalone.wantReemission()
    return answer === 'session-expired' ? response.status : undefined
  }

  /**
   * [spec transports, session management] `DELETE` of the session held, which is then forgotten whatever the answer.
   * Rejects, once it is forgotten, with the error of a DELETE the server may not have acted on (`http`, `network`).
   */
  async terminate(signal: AbortSignal): Promise<void> {
    const {session} = this.#host
    const sessionId = session.id
    if (sessionId === undefined) return
    let status: number | undefined
    let failure: Error | undefined
    try {
      status = await deleteSession(this.#host, sessionId, signal)
    } catch (error) {
      failure = asError(error)
      status = isTransportError(error) ? error.status : undefined
    }
    // The session the DELETE named, unless it ended meanwhile.
    if (session.id === sessionId)
      await this.end(new TransportError('aborted', `Session ${sessionId} was terminated`)).cleared
    this.#host.emit({type: 'session-terminated', sessionId, status})
    if (failure === undefined) return
    // The authorization flow's own errors (`UnauthorizedError`) go as they came.
    if (!isTransportError(failure)) throw failure
    const forgotten = `${failure.message}; the session was forgotten here all the same, and the server may keep it until it expires it`
    throw new TransportError(failure.code, forgotten, {
      status: failure.status,
      body: failure.data?.text,
      cause: failure,
    })
  }

  /**
   * Forgets the session without a request: the one held, or, with `claim` (the transport not started), the stored
   * one `start()` would attach to, under its lease for as long as it takes (`claim` aborts the wait for it).
   */
  async forget(claim: AbortSignal | undefined): Promise<void> {
    const {session} = this.#host
    const forgotten = (): Promise<void> =>
      this.end(
        new TransportError(
          'aborted',
          session.id === undefined ? 'The session was forgotten' : `Session ${session.id} was forgotten`,
        ),
      ).cleared
    if (claim === undefined) await forgotten()
    else await session.whileClaimed(claim, forgotten)
  }
}
