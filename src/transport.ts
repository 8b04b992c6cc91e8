import type {Transport, TransportSendOptions} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage, MessageExtraInfo} from '@modelcontextprotocol/sdk/types.js'
import {isTransportError, TransportError} from './errors.ts'
import {zeroMetrics, type TransportEvent, type TransportMetrics} from './events.ts'
import {discard, exchange, httpError, type HttpClient} from './http.ts'
import {send, type PostHost} from './post.ts'
import {Inbox, keyOfId} from './inbox.ts'
import {requestIdOf, responseIdOf} from './jsonrpc.ts'
import {resolveOptions, type ResolvedOptions, type ResumableHTTPClientTransportOptions} from './options.ts'
import {OwnedStore} from './persistence/ownership.ts'
import {SessionRecords} from './persistence/records.ts'
import type {JsonValue} from './persistence/store.ts'
import {Session} from './session.ts'
import {StreamLifecycle, type LifecycleHost, type Opening} from './streams/lifecycle.ts'
import {OpenStreams} from './streams/open-streams.ts'
import {asError, deliverAll, readConnection, type ReaderHost} from './streams/reader.ts'
import {requestKey, wireIdOfKey, type Stream, type StreamInit} from './streams/stream.ts'

/**
 * An MCP Streamable HTTP client transport that resumes: a broken stream is resumed from its own cursor,
 * a lost stream is replaced by re-attaching the session, a 404 ends the session; a request is never sent twice.
 * A drop-in replacement for the SDK's `StreamableHTTPClientTransport` (docs/design.md).
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
  readonly #session: Session
  readonly #streams: OpenStreams
  readonly #lifecycle: StreamLifecycle
  readonly #postHost: PostHost
  /** Background work that `close()` waits for: streams and store writes. */
  readonly #tasks = new Set<Promise<void>>()
  /** The session the app handed over, attached on the first `start()` only. */
  #sessionIdOption: string | undefined
  #standaloneOffered = true
  /** Present between `start()` and `close()`; the root of the abort tree. */
  #lifetime: AbortController | undefined

  constructor(url: URL, options?: ResumableHTTPClientTransportOptions) {
    this.#options = resolveOptions(url, options)
    this.#http = this.#options.http
    this.#sessionIdOption = this.#options.sessionId
    const report = (error: unknown, key: string): void => this.#emit({type: 'store-error', key, error})
    const owned = new OwnedStore(this.#options.store, this.#options.namespace, this.#options.ownership, report)
    this.#records = new SessionRecords(owned, this.#options.namespace, report)
    this.#session = new Session(this.#records, owned)
    this.#streams = new OpenStreams(this.#records, () => this.#session.id, (task) => this.#track(task))
    this.#inbox = new Inbox({
      deliver: (message) => this.#deliver(message),
      resendAnswer: (answer) => this.#track(this.#resend(answer)),
      onEvent: (event) => this.#emit(event),
      forgetKept: (key) => this.#track(this.#session.keep(key, undefined)),
      metrics: this.#metrics,
    })
    const reader = this.#readerHost()
    this.#lifecycle = new StreamLifecycle(this.#lifecycleHost(reader))
    this.#postHost = {
      http: this.#http,
      session: this.#session,
      inbox: this.#inbox,
      streams: this.#streams,
      addStream: (init) => this.#addStream(init),
      endSession: (error) => this.#endSession(error).cleared,
      follow: (stream, body) => this.#track(this.#lifecycle.follow(stream, body)),
      expireSession: (error) => this.#expireSession(error, false),
      initialized: () => this.#openStandalone('open', undefined),
      deliver: (messages) => deliverAll(reader, messages, undefined, false),
    }
  }

  /** The session ID, once the server assigned one (or the one attached to); undefined without a session. */
  get sessionId(): string | undefined {
    return this.#session.id
  }

  /** The negotiated protocol version, sent as `MCP-Protocol-Version`. */
  get protocolVersion(): string | undefined {
    return this.#session.protocolVersion
  }

  /**
   * The server's answer to `initialize`: kept with the session, so a process that re-attaches (and whose
   * Client therefore skips `initialize`) can still read the server's capabilities and instructions.
   */
  get initializeResult(): JsonValue | undefined {
    return this.#session.initializeResult
  }

  /** A snapshot of the counters. */
  get metrics(): Readonly<TransportMetrics> {
    return {...this.#metrics}
  }

  async start(): Promise<void> {
    if (this.#lifetime !== undefined) throw new Error('ResumableHTTPClientTransport already started')
    const lifetime = (this.#lifetime = new AbortController())
    const requested = this.#sessionIdOption
    this.#sessionIdOption = undefined
    const sessionId = await this.#session.attach(requested, lifetime.signal)
    if (sessionId === undefined) return
    const unanswered = this.#inbox.restore(await this.#records.loadServerRequests(sessionId))
    const stored = await this.#records.loadStreams(sessionId)
    // Session resumption: the Client skips `initialize` because `sessionId` is set; the transport re-attaches the
    // standalone stream, from its cursor when it kept one...
    const standalone = stored.get('standalone')
    this.#openStandalone('reattach', standalone === undefined ? undefined : {record: standalone, sessionId})
    // ...and resumes every response stream the previous process left unfinished (stream resumption).
    for (const [key, record] of stored) {
      const requestId = wireIdOfKey(key)
      if (requestId === undefined) continue
      this.#open({kind: 'request', requestId, call: record.call, orphan: true, stored: {record, sessionId}}, 'resume')
    }
    // Requests the previous process received but never answered: no stream brings them again.
    if (unanswered.length > 0) this.#track(this.#inbox.handOver(unanswered, lifetime.signal))
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const lifetime = this.#requireStarted()
    if (options?.resumptionToken !== undefined) {
      // The SDK's token path GETs instead of POSTing; here streams resume on their own, so a token is a port error.
      throw new TransportError('protocol', 'resumptionToken is not supported: this transport resumes streams itself')
    }
    await send(this.#postHost, message, lifetime.signal)
  }

  setProtocolVersion(version: string): void {
    if (this.#session.endsSession(version)) {
      this.#track(this.#endSession(new TransportError('aborted', `Protocol ${version} has no sessions`)).cleared)
    }
    this.#session.setProtocolVersion(version)
  }

  /** Ends the session with `DELETE`. 200, 204, 404 and 405 all clear the local session and its cursors. */
  async terminateSession(): Promise<void> {
    const lifetime = this.#requireStarted()
    const sessionId = this.#session.id
    if (sessionId === undefined) return
    const response = await exchange(this.#http, {method: 'DELETE', sessionId, protocolVersion: this.#session.protocolVersion, signal: lifetime.signal})
    // [spec transports, session management] a server MAY answer 405: it does not let clients end sessions.
    if (!response.ok && response.status !== 404 && response.status !== 405) throw await httpError(this.#http, response, 'DELETE')
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
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks])
    await this.#records.settled()
    await this.#session.release()
    this.#inbox.settleAll(closed)
    const onclose = this.onclose
    // [SDK interop] Client.connect chains the callbacks it finds on a transport: detached here, so that a
    // Client connected again (after a session expired) does not receive every message twice.
    this.onmessage = this.onerror = this.onclose = undefined
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
      keepServerRequest: (message) => (this.#inbox.keepRequest(message) ? this.#session.keep(keyOfId(requestIdOf(message)!), message) : undefined),
      take: (message, reemitted) => this.#take(message, reemitted),
      emit: (event) => this.#emit(event),
      report: (error) => this.#report(error),
      track: (task) => this.#track(task),
    }
  }

  /** What the reconnect state machine needs of this transport. */
  #lifecycleHost(reader: ReaderHost): LifecycleHost {
    return {
      ...reader,
      http: this.#http,
      protocolVersion: () => this.#session.protocolVersion,
      read: (connection, body) => readConnection(reader, connection, body),
      settle: (stream, error) => {
        if (stream.requestId !== undefined) this.#inbox.settle(stream.requestId, error)
      },
      expireSession: (error) => this.#expireSession(error, true),
      standaloneNotOffered: () => (this.#standaloneOffered = false),
      reattachStandalone: () => this.#openStandalone('reattach', undefined),
      removeStream: (stream) => this.#streams.remove(stream, this.#lifetime === undefined),
    }
  }

  /** Hands `message` to the inbox, once the session has seen it (it may answer initialize). */
  #take(message: JSONRPCMessage, reemitted: boolean): void {
    const responseId = responseIdOf(message)
    if (responseId !== undefined) {
      const result = 'result' in message ? (message.result as JsonValue) : undefined
      const adopted = this.#session.settleOffer(responseId, result)
      if (adopted !== undefined) {
        this.#metrics.newSessions++
        this.#emit({type: 'session-started', sessionId: adopted})
      }
    }
    const answered = this.#inbox.receive(message, reemitted)
    if (answered === undefined) return
    const owner = this.#streams.get(requestKey(answered))
    if (owner !== undefined) owner.answered = true
  }

  /**
   * [spec transports, session management] On 404 the session is gone: forget it and every cursor of it, settle
   * every pending request. `background`: found by a stream, so reported through `onerror` (once).
   */
  async #expireSession(error: TransportError, background: boolean): Promise<void> {
    const sessionId = this.#session.id
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
    const cleared = this.#session.end()
    this.#inbox.forgetServerRequests()
    this.#streams.abortAll(error)
    return {settled: this.#inbox.settleAll(error), cleared}
  }

  /** Opens the standalone GET stream, unless it is open, not offered, or the era has none. */
  #openStandalone(opening: Opening, stored: StreamInit['stored']): void {
    if (this.#session.stateless || !this.#standaloneOffered || this.#streams.has('standalone')) return
    if (this.#lifetime === undefined) return
    this.#open({kind: 'standalone', requestId: undefined, call: undefined, orphan: false, stored}, opening)
  }

  #open(init: StreamInit, opening: Opening): void {
    this.#track(this.#lifecycle.open(this.#addStream(init), opening))
  }
  #addStream(init: StreamInit): Stream {
    return this.#streams.add(this.#requireStarted().signal, init)
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
