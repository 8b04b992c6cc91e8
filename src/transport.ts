import type {Transport, TransportSendOptions} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage, MessageExtraInfo} from '@modelcontextprotocol/sdk/types.js'
import {firstBackoff, retryWithBackoff, sleep, stopRetrying} from './backoff.ts'
import {classifyStreamAnswer, decideReconnect, type ReconnectBranch} from './decision.ts'
import {abortedError, isTransportError, TransportError} from './errors.ts'
import {zeroMetrics, type ResumptionHeaders, type StreamKind, type TransportEvent, type TransportMetrics} from './events.ts'
import {discard, exchange, httpError, isEventStream, isJson, type HttpClient} from './http.ts'
import {Inbox} from './inbox.ts'
import {cancelledRequestIdOf, methodOf, parseMessages, requestIdOf, responseIdOf, type JsonRpcId} from './jsonrpc.ts'
import {resolveOptions, type ResolvedOptions, type ResumableHTTPClientTransportOptions} from './options.ts'
import {SessionRecords, type CursorRecord, type SessionRecord} from './records.ts'
import {EventBatches, type SseBatch} from './sse.ts'
import {createStream, describeStream, requestKey, watchSilence, wireIdOfKey, type Connection, type Stream, type StreamOutcome} from './stream.ts'
import type {JsonValue} from './store.ts'

/** The abort reason of a stream that ended: shared, as it is thrown on every request's path. */
const streamOver = new TransportError('aborted', 'The stream is over')
/** The first revision without sessions, GET streams or event IDs. */
const statelessRevision = '2026-07-28'
/** Request IDs reserved per store write: a new process starts past the reservation, never reusing one. */
const wireIdBlock = 100
/** [spec transports, session management] a session ID is visible ASCII, 0x21 to 0x7E. */
const validSessionId = /^[\x21-\x7E]+$/

/**
 * An MCP Streamable HTTP client transport that resumes: a broken stream is resumed from its own cursor,
 * a lost stream is replaced by re-attaching the session, a 404 ends the session; a request is never sent twice.
 * A drop-in replacement for the SDK's `StreamableHTTPClientTransport`.
 */
export class ResumableHTTPClientTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  // The SDK's own signature, generic as it declares it.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined

  readonly #options: ResolvedOptions
  readonly #http: HttpClient
  readonly #records: SessionRecords
  readonly #metrics: TransportMetrics = zeroMetrics()
  readonly #inbox: Inbox
  readonly #streams = new Map<string, Stream>()
  /** Background work that `close()` waits for: streams and store writes. */
  readonly #tasks = new Set<Promise<void>>()
  /** The session the app handed over, attached on the first `start()` only. */
  #sessionIdOption: string | undefined
  #sessionId: string | undefined
  #protocolVersion: string | undefined
  #initializeResult: JsonValue | undefined
  /** The next request ID on the wire, and how far the store has reserved them (see {@link wireIdBlock}). */
  #nextWireId = 0
  #reservedWireIds = 0
  #reservation: Promise<void> = Promise.resolve()
  #stateless = false
  #standaloneOffered = true
  /** The session ID offered with the initialize response, taken once that response proves a success. */
  #offered: {requestId: JsonRpcId; sessionId: string} | undefined
  /** Present between `start()` and `close()`; the root of the abort tree. */
  #lifetime: AbortController | undefined

  constructor(url: URL, options?: ResumableHTTPClientTransportOptions) {
    this.#options = resolveOptions(url, options)
    this.#http = this.#options.http
    this.#sessionIdOption = this.#options.sessionId
    this.#records = new SessionRecords(this.#options.store, this.#options.namespace, (error, key) =>
      this.#emit({type: 'store-error', key, error}),
    )
    this.#inbox = new Inbox({
      deliver: (message) => this.#deliver(message),
      resendAnswer: (answer) => this.#track(this.#resend(answer)),
      onEvent: (event) => this.#emit(event),
      metrics: this.#metrics,
    })
  }

  /** The session ID, once the server assigned one (or the one attached to); undefined without a session. */
  get sessionId(): string | undefined {
    return this.#sessionId
  }

  /** The negotiated protocol version, sent as `MCP-Protocol-Version`. */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion
  }

  /**
   * The server's answer to `initialize`: kept with the session, so a process that re-attaches (and whose
   * Client therefore skips `initialize`) can still read the server's capabilities and instructions.
   */
  get initializeResult(): JsonValue | undefined {
    return this.#initializeResult
  }

  /** A snapshot of the counters. */
  get metrics(): Readonly<TransportMetrics> {
    return {...this.#metrics}
  }

  async start(): Promise<void> {
    if (this.#lifetime !== undefined) throw new Error('ResumableHTTPClientTransport already started')
    this.#lifetime = new AbortController()
    const requested = this.#sessionIdOption
    this.#sessionIdOption = undefined
    const stored = await this.#records.loadSession()
    const sessionId = requested ?? stored?.sessionId
    if (sessionId === undefined) return
    if (requested !== undefined && !validSessionId.test(requested)) {
      throw new TransportError('protocol', `options.sessionId must be visible ASCII (0x21-0x7E), got ${JSON.stringify(requested)}`)
    }
    this.#sessionId = sessionId
    if (stored?.sessionId === sessionId) {
      this.#protocolVersion = stored.protocolVersion
      this.#initializeResult = stored.initializeResult
      this.#nextWireId = this.#reservedWireIds = stored.requestIdsReserved
    } else {
      // A session kept by the app: which request IDs it used is unknown, so start past any plausible one.
      this.#nextWireId = this.#reservedWireIds = Date.now() * 1000
      await this.#records.clearSession()
      await this.#records.saveSession(this.#sessionRecord())
    }
    const unanswered = this.#inbox.restore(await this.#records.loadAnswers(sessionId))
    const cursors = await this.#records.loadCursors(sessionId)
    // Session resumption: the Client skips `initialize` because `sessionId` is set; the transport re-attaches
    // the standalone stream, from its cursor when it kept one...
    this.#openStandalone('reattach', cursors.get('standalone'))
    // ...and resumes every response stream the previous process left unfinished (stream resumption).
    for (const [key, cursor] of cursors) {
      const wireId = wireIdOfKey(key)
      if (wireId !== undefined) this.#track(this.#runStream(this.#addStream('request', wireId, cursor, true), 'reconnect'))
    }
    // Requests the previous process received but never answered: no stream brings them again.
    if (unanswered.length > 0) this.#track(this.#handOver(unanswered))
  }

  /** Gives the Client, once `connect` has returned, the server requests a previous process left unanswered. */
  async #handOver(requests: JSONRPCMessage[]): Promise<void> {
    await nextTurn()
    for (const request of requests) {
      if (this.#lifetime === undefined) return
      this.#emit({type: 'request-restored', requestId: requestIdOf(request)!})
      this.#deliver(request)
    }
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const lifetime = this.#requireStarted()
    if (options?.resumptionToken !== undefined) {
      // The SDK's token path GETs instead of POSTing; here streams resume on their own, so a token is a port error.
      throw new TransportError('protocol', 'resumptionToken is not supported: this transport resumes streams itself')
    }
    const method = methodOf(message)
    const clientId = requestIdOf(message)
    // [spec transports, session management] initialize starts a new session and carries no session ID;
    // the era is negotiated again.
    if (method === 'initialize') {
      this.#stateless = false
      if (this.#sessionId !== undefined) {
        await this.#endSession(new TransportError('aborted', 'A new session was initialized')).cleared
      }
    }
    // The answer to a server request is stored before it is sent: a restart must not run its handler again.
    const answers = this.#inbox.recordAnswer(message)
    if (answers !== undefined && this.#sessionId !== undefined) await this.#saveAnswers()
    const cancelled = cancelledRequestIdOf(message)
    if (cancelled !== undefined) message = this.#cancel(message, cancelled)

    // [spec basic] a request ID is never reused within a session, across processes too: the wire gets its own.
    const requestId = clientId === undefined ? undefined : await this.#nextRequestId()
    if (requestId !== undefined) message = this.#inbox.expect(message, requestId)
    const stream = requestId === undefined ? undefined : this.#addStream('request', requestId)
    const fail = (error: unknown): unknown => {
      if (requestId !== undefined) this.#inbox.forget(requestId)
      if (answers !== undefined) this.#inbox.answerSent(answers)
      if (stream !== undefined) this.#removeStream(stream)
      // A request whose connection failed may have run: say so, so the app does not blindly retry it.
      return requestId !== undefined && isTransportError(error, 'network')
        ? new TransportError('outcome-unknown', `${method ?? 'request'} ${String(clientId)}: ${error.message}`, {cause: error})
        : error
    }

    const sentSession = this.#sessionId
    let response: Response
    try {
      response = await exchange(this.#http, {
        method: 'POST',
        sessionId: sentSession,
        protocolVersion: this.#protocolVersion,
        body: JSON.stringify(message),
        signal: stream?.controller.signal ?? lifetime.signal,
      })
    } catch (error) {
      throw fail(error)
    }

    // [spec transports, session management] 404 to a request carrying the session ID: the session has expired.
    // The request is never sent again, in any path.
    if (response.status === 404 && sentSession !== undefined) {
      discard(response)
      const error = new TransportError(
        'session-expired',
        `Session ${sentSession} has expired (HTTP 404); ${method ?? 'the message'} was not sent again`,
        {status: 404},
      )
      fail(error)
      await this.#expireSession(error, false)
      throw error
    }
    if (!response.ok) throw fail(await httpError(this.#http, response, `POST ${method ?? 'response'}`))
    if (method === 'initialize' && requestId !== undefined) {
      try {
        this.#offered = offeredSession(requestId, response.headers.get('mcp-session-id'))
      } catch (error) {
        discard(response)
        throw fail(error)
      }
    }

    if (stream === undefined || requestId === undefined) {
      // [spec transports, sending messages] notifications and responses are answered 202 with no body.
      discard(response)
      if (answers !== undefined) this.#inbox.answerSent(answers)
      if (method === 'notifications/initialized') this.#openStandalone('open', undefined)
      return
    }
    const contentType = response.headers.get('content-type')
    if (isEventStream(contentType) && response.body !== null) {
      this.#track(this.#runStream(stream, {stream, branch: 'open', resumed: false}, response.body))
      return
    }
    if (!isJson(contentType)) {
      discard(response)
      throw fail(new TransportError('protocol', `POST ${method} answered with content type ${JSON.stringify(contentType)}`))
    }
    let messages: JSONRPCMessage[]
    try {
      messages = parseMessages(await response.text(), [], this.#http.redact)
    } catch (error) {
      throw fail(isTransportError(error) ? error : new TransportError('network', 'Reading the response failed', {cause: error}))
    }
    this.#removeStream(stream)
    await this.#deliverAll(messages, undefined, false)
    // Built only when needed: an error's stack trace costs more than the rest of a request's own work.
    if (this.#inbox.isPending(requestId)) {
      this.#inbox.settle(requestId, new TransportError('protocol', `The JSON answer to ${method} ${String(clientId)} did not contain its response`))
    }
  }

  setProtocolVersion(version: string): void {
    if (version >= statelessRevision) {
      // [spec 2026-07-28] no sessions, GET streams or event IDs: anything of the kind the server sent is ignored.
      this.#stateless = true
      if (this.#sessionId !== undefined) this.#track(this.#endSession(new TransportError('aborted', `Protocol ${version} has no sessions`)).cleared)
    }
    this.#protocolVersion = version
    if (!this.#stateless && this.#sessionId !== undefined) this.#track(this.#records.saveSession(this.#sessionRecord()))
  }

  /** Ends the session with `DELETE`. 200, 204, 404 and 405 all clear the local session and its cursors. */
  async terminateSession(): Promise<void> {
    const lifetime = this.#requireStarted()
    const sessionId = this.#sessionId
    if (sessionId === undefined) return
    const response = await exchange(this.#http, {
      method: 'DELETE',
      sessionId,
      protocolVersion: this.#protocolVersion,
      signal: lifetime.signal,
    })
    // [spec transports, session management] a server MAY answer 405: it does not let clients end sessions.
    if (!response.ok && response.status !== 404 && response.status !== 405) {
      throw await httpError(this.#http, response, 'DELETE')
    }
    discard(response)
    await this.#endSession(new TransportError('aborted', `Session ${sessionId} was terminated`)).cleared
    this.#emit({type: 'session-terminated', sessionId, status: response.status})
  }

  /**
   * Stops every stream and timer and waits for them, then detaches `onmessage`, `onerror` and `onclose`
   * (after calling `onclose`), so the transport can be connected again. The session is kept (in the store
   * too) so that a later transport can resume it, unless `terminateOnClose` is set.
   */
  async close(): Promise<void> {
    const lifetime = this.#lifetime
    if (lifetime === undefined) return
    if (this.#options.terminateOnClose) await this.terminateSession().catch((error: unknown) => this.#report(error))
    this.#lifetime = undefined
    const closed = new TransportError('aborted', 'The transport was closed')
    lifetime.abort(closed)
    await Promise.allSettled([...this.#tasks])
    this.#inbox.settleAll(closed)
    const onclose = this.onclose
    // [SDK interop] Client.connect chains the callbacks it finds on a transport: detached here, so that a
    // Client connected again (after a session expired) does not receive every message twice.
    this.onmessage = this.onerror = this.onclose = undefined
    onclose?.()
  }

  /**
   * Hands `message` to the inbox. The session ID offered with the initialize response is taken only now, and
   * only when that response is a result: an error answering initialize starts no session.
   */
  #take(message: JSONRPCMessage, reemitted: boolean): number | undefined {
    const offered = this.#offered
    if (offered !== undefined && responseIdOf(message) === offered.requestId) {
      this.#offered = undefined
      if ('result' in message) this.#adoptSession(offered.sessionId, message.result as JsonValue)
    }
    return this.#inbox.receive(message, reemitted)
  }

  #adoptSession(sessionId: string, initializeResult: JsonValue): void {
    this.#sessionId = sessionId
    this.#initializeResult = initializeResult
    this.#metrics.newSessions++
    this.#emit({type: 'session-started', sessionId})
    this.#track(this.#reserveWireIds(this.#nextWireId))
  }

  /** Reserves the block of wire IDs that starts at `from`, in the store, before any of them is used. */
  #reserveWireIds(from: number): Promise<void> {
    this.#reservedWireIds = from + wireIdBlock
    this.#reservation = this.#records.saveSession(this.#sessionRecord())
    return this.#reservation
  }

  #sessionRecord(): SessionRecord {
    return {
      sessionId: this.#sessionId!,
      protocolVersion: this.#protocolVersion,
      initializeResult: this.#initializeResult,
      requestIdsReserved: this.#reservedWireIds,
    }
  }

  /** The next request ID for the wire; a block of them is reserved in the store before any is used. */
  async #nextRequestId(): Promise<number> {
    const wireId = this.#nextWireId++
    if (this.#sessionId !== undefined && wireId >= this.#reservedWireIds) void this.#reserveWireIds(wireId)
    await this.#reservation
    return wireId
  }

  #saveAnswers(): Promise<void> {
    return this.#records.saveAnswers(this.#sessionId!, () => this.#inbox.kept() as Map<string, JsonValue>)
  }

  /**
   * [spec transports, session management] On 404 the session is gone: forget it and every cursor of it,
   * settle every pending request. `background`: found by a stream, so reported through `onerror` (once).
   */
  async #expireSession(error: TransportError, background: boolean): Promise<void> {
    const sessionId = this.#sessionId
    if (sessionId === undefined) return
    const {settled, cleared} = this.#endSession(error)
    this.#emit({type: 'session-expired', sessionId, settledRequests: settled})
    if (background) this.#report(error)
    await cleared
  }

  /**
   * Drops the session and its streams, and settles what was pending with `error`, all at once (so nothing
   * observes a half-ended session); `cleared` resolves when its stored records are gone too.
   */
  #endSession(error: TransportError): {settled: number; cleared: Promise<void>} {
    this.#sessionId = undefined
    this.#protocolVersion = undefined
    this.#initializeResult = undefined
    this.#inbox.forgetServerRequests()
    for (const stream of this.#streams.values()) stream.controller.abort(error)
    const settled = this.#inbox.settleAll(error)
    return {settled, cleared: this.#records.clearSession()}
  }

  /**
   * The Client cancelled its request `clientId`: the notification names the wire ID, the request's stream
   * stops and its cursor is forgotten. [spec 2025-06-18 cancellation] Cancelling is a POST, never a GET.
   */
  #cancel(message: JSONRPCMessage, clientId: JsonRpcId): JSONRPCMessage {
    const wireId = this.#inbox.wireIdOf(clientId)
    if (wireId === undefined) return message
    this.#inbox.forget(wireId)
    this.#streams.get(requestKey(wireId))?.controller.abort()
    const params = (message as {params: object}).params
    return {...message, params: {...params, requestId: wireId}}
  }

  /** Opens the standalone GET stream, unless it is open, not offered, or the era has none. */
  #openStandalone(mode: 'open' | 'reattach', cursor: CursorRecord | undefined): void {
    if (this.#stateless || !this.#standaloneOffered || this.#streams.has('standalone')) return
    if (this.#lifetime === undefined) return
    this.#track(this.#runStream(this.#addStream('standalone', undefined, cursor), mode))
  }

  /** Runs one stream to its end: consumes `first` (a POST's response) or opens it, then resumes it while it breaks. */
  async #runStream(stream: Stream, first: Connection | 'open' | 'reattach' | 'reconnect', body?: ReadableStream<Uint8Array>): Promise<void> {
    try {
      let outcome: StreamOutcome
      if (typeof first === 'string') {
        outcome = await this.#reopen(stream, first)
      } else {
        const {completed} = await this.#consume(first, body!)
        outcome = completed ? 'done' : 'again'
      }
      while (outcome === 'again') outcome = await this.#reopen(stream, 'reconnect')
      if (stream.answered) this.#emit({type: 'stream-closed', stream: stream.kind, requestId: stream.requestId, reason: 'completed'})
    } catch (error) {
      this.#streamFailed(stream, error)
    } finally {
      this.#removeStream(stream)
    }
  }

  /**
   * One series of attempts to reopen `stream`, each decided by {@link decideReconnect} from what is held then.
   * Resolves 'again' when a connection made progress and broke (a fresh series follows, count reset),
   * 'done' when the stream is over; rejects when attempts run out or a failure is final.
   */
  #reopen(stream: Stream, mode: 'open' | 'reattach' | 'reconnect'): Promise<StreamOutcome> {
    const {signal} = stream.controller
    return retryWithBackoff(
      async (attempt) => {
        // [spec 2025-11-25 transports] the client MUST wait the stream's `retry` before reconnecting; without
        // one, the first reconnect of a series waits a first backoff (p-retry spaces the later ones).
        if (mode === 'reconnect' || attempt > 1) {
          const wait = stream.retryMs ?? (attempt === 1 ? firstBackoff(this.#options.reconnect) : 0)
          if (wait > 0) await sleep(wait, signal)
        }
        for (;;) {
          const plan = this.#plan(stream, mode === 'open' && attempt === 1)
          if (plan === 'done') return 'done'
          const outcome = await this.#connect(stream, plan, attempt)
          if (outcome !== 'rejected') return outcome
          // The cursor was refused: decide again at once, it falls back to session resumption.
          mode = 'reconnect'
        }
      },
      this.#options.reconnect,
      signal,
      (error, attempt) =>
        this.#emit({type: 'reconnect-failed', stream: stream.kind, requestId: stream.requestId, attempt, error}),
    )
  }

  /** What to send for the next connection of `stream`, or 'done' when this stream cannot continue. */
  #plan(stream: Stream, firstOpen: boolean): {branch: ReconnectBranch | 'open'; lastEventId: string | undefined} | 'done' {
    if (firstOpen) return {branch: 'open', lastEventId: undefined}
    const cursor = stream.lastEventId === undefined ? undefined : {sessionId: stream.cursorSessionId, lastEventId: stream.lastEventId}
    const decision = decideReconnect({
      sessionId: this.#sessionId,
      cursor,
      cursorRejected: stream.rejection !== undefined,
      stream: stream.kind,
    })
    if (decision.branch === 'stream-resumption') return {branch: decision.branch, lastEventId: decision.lastEventId}
    if (decision.dropCursor) stream.lastEventId = undefined
    if (decision.settleRequest) {
      // The answer was on this stream and only a cursor could have brought it back.
      const why = stream.rejection ?? new TransportError('network', 'the stream broke before any event ID')
      this.#settle(stream, new TransportError('outcome-unknown', `${describeStream(stream)}: ${why.message}; the request was not sent again`, {cause: why}))
    }
    if (decision.branch === 'session-resumption' && stream.kind === 'standalone') {
      return {branch: decision.branch, lastEventId: undefined}
    }
    // The session's server requests come back on a fresh stream attached without a cursor.
    if (decision.branch === 'session-resumption') this.#openStandalone('reattach', undefined)
    this.#emit({type: 'stream-closed', stream: stream.kind, requestId: stream.requestId, reason: 'abandoned'})
    return 'done'
  }

  async #connect(
    stream: Stream,
    plan: {branch: ReconnectBranch | 'open'; lastEventId: string | undefined},
    attempt: number,
  ): Promise<StreamOutcome | 'rejected'> {
    const {branch, lastEventId} = plan
    const sessionId = this.#sessionId
    const headers: ResumptionHeaders = {'mcp-session-id': sessionId, 'last-event-id': lastEventId}
    if (branch === 'open') {
      this.#emit({type: 'stream-opened', stream: stream.kind, requestId: stream.requestId, headers})
    } else {
      if (branch === 'stream-resumption') this.#metrics.streamResumptions++
      if (branch === 'session-resumption') this.#metrics.sessionResumptions++
      this.#emit({type: 'reconnect', stream: stream.kind, requestId: stream.requestId, branch, attempt, headers})
    }
    // [spec 2025-11-25 transports] resumption is always a GET with Last-Event-ID, whatever opened the stream.
    const response = await exchange(this.#http, {
      method: 'GET',
      sessionId,
      protocolVersion: this.#protocolVersion,
      lastEventId,
      signal: stream.controller.signal,
    }).catch((error: unknown) => {
      // A redirect not followed comes back the same on every attempt.
      throw isTransportError(error, 'http') ? stopRetrying(error) : error
    })
    const answer = classifyStreamAnswer({
      status: response.status,
      contentType: response.headers.get('content-type'),
      sentSession: sessionId !== undefined,
      sentCursor: lastEventId !== undefined,
    })
    if (answer === 'open') {
      const {completed, progressed, silent} = await this.#consume({stream, branch, resumed: lastEventId !== undefined}, response.body!)
      if (completed) return 'done'
      if (silent) {
        // [SDK interop] the SDK's example InMemoryEventStore answers a Last-Event-ID it does not know with 200 and
        // a stream that never carries anything: waiting longer would hang the request for ever.
        const why = `the server sent nothing for ${this.#options.resumeTimeoutMs} ms after resuming from Last-Event-ID ${JSON.stringify(lastEventId)}`
        return this.#endStream(stream, 'silent', `${describeStream(stream)}: ${why}; the request was not sent again`)
      }
      if (progressed) return 'again'
      throw new TransportError('network', `${describeStream(stream)} closed before any new event`)
    }
    if (answer === 'retry') throw await httpError(this.#http, response, `GET ${describeStream(stream)}`)
    if (answer === 'failed') throw stopRetrying(await httpError(this.#http, response, `GET ${describeStream(stream)}`))
    discard(response)
    switch (answer) {
      case 'session-expired': {
        const error = new TransportError('session-expired', `Session ${sessionId} has expired (HTTP 404 on GET)`, {status: 404})
        await this.#expireSession(error, true)
        throw stopRetrying(error)
      }
      case 'cursor-rejected': {
        const status = response.status
        stream.rejection = new TransportError(
          'resumption-rejected',
          `The server refused Last-Event-ID ${JSON.stringify(lastEventId)} of ${describeStream(stream)} (HTTP ${status})`,
          {status},
        )
        this.#emit({type: 'cursor-rejected', stream: stream.kind, requestId: stream.requestId, lastEventId: lastEventId!, status})
        // A request stream reports it through its request; the standalone stream has no caller.
        if (stream.kind === 'standalone') this.#report(stream.rejection)
        return 'rejected'
      }
      case 'no-stream':
        if (stream.kind === 'standalone') this.#standaloneOffered = false
        return this.#endStream(stream, 'not-offered', `${describeStream(stream)} cannot be resumed: the server offers no GET stream (HTTP ${response.status})`, response.status)
      case 'ended':
        return this.#endStream(stream, 'ended-by-server', `The server ended ${describeStream(stream)} before answering (HTTP ${response.status})`, response.status)
    }
  }

  /** Ends `stream` for good: its request, if it carries one, is settled `outcome-unknown` saying `why`. */
  #endStream(stream: Stream, reason: 'silent' | 'not-offered' | 'ended-by-server', why: string, status?: number): 'done' {
    this.#settle(stream, new TransportError('outcome-unknown', why, status === undefined ? {} : {status}))
    this.#emit({type: 'stream-closed', stream: stream.kind, requestId: stream.requestId, reason})
    return 'done'
  }

  /**
   * Reads one connection of `stream`. Each batch of events: cursor moved, cursor stored, then its messages
   * delivered. The store write of a batch overlaps its own parsing and the delivery of the batch before it, and
   * delivery never overtakes the write that covers it. Stops at its request's answer. A broken connection is not an error
   * here: the result says whether it completed the stream and whether it made progress.
   */
  async #consume(connection: Connection, body: ReadableStream<Uint8Array>): Promise<{completed: boolean; progressed: boolean; silent: boolean}> {
    const {stream} = connection
    const reemitted = connection.branch === 'session-resumption'
    const openedAt = Date.now()
    const silence = watchSilence(connection, this.#options.resumeTimeoutMs)
    const batches = new EventBatches(body, silence?.signal ?? stream.controller.signal)
    let received = 0
    try {
      let ready: {messages: JSONRPCMessage[]; stored: Promise<void>} | undefined
      for (;;) {
        // While a batch waits for its write, what arrived meanwhile starts its own; else wait for more.
        const batch = ready === undefined ? await batches.next() : batches.take()
        if (batch === undefined && ready === undefined) break
        const next = batch === undefined ? undefined : await this.#prepare(connection, batch)
        received += batch?.events.length ?? 0
        if (received > 0) silence?.disarm()
        if (ready !== undefined) {
          await ready.stored
          await this.#deliverAll(ready.messages, stream, reemitted)
          if (stream.answered) break
        }
        ready = next
      }
    } catch (error) {
      if (stream.controller.signal.aborted) throw abortedError(stream.controller.signal)
      if (silence?.expired === true) return {completed: false, progressed: false, silent: true}
      // A read failure is a dropped connection; what follows is the reconnect decision's business.
      this.#emit({type: 'reconnect-failed', stream: stream.kind, requestId: stream.requestId, attempt: 0, error: asError(error)})
    } finally {
      silence?.release()
      await batches.close()
    }
    // An idle stream that lived longer than the longest backoff was healthy: its end is no failed attempt.
    const lived = Date.now() - openedAt >= this.#options.reconnect.maxDelayMs
    return {completed: stream.answered, progressed: received > 0 || lived, silent: false}
  }

  /**
   * One batch of a connection: duplicates dropped, cursor and `retry` moved, the cursor's store write started,
   * then data parsed (`stored`: when the writes are durable, unless durability is relaxed).
   */
  async #prepare(connection: Connection, {events, retryMs}: SseBatch): Promise<{messages: JSONRPCMessage[]; stored: Promise<void>}> {
    const {stream} = connection
    // [spec 2025-11-25 transports] `retry` is per stream.
    if (retryMs !== undefined) stream.retryMs = retryMs
    let cursorMoved = retryMs !== undefined
    const data: string[] = []
    for (const event of events) {
      if (event.id !== undefined && !this.#stateless) {
        if (event.id !== '' && !stream.seen.addIfNew(event.id, true)) {
          this.#metrics.duplicatesDropped++
          this.#emit({type: 'duplicate-dropped', what: 'event', id: event.id})
          continue
        }
        // [WHATWG SSE] an empty `id:` resets the cursor; the stream is then not resumable until the next ID.
        stream.lastEventId = event.id
        stream.cursorSessionId = this.#sessionId
        cursorMoved = true
      }
      // [spec 2025-11-25 transports] a priming event (an ID, empty data) moves the cursor and carries no message.
      if (event.data === '') continue
      if (connection.resumed) this.#metrics.replayedEvents++
      if (event.event === undefined || event.event === 'message') data.push(event.data)
    }
    const writes: Promise<void>[] = []
    if (cursorMoved) {
      writes.push(this.#saveCursors())
      // A microtask lets the store start its write before the parse, the costly part, takes the thread: the
      // FileStore's flush to disk then runs alongside it.
      await nextTurn()
    }
    const messages: JSONRPCMessage[] = []
    for (const text of data) this.#parseInto(messages, text)
    // A server request is kept before it is delivered: a restart past its cursor must not lose it.
    let newRequest = false
    for (const message of messages) if (this.#inbox.keepRequest(message)) newRequest = true
    if (newRequest && this.#sessionId !== undefined) writes.push(this.#saveAnswers())
    if (writes.length === 0) return {messages, stored: Promise.resolve()}
    const saved = writes.length === 1 ? writes[0]! : Promise.all(writes).then(() => {})
    if (this.#options.durability === 'strict') return {messages, stored: saved}
    this.#track(saved)
    return {messages, stored: Promise.resolve()}
  }

  /** One SSE `data` field's messages, appended to `messages`. Bad data is reported and skipped: the stream goes on. */
  #parseInto(messages: JSONRPCMessage[], data: string): void {
    try {
      parseMessages(data, messages, this.#http.redact)
    } catch (error) {
      this.#report(error)
    }
  }

  /**
   * Hands `messages` to the Client in order, through the inbox. Yields a turn before a response that follows
   * other messages: [SDK interop] the SDK Client dispatches a notification one microtask after receiving it
   * but settles a response at once, so a request's last progress and its response in one turn lose the progress.
   */
  async #deliverAll(messages: JSONRPCMessage[], stream: Stream | undefined, reemitted: boolean): Promise<void> {
    let delivered = false
    for (const message of messages) {
      const responseId = responseIdOf(message)
      if (delivered && responseId !== undefined) await nextTurn()
      stream?.controller.signal.throwIfAborted()
      if (stream?.orphan === true && responseId === undefined && requestIdOf(message) === undefined) {
        // Progress and logs of a request this process never made would only confuse the Client.
        this.#emit({type: 'orphaned-notification', method: methodOf(message)})
        continue
      }
      if (stream?.orphan === true && responseId === stream.requestId) stream.answered = true
      delivered = true
      const answered = this.#take(message, reemitted)
      if (answered === undefined) continue
      const owner = this.#streams.get(requestKey(answered))
      if (owner !== undefined) owner.answered = true
    }
  }

  #settle(stream: Stream, error: TransportError): void {
    if (stream.requestId !== undefined) this.#inbox.settle(stream.requestId, error)
  }

  #streamFailed(stream: Stream, error: unknown): void {
    // Closed, cancelled or expired: already accounted for by whoever aborted it.
    if (stream.controller.signal.aborted) return
    const cause = asError(error)
    this.#emit({type: 'stream-closed', stream: stream.kind, requestId: stream.requestId, reason: 'given-up'})
    if (stream.kind === 'request') {
      this.#settle(stream, new TransportError('outcome-unknown', `${describeStream(stream)} could not be resumed: ${cause.message}; the request was not sent again`, {cause}))
    } else {
      this.#report(cause)
    }
  }

  /** A new stream of the current session, from a stored `cursor` when there is one. */
  #addStream(kind: StreamKind, requestId: number | undefined, cursor?: CursorRecord, orphan = false): Stream {
    const stream = createStream(this.#requireStarted().signal, {kind, requestId, orphan, cursor, sessionId: this.#sessionId})
    this.#streams.set(stream.key, stream)
    return stream
  }

  #removeStream(stream: Stream): void {
    if (this.#streams.get(stream.key) !== stream) return
    this.#streams.delete(stream.key)
    stream.controller.abort(streamOver)
    // A stream cut short by close() keeps its stored cursor: the next process resumes from it.
    const closing = this.#lifetime === undefined
    if (!closing && stream.lastEventId !== undefined && this.#sessionId !== undefined) this.#track(this.#saveCursors())
  }

  /** Stores the cursor of every stream of the current session (one coalesced write). */
  #saveCursors(): Promise<void> {
    const sessionId = this.#sessionId
    if (sessionId === undefined) return Promise.resolve()
    return this.#records.saveCursors(sessionId, () => {
      const cursors = new Map<string, CursorRecord>()
      for (const stream of this.#streams.values()) {
        const {lastEventId} = stream
        if (lastEventId === undefined || lastEventId === '' || stream.rejection !== undefined) continue
        if (stream.cursorSessionId === sessionId) cursors.set(stream.key, {lastEventId, retryMs: stream.retryMs})
      }
      return cursors
    })
  }

  /** Answers a re-sent server request with the answer the Client gave it before. */
  async #resend(answer: JSONRPCMessage): Promise<void> {
    try {
      await this.send(answer)
    } catch (error) {
      if (!isTransportError(error, 'aborted')) this.#report(error)
    }
  }

  #deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage?.(message)
    } catch (error) {
      this.#report(error)
    }
  }

  #report(error: unknown): void {
    this.onerror?.(asError(error))
  }

  #emit(event: TransportEvent): void {
    this.#options.onEvent(event)
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task)
    void task.finally(() => this.#tasks.delete(task))
  }

  #requireStarted(): AbortController {
    if (this.#lifetime === undefined) {
      throw new TransportError('aborted', 'The transport is not started: call start() (Client.connect does) first')
    }
    return this.#lifetime
  }
}

/** The session ID offered with an initialize response, checked at once: only visible ASCII is allowed. */
function offeredSession(requestId: JsonRpcId, header: string | null): {requestId: JsonRpcId; sessionId: string} | undefined {
  // Without the header, the server keeps no session: nothing will be resumable.
  if (header === null) return undefined
  if (!validSessionId.test(header)) {
    throw new TransportError('protocol', `The server sent an invalid session ID ${JSON.stringify(header)}: only visible ASCII is allowed`)
  }
  return {requestId, sessionId: header}
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

function nextTurn(): Promise<void> {
  return Promise.resolve()
}
