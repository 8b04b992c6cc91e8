import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage, JSONRPCResponse} from '@modelcontextprotocol/sdk/types.js'
import {AppRequests, type AppRequest, type AppRequestOptions} from './delivery/app-requests.ts'
import {TransportCallbacks} from './delivery/callbacks.ts'
import {LazyJournal, type Calls} from './calls/lazy-journal.ts'
import {AnswerQueue} from './delivery/answer-queue.ts'
import {abortedError, isTransportError, TransportError} from './errors.ts'
import {zeroMetrics, type TransportEvent, type TransportMetrics} from './events.ts'
import {send, type PostHost, type SendOptions} from './session/post.ts'
import {SessionEnding} from './session/ending.ts'
import {Inbox} from './delivery/inbox.ts'
import type {JsonRpcId} from './wire/jsonrpc.ts'
import {resolveOptions, type ResolvedOptions, type ResumableHTTPClientTransportOptions} from './options.ts'
import {OwnedStore} from './persistence/ownership.ts'
import {SessionRecords} from './persistence/records.ts'
import type {JsonValue} from './wire/jsonrpc.ts'
import {Session} from './session/session.ts'
import {StreamLifecycle, type LifecycleHost} from './streams/lifecycle.ts'
import {OpenStreams} from './streams/open-streams.ts'
import {readConnection, type ReaderHost} from './streams/reader.ts'
import {Standalone} from './streams/standalone.ts'
import {wireIdOfKey} from './streams/stream.ts'

/**
 * An MCP Streamable HTTP client transport that resumes: a broken stream is resumed from its own cursor, a lost stream
 * is replaced by re-attaching the session, a session the server no longer knows ends; a request is never sent twice. A
 * drop-in replacement for the SDK's `StreamableHTTPClientTransport`
 * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md | design}).
 */
export class ResumableHTTPClientTransport extends TransportCallbacks implements Transport {
  readonly #options: ResolvedOptions
  readonly #records: SessionRecords
  readonly #metrics: TransportMetrics = zeroMetrics()
  readonly #inbox: Inbox
  readonly #session: Session
  readonly #streams: OpenStreams
  readonly #lifecycle: StreamLifecycle
  readonly #standalone: Standalone
  readonly #postHost: PostHost
  readonly #ending: SessionEnding
  /** [v2 SDK `Transport`] one POST and stream per request: the v2 Client cancels a 2026-07-28 request by `requestSignal`. */
  readonly hasPerRequestStream = true
  readonly #journal: LazyJournal
  readonly #appRequests = new AppRequests()
  /** Background work that `close()` waits for: streams and store writes. */
  readonly #tasks = new Set<Promise<void>>()
  /** The session the app handed over, attached on the first `start()` only. */
  #sessionIdOption: string | undefined
  /** Present between `start()` and `close()`; the root of the abort tree. */
  #lifetime: AbortController | undefined

  constructor(url: URL, options?: ResumableHTTPClientTransportOptions) {
    super()
    this.#options = resolveOptions(url, options)
    this.#sessionIdOption = this.#options.sessionId
    const storeError = (error: unknown, key: string): void => {
      this.#emit({type: 'store-error', key, error})
      this.reportStoreFailure(error)
    }
    const owned = new OwnedStore(this.#options.store, this.#options.namespace, this.#options.ownership, storeError)
    this.#records = new SessionRecords({...this.#options, store: owned}, (event) =>
      event.type === 'store-error' ? storeError(event.error, event.key) : this.#emit(event),
    )
    this.#session = new Session(this.#records, owned)
    this.#streams = new OpenStreams(
      this.#records,
      () => this.#session.id,
      (task) => this.#track(task),
      {limits: this.#options.limits, emit: (event) => this.#emit(event)},
    )
    this.#inbox = new Inbox({
      onmessage: (message, settled) => {
        if (!this.#appRequests.take(message, settled)) this.callOnmessage(message)
      },
      responded: (wireId, message) => this.#responded(wireId, message),
      answered: (wireId) => {
        this.#streams.markAnswered(wireId)
        this.#journal.answered(wireId)
      },
      resend: (answer) => this.#track(this.#resend(answer)),
      store: (key, message, stream, taken) => this.#session.keep(key, message, stream, taken),
      resumed: (stream) => this.#streams.get(stream)?.resumed,
      track: (task) => this.#track(task),
      onEvent: (event) => this.#emit(event),
      metrics: this.#metrics,
      limits: this.#options.limits,
    })
    this.#journal = new LazyJournal({
      ...this.#options,
      policy: this.#options.reconnect,
      records: this.#records,
      nextWireId: () => this.#session.nextWireId(),
      emit: (event) => this.#emit(event),
      track: (task) => this.#track(task),
    })
    const reader = this.#readerHost()
    this.#standalone = new Standalone({
      options: this.#options,
      streams: this.#streams,
      lifetime: () => this.#lifetime?.signal,
      stateless: () => this.#session.stateless,
      follow: (stream, opening) => this.#track(this.#lifecycle.open(stream, opening)),
      emit: (event) => this.#emit(event),
      report: (error) => this.report(error),
    })
    this.#lifecycle = new StreamLifecycle(this.#lifecycleHost(reader))
    this.#ending = new SessionEnding({
      ...this.#options,
      session: this.#session,
      inbox: this.#inbox,
      streams: this.#streams,
      emit: (event) => this.#emit(event),
      report: (error) => this.report(error),
      standalone: this.#standalone,
    })
    this.#postHost = {
      http: this.#options.http,
      session: this.#session,
      inbox: this.#inbox,
      streams: this.#streams,
      policy: this.#options.reconnect,
      answers: new AnswerQueue(this.#options.limits.maxConcurrentAnswers, (event) => this.#emit(event)),
      addStream: (init) => this.#streams.add(this.#requireStarted().signal, init),
      endSession: (error) => this.#ending.end(error).cleared,
      follow: (stream, body, sentAt) => this.#track(this.#lifecycle.follow(stream, body, sentAt)),
      expireSession: (error) => this.#ending.expire(error, false),
      sessionRefused: (...refusal) => this.#ending.sessionRefused(...refusal),
      standalone: this.#standalone,
      journal: this.#journal,
    }
  }

  /** The session ID (assigned, attached to, or restored once the Client's `initialize` was answered from the store). */
  get sessionId(): string | undefined {
    return this.#session.announcedId
  }

  /** The negotiated protocol version, sent as `MCP-Protocol-Version`. */
  get protocolVersion(): string | undefined {
    return this.#session.protocolVersion
  }

  /** The server's answer to `initialize`, kept with the session: a Client that re-attaches is answered with it. */
  get initializeResult(): JsonValue | undefined {
    return this.#session.initializeResult
  }

  /** Requests awaiting an answer, a previous process's resumed ones too; each change is a `pending-changed` event. */
  get pendingRequests(): number {
    return this.#inbox.pendingRequests
  }

  /**
   * `{kind: 'legacy'}` when the store holds a session for this server (2025-era: the only one with sessions), for the
   * v2 Client's `connect(transport, {prior})`: it then resumes that session instead of probing
   * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/eras.md | eras}).
   */
  prior(): Promise<{kind: 'legacy'} | undefined> {
    return this.#session.storedEra()
  }

  /** The call journal ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#the-call-journal | design}): every `tools/call` in flight, and a previous process's. */
  get calls(): Calls {
    return this.#journal.api
  }

  /** A snapshot of the counters. */
  get metrics(): Readonly<TransportMetrics> {
    return {...this.#metrics}
  }

  async start(): Promise<void> {
    if (this.#lifetime !== undefined) throw new Error('ResumableHTTPClientTransport already started')
    this.clientConnecting()
    const lifetime = (this.#lifetime = new AbortController())
    await this.#journal.loaded()
    const sessionId = await this.#session.attach(this.#sessionIdOption, lifetime.signal)
    this.#sessionIdOption = undefined
    const stored = sessionId === undefined ? new Map<string, never>() : await this.#records.loadStreams(sessionId)
    await this.#journal.load(sessionId, new Set([...stored.keys()].map(wireIdOfKey)), lifetime.signal)
    if (sessionId === undefined) return
    const kept = await this.#records.loadServerRequests(sessionId)
    // close() came while the store was read: it found nothing to stop, so nothing may start after it.
    if (lifetime.signal.aborted) throw abortedError(lifetime.signal)
    const {unanswered, unsent} = this.#inbox.serverRequests.restore(kept)
    // Session resumption (the Client skips `initialize`): the standalone stream re-attaches, from its cursor if kept...
    const standalone = stored.get('standalone')
    this.#standalone.open('reattach', standalone === undefined ? undefined : {record: standalone, sessionId})
    // ...and resumes every response stream the previous process left unfinished (stream resumption).
    for (const [key, record] of stored) {
      const requestId = wireIdOfKey(key)
      if (requestId === undefined) continue
      this.#inbox.requests.adopt(requestId)
      const stream = this.#streams.add(lifetime.signal, {
        kind: 'request',
        requestId,
        call: record.call,
        orphan: true,
        stored: {record, sessionId},
      })
      this.#track(this.#lifecycle.open(stream, 'resume'))
    }
    // Answers the server may not have taken, and requests the previous process never answered (no stream brings
    // them again): each answer's POST waits for its request's stream, resumed above (docs/design.md#session).
    for (const answer of unsent) this.#track(this.#resend(answer))
    this.#track(this.#inbox.handOver(unanswered, lifetime.signal))
  }

  async send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    await send(this.#postHost, message, this.#requireStarted().signal, options)
  }

  /**
   * Sends a request of the app's own beside the Client's, and resolves with its JSON-RPC answer (`result` or
   * `error`); the Client sees neither the answer nor the request's progress. It is the raw dispatch of the Tasks
   * extension, whose task handles the v2 Client rejects ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/eras.md#the-tasks-extension | eras}).
   * It goes as the Client's requests go (a wire ID of its own, the era's headers, its stream resumed), and a
   * `tools/call` is journaled; a task handle it gets is the app's to poll. Rejects with the TransportError that ended
   * it (`outcome-unknown` when its answer was lost), and with `aborted` once `options.signal` aborts.
   */
  async request(request: AppRequest, options: AppRequestOptions = {}): Promise<JSONRPCResponse> {
    const lifetime = this.#requireStarted()
    if (typeof (request as Partial<AppRequest> | undefined)?.method !== 'string')
      throw new TypeError('request.method must be a string')
    const {signal, headers} = options
    const {message, id, answer} = this.#appRequests.open(request, signal)
    send(this.#postHost, message, lifetime.signal, {headers, requestSignal: signal}).catch((error: unknown) =>
      this.#appRequests.fail(id, error),
    )
    return answer
  }

  /** The SDK transport's way to resume a stream from a kept token. Refused: streams resume here on their own. */
  resumeStream(): Promise<void> {
    return Promise.reject(
      new TypeError(
        'resumeStream is not supported: streams are resumed by the transport itself, from its store (give it a persistent store, such as FileStore or IdbStore)',
      ),
    )
  }

  setProtocolVersion(version: string): void {
    if (this.#session.endsSession(version))
      this.#track(this.#ending.end(new TransportError('aborted', `Protocol ${version} has no sessions`)).cleared)
    this.#session.setProtocolVersion(version)
  }

  /** After the user authorized: the SDK's `auth()` exchanges the redirect's `code` (its `iss` checked, v2); then connect again. */
  finishAuth(authorizationCode: string, iss?: string): Promise<void> {
    return (
      this.#options.http.auth?.finishAuth(authorizationCode, iss) ??
      Promise.reject(new TypeError('finishAuth needs options.authProvider'))
    )
  }

  /**
   * Ends the session with `DELETE`, and forgets it here (its records too) whatever the answer: 2xx, 400, 404, 405 and
   * 410 resolve (the server ended it, knows it no more, or lets no client end one); any other answer, or none,
   * rejects with `http` or `network` once it is forgotten: the server may keep it until it expires it.
   */
  async terminateSession(): Promise<void> {
    await this.#ending.terminate(this.#requireStarted().signal)
  }

  /**
   * Forgets the session without telling the server (no `DELETE`, no request): its records are deleted from the store,
   * so the next `start()` (here, or in a next process on that store and `storeKey`) initializes a new one. Started, it
   * ends the session held, as {@link terminateSession} does; before `start()` or after `close()`, it deletes the stored
   * session `start()` would attach to (under its lease: with `ownership: 'wait'` it waits as `start()` does, until
   * `signal` aborts), and drops the `sessionId` option. The call journal's records stay: `calls.forget` drops those.
   */
  async forgetSession(signal?: AbortSignal): Promise<void> {
    this.#sessionIdOption = undefined
    await this.#ending.forget(this.#lifetime === undefined ? (signal ?? new AbortController().signal) : undefined)
  }

  /**
   * Stops every stream and timer and waits for them, then calls `onclose`; the app's callbacks stay, a Client's go.
   * The session is kept (in the store too) for a later transport to resume, unless `terminateOnClose` is set.
   */
  async close(): Promise<void> {
    const lifetime = this.#lifetime
    if (lifetime === undefined) return
    if (this.#options.terminateOnClose) await this.terminateSession().catch((error: unknown) => this.report(error))
    this.#lifetime = undefined
    const closed = new TransportError('aborted', 'The transport was closed')
    lifetime.abort(closed)
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks])
    await this.#records.settled()
    await this.#session.release()
    this.#inbox.settleAll(closed)
    const onclose = this.onclose
    // [SDK interop] Client.connect chains the callbacks it finds on a transport: its wrappers go, so that a Client
    // connected again (after a session expired) does not receive every message twice; the app's own stay.
    this.clientDisconnected()
    onclose?.()
  }

  /** What reading a connection needs of this transport. */
  #readerHost(): ReaderHost {
    return {
      metrics: this.#metrics,
      options: this.#options,
      cursors: this.#streams,
      sessionId: () => this.#session.id,
      stateless: () => this.#session.stateless,
      keepServerRequest: (message, stream) =>
        this.#journal.receiving(message) ?? this.#inbox.serverRequests.keep(message, stream),
      inbox: this.#inbox,
      emit: (event) => this.#emit(event),
      report: (error) => this.report(error),
      track: (task) => this.#track(task),
    }
  }

  /** What the reconnect state machine needs of this transport. */
  #lifecycleHost(reader: ReaderHost): LifecycleHost {
    return {
      ...reader,
      streams: this.#streams,
      http: this.#options.http,
      protocolVersion: () => this.#session.protocolVersion,
      read: (connection, body) => readConnection(reader, connection, body),
      // Stryker disable next-line ConditionalExpression: settling no ID settles nothing
      settle: (stream, error) => stream.requestId !== undefined && this.#inbox.settle(stream.requestId, error),
      expireSession: (error) => this.#ending.expire(error, true),
      standalone: this.#standalone,
      removeStream: (stream) => this.#streams.remove(stream, this.#lifetime === undefined),
    }
  }

  /** Response `wireId` arrived, before the inbox matches it: the answer to `initialize` starts the session it offered. */
  #responded(wireId: JsonRpcId, message: JSONRPCMessage): void {
    const adopted = this.#session.settleOffer(wireId, 'result' in message ? (message.result as JsonValue) : undefined)
    if (adopted === undefined) return
    // A 405 refused the GET of the session before: the new one may be served by a server that offers it.
    this.#standalone.newSession()
    this.#metrics.newSessions++
    this.#emit({type: 'session-started', sessionId: adopted})
  }

  /** Answers a re-sent server request with the answer the Client gave it before. */
  #resend(answer: JSONRPCMessage): Promise<void> {
    return this.send(answer).catch((error: unknown) =>
      isTransportError(error, 'aborted') ? undefined : this.report(error),
    )
  }

  #emit(event: TransportEvent): void {
    this.#journal.observe(event)
    this.#options.onEvent(event)
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task)
    void task.finally(() => this.#tasks.delete(task))
  }

  #requireStarted(): AbortController {
    if (this.#lifetime === undefined)
      throw new TransportError('aborted', 'The transport is not started: call start() (Client.connect does) first')
    return this.#lifetime
  }
}
