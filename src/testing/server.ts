/**
 * The reference MCP Streamable HTTP server: a Web-standard `(Request) => Promise<Response>` handler for
 * 2025-03-26, 2025-06-18 and 2025-11-25 that keeps the boundary between stream and session resumption
 * (docs/design.md#what-a-server-must-do), counts what it does, and fails on command.
 */
import {execute} from './calls.ts'
import {capabilitiesOf} from './catalog.ts'
import {createFaults, type DisconnectOptions, type ExpireOptions, type FaultTaker, type Faults} from './faults.ts'
import {
  logEntryOf,
  recordAnswer,
  requestsIn,
  viewOfPending,
  viewOfSession,
  viewOfStream,
  type LoggedRequest,
  type PendingRequestView,
  type ServerCounters,
  type SessionView,
  type StreamView,
} from './instrumentation.ts'
import {checkMode, findResumption, keepsUnreadResult, nextEventId, reemitsOnAttach, type ServerMode} from './modes.ts'
import {resolveServerOptions, type ReferenceServerOptions, type ResolvedServerOptions} from './options.ts'
import {
  errorCodes,
  errorPageAsSse,
  isObject,
  isSupportedVersion,
  kindOf,
  readRequest,
  refusals,
  refuse,
  supportedProtocolVersions,
  type Incoming,
  type JsonObject,
  type RequestId,
  wait,
} from './protocol.ts'
import {EventStream, Session, type StoredEvent} from './session.ts'

const latestVersion = supportedProtocolVersions[supportedProtocolVersions.length - 1]!

/** Creates a reference server; serve it with the msw adapter or `listen` from `mcp-resumable-http/testing/node`. */
export function createReferenceServer(options?: ReferenceServerOptions): ReferenceServer {
  return new ReferenceServer(options)
}

export class ReferenceServer {
  /** Every request with both resumption headers and the status it got, in order. */
  readonly log: LoggedRequest[] = []
  /** Tool executions by tool name: proof that nothing ran twice. Kept across restarts. */
  readonly executions: Record<string, number> = {}
  /** Every answer the client POSTed to a server request, by request ID (duplicates included). */
  readonly answers = new Map<RequestId, JsonObject[]>()
  readonly counters: ServerCounters = {
    reemittedRequests: 0,
    cancelledRequests: 0,
    refusedResumptions: 0,
    unmatchedAnswers: 0,
    droppedResults: 0,
  }
  /** Faults to arm at run time, and actions that hit the server at once. */
  readonly faults: Faults
  readonly #options: ResolvedServerOptions
  readonly #take: FaultTaker
  #mode: ServerMode
  #sessions = new Map<string, Session>()
  /** The one session of a server that mints none, once initialized. */
  #stateless: Session | undefined
  /** Every event of every session since the last restart: what the `global-log` mode replays from. */
  #global: StoredEvent[] = []
  // Counters outlive restarts so that no ID is ever handed out twice, as with random IDs.
  #sessionCount = 0
  #streamCount = 0
  #taskCount = 0

  constructor(options?: ReferenceServerOptions) {
    this.#options = resolveServerOptions(options)
    this.#mode = this.#options.mode
    const {faults, take} = createFaults({
      expireSession: (sessionId?: string, options: ExpireOptions = {}) => {
        this.#expire(this.#find(sessionId), options.closeConnections ?? true)
      },
      expireStreams: (sessionId?: string) => {
        const session = this.#find(sessionId)
        session.disconnect('close')
        session.streams.clear()
        session.latestStandalone = undefined
      },
      disconnect: (options: DisconnectOptions = {}) => {
        for (const session of this.#all()) session.disconnect(options.how ?? 'error', options.stream)
      },
      restart: () => {
        // A process that died takes its sockets with it.
        for (const session of this.#all()) session.disconnect('error')
        this.#sessions = new Map()
        this.#stateless = undefined
        this.#global = []
      },
    })
    this.faults = faults
    this.#take = take
  }

  /** How reconnects are served (see {@link ServerMode}); may be switched at any time. */
  get mode(): ServerMode {
    return this.#mode
  }

  set mode(mode: ServerMode) {
    checkMode(mode, 'mode')
    this.#mode = mode
  }

  /** The logged requests of one HTTP method (and JSON-RPC method), in order. */
  requests(method: string, rpcMethod?: string): LoggedRequest[] {
    return requestsIn(this.log, method, rpcMethod)
  }

  /** A snapshot of every live session. */
  sessions(): SessionView[] {
    return this.#all().map(viewOfSession)
  }

  /** A snapshot of session `id`, or of the only (first) one; throws when there is none. */
  session(id?: string): SessionView {
    return viewOfSession(this.#find(id))
  }

  /** A snapshot of stream `id` (`p<n>` or `g<n>`), in whichever live session holds it. */
  stream(id: string): StreamView | undefined {
    const stream = this.#all()
      .find((session) => session.streams.has(id))
      ?.streams.get(id)
    return stream === undefined ? undefined : viewOfStream(stream)
  }

  /** Server-to-client requests still waiting for an answer, in every live session. */
  pendingRequests(): PendingRequestView[] {
    return this.#all().flatMap(viewOfPending)
  }

  /** Serves one request. Never rejects: every failure is an HTTP answer. */
  async handle(request: Request): Promise<Response> {
    const incoming = await readRequest(request)
    const entry = logEntryOf(incoming)
    this.log.push(entry)
    const delay = this.#take.delay(incoming.method, entry.rpcMethod)
    if (delay !== undefined) await wait(delay.ms)
    const response = await this.#route(incoming, entry.rpcMethod)
    entry.status = response.status
    return response
  }

  #route(incoming: Incoming, rpcMethod: string | undefined): Response | Promise<Response> {
    const {method, sessionId, lastEventId, messages} = incoming
    const failure = this.#take.failure(method, rpcMethod)
    if (failure !== undefined) return refuse(refusals.injected, `HTTP ${failure.status}`, failure.status)
    this.#collectIdle()
    if (method === 'POST') {
      if (messages === undefined) return refuse(refusals.parseError)
      if (!incoming.batch && rpcMethod === 'initialize' && kindOf(messages[0]!) === 'request')
        return this.#initialize(messages[0]!)
    }
    // [spec 2025-06-18 transports, protocol version header] an invalid or unsupported version MUST get 400;
    // without the header the server assumes 2025-03-26.
    if (incoming.protocolVersion !== undefined && !isSupportedVersion(incoming.protocolVersion)) {
      return refuse(refusals.unsupportedVersion, incoming.protocolVersion)
    }
    // [spec transports, listening for messages] a server that offers no GET stream MUST answer 405.
    if (method === 'GET' && !this.#options.standalone) return refuse(refusals.methodNotAllowed)
    // An event ID without a session is meaningless: refused, never looked up (docs/design.md#what-a-server-must-do).
    if (lastEventId !== undefined && sessionId === undefined) {
      this.counters.refusedResumptions++
      return refuse(refusals.resumptionRefused, 'no Mcp-Session-Id')
    }
    const session = this.#sessionFor(sessionId)
    if (!(session instanceof Session)) return session
    session.lastActive = Date.now()
    switch (method) {
      case 'DELETE':
        // [spec transports, session management] a server without sessions has nothing to end.
        if (session.id === undefined) return refuse(refusals.methodNotAllowed)
        this.#expire(session, true)
        return new Response(null, {status: 200})
      case 'GET':
        return this.#get(session, lastEventId)
      case 'POST':
        return this.#post(session, messages!, incoming.batch)
      default:
        return refuse(refusals.methodNotAllowed)
    }
  }

  /** The session a request names, or the refusal to send. */
  #sessionFor(sessionId: string | undefined): Session | Response {
    if (!this.#options.sessions) return this.#stateless ?? refuse(refusals.notInitialized)
    // [spec transports, session management] a request after initialize SHOULD get 400 without the session ID...
    if (sessionId === undefined) return refuse(refusals.sessionRequired)
    // ...and MUST get 404 once the session is gone.
    return this.#sessions.get(sessionId) ?? refuse(refusals.sessionNotFound)
  }

  #initialize(request: JsonObject): Response {
    const params = isObject(request['params']) ? request['params'] : {}
    const asked = params['protocolVersion']
    // [spec lifecycle, version negotiation] the client's version if supported, otherwise the server's latest.
    const version =
      this.#options.protocolVersion ?? (typeof asked === 'string' && isSupportedVersion(asked) ? asked : latestVersion)
    const id = this.#options.sessions
      ? (this.#options.sessionIds[this.#sessionCount] ?? `session-${this.#sessionCount + 1}`)
      : undefined
    this.#sessionCount++
    const session = new Session(id, version, Date.now())
    if (id === undefined) this.#stateless = session
    else this.#sessions.set(id, session)
    const result = {
      protocolVersion: version,
      capabilities: capabilitiesOf(this.#options.catalog),
      serverInfo: this.#options.serverInfo,
    }
    // [spec transports, session management] the session ID comes with the response to initialize.
    const headers: Record<string, string> = id === undefined ? {} : {'mcp-session-id': id}
    return Response.json({jsonrpc: '2.0', id: request['id'], result}, {headers})
  }

  async #post(session: Session, messages: JsonObject[], batch: boolean): Promise<Response> {
    // [spec 2025-06-18 transports] a POST carries one message; 2025-03-26 allowed a batch.
    if (batch && session.protocolVersion !== '2025-03-26') return refuse(refusals.batchNotSupported)
    if (messages.some((message) => kindOf(message) === 'invalid')) return refuse(refusals.parseError, 'not JSON-RPC')
    for (const message of messages) if (kindOf(message) === 'response') this.#answer(session, message)
    const requests = messages.filter((message) => kindOf(message) === 'request')
    // [spec transports, sending messages] only notifications and responses: 202 and no body.
    if (requests.length === 0) return new Response(null, {status: 202})
    if (this.#options.json) {
      // Notifications and server requests of the call go to the standalone stream, as they cannot ride a JSON body.
      const send = (message: JsonObject): void => {
        if (session.latestStandalone !== undefined) this.#emit(session.latestStandalone, message)
      }
      const answers = await Promise.all(
        requests.map((request) => this.#execute(session, request, send, session.latestStandalone)),
      )
      return Response.json(batch ? answers : answers[0])
    }
    const corruption = requests.some((request) => request['method'] === 'tools/call')
      ? this.#take.corruption()
      : undefined
    // A proxy's error page where SSE was announced: nothing the client can parse, and the tool never ran.
    if (corruption?.kind === 'sse') return errorPageAsSse()
    const stream = this.#newStream(session, 'request', requests[0]!['id'] as RequestId)
    const response = stream.open([], this.#take.cut('POST'))
    // [spec 2025-11-25 transports] the server SHOULD at once send an event with an ID and empty data (priming).
    if (this.#options.priming ?? session.protocolVersion >= '2025-11-25') {
      if (this.#options.retryMs !== undefined) stream.connection?.raw(`retry: ${this.#options.retryMs}\n`)
      this.#emitData(stream, '')
    }
    if (corruption?.kind === 'json') this.#emitData(stream, '{not json')
    const send = (message: JsonObject): void => {
      this.#emit(stream, message)
    }
    const run = async (request: JsonObject): Promise<void> => {
      const answer = await this.#execute(session, request, send, stream)
      // A faulty server writes a result only to a live connection: with none, it is gone (src/testing/modes.ts).
      if (stream.connection === undefined && !keepsUnreadResult(this.#mode)) this.counters.droppedResults++
      else send(answer)
    }
    void Promise.all(requests.map(run)).then(() => {
      stream.finished = true
      // [spec transports, sending messages] after the response the server SHOULD end the stream.
      stream.connection?.close()
    })
    return response
  }

  #get(session: Session, lastEventId: string | undefined): Response {
    if (lastEventId === undefined) {
      // Session resumption: a fresh stream; nothing is replayed, pending server requests are re-emitted.
      const stream = this.#newStream(session, 'standalone')
      session.latestStandalone = stream
      const response = stream.open([], this.#take.cut('GET'))
      this.#attachPending(session, stream)
      return response
    }
    // Stream resumption: the event ID's stream is replayed after it, and nothing is re-emitted.
    const resumption = findResumption(this.#mode, session, lastEventId, this.#global)
    if (resumption === undefined) {
      this.counters.refusedResumptions++
      return refuse(
        refusals.resumptionRefused,
        `${lastEventId} is not an event of a stream of session ${String(session.id)}`,
      )
    }
    return resumption.stream.open(resumption.replay, this.#take.cut('GET'))
  }

  /**
   * On any new stream attached without `Last-Event-ID`: every pending request again, or cancelled
   * (docs/design.md#what-a-server-must-do).
   */
  #attachPending(session: Session, stream: EventStream): void {
    if (!reemitsOnAttach(this.#mode)) return
    for (const [id, pending] of session.pending) {
      if (this.#options.pendingOnAttach === 're-emit') {
        this.counters.reemittedRequests++
        this.#emit(stream, pending.message)
        continue
      }
      session.pending.delete(id)
      this.counters.cancelledRequests++
      const reason = 'the stream that carried it was lost'
      this.#emit(stream, {jsonrpc: '2.0', method: 'notifications/cancelled', params: {requestId: id, reason}})
      pending.resolve({
        jsonrpc: '2.0',
        id,
        error: {code: errorCodes.requestCancelled, message: `Request cancelled: ${reason}`},
      })
    }
  }

  #newStream(session: Session, kind: 'request' | 'standalone', requestId?: RequestId): EventStream {
    const stream = new EventStream(`${kind === 'request' ? 'p' : 'g'}${++this.#streamCount}`, kind, session, requestId)
    session.streams.set(stream.id, stream)
    return stream
  }

  #emit(stream: EventStream, message: JsonObject): void {
    this.#emitData(stream, JSON.stringify(message))
  }

  /** Buffers an event on its stream, in its session's log and in the global log, then writes it if read. */
  #emitData(stream: EventStream, data: string): void {
    const event: StoredEvent = {id: nextEventId(this.#mode, stream), data, stream}
    stream.events.push(event)
    stream.session.log.push(event)
    this.#global.push(event)
    stream.write(event, false)
  }

  #answer(session: Session, answer: JsonObject): void {
    recordAnswer(this.answers, answer)
    const id = answer['id'] as RequestId
    const pending = session.pending.get(id)
    if (pending === undefined) {
      this.counters.unmatchedAnswers++
      return
    }
    session.pending.delete(id)
    pending.resolve(answer)
  }

  /** Runs one request; resolves with its response. `send` carries its notifications and server requests. */
  #execute(
    session: Session,
    request: JsonObject,
    send: (message: JsonObject) => void,
    stream: EventStream | undefined,
  ): Promise<JsonObject> {
    return execute(request, {
      catalog: this.#options.catalog,
      session,
      send,
      streamId: stream?.id,
      executed: (tool) => {
        this.executions[tool] = (this.executions[tool] ?? 0) + 1
      },
      later: (message) => {
        if (session.latestStandalone !== undefined) this.#emit(session.latestStandalone, message)
      },
      nextTaskId: () => `task-${++this.#taskCount}`,
      taskPollIntervalMs: this.#options.taskPollIntervalMs,
    })
  }

  #expire(session: Session, closeConnections: boolean): void {
    if (session.id === undefined) this.#stateless = undefined
    else this.#sessions.delete(session.id)
    if (closeConnections) session.disconnect('close')
  }

  /** Garbage-collects the sessions idle for longer than `sessionIdleMs`. */
  #collectIdle(): void {
    const oldest = Date.now() - this.#options.sessionIdleMs
    for (const session of this.#sessions.values()) if (session.lastActive < oldest) this.#expire(session, true)
  }

  #all(): Session[] {
    return this.#stateless === undefined ? [...this.#sessions.values()] : [...this.#sessions.values(), this.#stateless]
  }

  #find(id: string | undefined): Session {
    const session = id === undefined ? this.#all()[0] : this.#all().find((candidate) => candidate.id === id)
    if (session === undefined)
      throw new Error(id === undefined ? 'The reference server has no session' : `No session ${id}`)
    return session
  }
}
