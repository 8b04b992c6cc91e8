import type {TransportSendOptions} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage, JSONRPCResultResponse} from '@modelcontextprotocol/sdk/types.js'
import type {AnswerQueue} from '../delivery/answer-queue.ts'
import type {CallJournal} from '../calls/call-journal.ts'
import {retryWithBackoff, type ReconnectPolicy} from '../policy/backoff.ts'
import {classifyDeleteAnswer, classifyPostAnswer, isTransient} from '../policy/decision.ts'
import {asError, isTransportError, neverConnected, TransportError} from '../errors.ts'
import type {CallRecord} from '../events.ts'
import {discard, exchange, httpError, isEventStream, isJson, type HttpClient} from '../wire/http.ts'
import type {Inbox} from '../delivery/inbox.ts'
import {moment} from '../delivery/server-requests.ts'
import {
  cancelledRequestIdOf,
  methodOf,
  parseMessages,
  requestIdOf,
  responseIdOf,
  type JsonRpcId,
} from '../wire/jsonrpc.ts'
import {rpcErrorAnswering} from '../modern/answers.ts'
import {requestHeaders} from '../modern/headers.ts'
import type {Session} from './session.ts'
import type {OpenStreams} from '../streams/open-streams.ts'
import type {Standalone} from '../streams/standalone.ts'
import {requestKey, type Stream, type StreamInit} from '../streams/stream.ts'

/** One message on its way, as `send` prepared it, with what to undo when it fails. */
export interface Outgoing {
  /** The message as it goes on the wire (wire request ID, renamed progress token). */
  readonly message: JSONRPCMessage
  readonly method: string | undefined
  /** How messages name it: its method and the app's own request ID. */
  readonly what: string
  /** The wire ID of a request; undefined for a notification or an answer. */
  readonly requestId: number | undefined
  /** The stream that will carry a request's answer. */
  readonly stream: Stream | undefined
  /** The server request this message answers, if it is an answer. */
  readonly answers: JsonRpcId | undefined
  /** The headers of this message alone (src/modern/headers.ts). */
  readonly headers: Readonly<Record<string, string>>
  /** The protocol version a 2026-07-28 request's body claims: it goes without the session. */
  readonly envelopeVersion: string | undefined
  /** For an answer to a server request, the session it was given in: it goes in that session or not at all. */
  readonly answeredIn: {sessionId: string | undefined} | undefined
}

/** What the Client gives with one message: the v1 SDK's `TransportSendOptions`, and what the v2 SDK's adds. */
export interface SendOptions extends TransportSendOptions {
  /** Headers of this message's POST alone (the v2 Client's `Mcp-Param-*`); the protocol's own cannot be overridden. */
  headers?: Readonly<Record<string, string>> | undefined
  /** [spec 2026-07-28 cancellation] aborting it cancels this request: its POST and stream end, nothing is sent again. */
  requestSignal?: AbortSignal | undefined
  /** Called when this request's stream ends for any reason but `requestSignal` or `close()`. */
  onRequestStreamEnd?: (() => void) | undefined
}

/** What sending needs from the transport. */
export interface PostHost {
  readonly http: HttpClient
  readonly session: Session
  readonly inbox: Inbox
  readonly streams: OpenStreams
  /** How an answer the server could not take now is sent again. */
  readonly policy: ReconnectPolicy
  /** Where answers and notifications wait when `limits.maxConcurrentAnswers` are on their way. */
  readonly answers: AnswerQueue
  addStream(init: StreamInit): Stream
  /** Ends the session (a new one is being initialized); resolves when its records are gone. */
  endSession(error: TransportError): Promise<void>
  /** Follows a request's answer stream in the background. */
  /** Reads `body`, the stream of a POST sent at `sentAt` (a `moment()`). */
  follow(stream: Stream, body: ReadableStream<Uint8Array>, sentAt: number): void
  expireSession(error: TransportError): Promise<void>
  /**
   * A POST that carried session `sessionId` was refused 400 or 410: the status of the session's GET when that refused
   * the session too, else undefined (docs/failures.md#a-session-the-server-no-longer-knows).
   */
  sessionRefused(
    sessionId: string,
    refusal: TransportError,
    requestId: number | undefined,
    signal: AbortSignal,
  ): Promise<number | undefined>
  /**
   * The standalone GET stream: opened once the session is initialized, woken from its degraded wait by a request
   * answered, re-attached when a request may have run and its stream will not be read (its tool's server requests
   * must be re-emitted).
   */
  readonly standalone: Pick<Standalone, 'open' | 'wake' | 'wantReemission'>
  /** The call journal: a `tools/call` is recorded (resolves once stored) before it is sent. */
  readonly journal: Pick<CallJournal, 'sending' | 'receiving' | 'rejected'>
}

/**
 * Sends one message of the Client (docs/design.md#sending): the bookkeeping before it goes (a new session, an
 * answer stored, a cancellation or a request renamed to its wire ID, the stream of its answer), then the POST.
 * `options.onresumptiontoken` hears each event ID of a request's stream.
 */
export async function send(
  host: PostHost,
  message: JSONRPCMessage,
  lifetime: AbortSignal,
  options: SendOptions = {},
): Promise<void> {
  const {session, inbox} = host
  // The SDK's token path GETs instead of POSTing; here streams resume on their own, so a token is a port error.
  if (options.resumptionToken !== undefined)
    throw new TransportError('protocol', 'resumptionToken is not supported: this transport resumes streams itself')
  const method = methodOf(message)
  const clientId = requestIdOf(message)
  // A header that cannot go on the wire fails the call here, before anything is recorded or sent.
  const {headers, envelopeVersion} = requestHeaders(message, options.headers)
  const {requestSignal} = options
  if (requestSignal?.aborted === true)
    throw new TransportError('aborted', `${method ?? 'The request'} was cancelled before it was sent`)
  // The Client relies on a session that expired: a request sent without it would meet "not initialized".
  if (clientId !== undefined && method !== 'initialize' && session.expired !== undefined) {
    throw new TransportError(
      'session-expired',
      `Session ${session.expired} has expired; ${String(method)} was not sent: initialize a new session`,
    )
  }
  // An answer to a server request of a session that expired has nowhere to go: the request died with the session.
  if (responseIdOf(message) !== undefined && session.expired !== undefined) return
  // A stored session's handshake is answered from the store: the server knows this session already.
  const replayed = method === 'initialize' ? session.takeReplay() : undefined
  if (replayed !== undefined) {
    await Promise.resolve()
    inbox.answerFromStore(clientId!, replayed as JSONRPCResultResponse['result'])
    return
  }
  if (method === 'notifications/initialized' && session.takeInitialized()) return
  // [spec transports, session management] initialize starts a new session and carries no session ID.
  if (method === 'initialize') {
    session.initializing()
    if (session.id !== undefined) await host.endSession(new TransportError('aborted', 'A new session was initialized'))
  }
  const answeredIn = responseIdOf(message) === undefined ? undefined : {sessionId: session.id}
  // The answer to a server request is stored before it is sent: a restart must not run its handler again.
  const recorded = inbox.serverRequests.recordAnswer(message)
  if (recorded !== undefined) await recorded.stored
  // Resume, then answer: the answer to a request a previous process kept waits for the stream that brought it.
  if (recorded?.resumed !== undefined) await recorded.resumed
  const answers = recorded?.id
  const cancelledId = cancelledRequestIdOf(message)
  // Stryker disable next-line ConditionalExpression: cancelling no ID cancels nothing
  const cancelled = cancelledId === undefined ? undefined : inbox.requests.cancel(message, cancelledId)
  if (cancelled !== undefined) {
    // [spec 2025-06-18 cancellation] cancelling is a POST naming the wire ID; the request's stream stops.
    message = cancelled.message
    host.streams.get(requestKey(cancelled.wireId))?.controller.abort()
  }
  // [spec basic] a request ID is never reused within a session, across processes too: the wire gets its own.
  const requestId = clientId === undefined ? undefined : await session.nextWireId()
  const {onRequestStreamEnd} = options
  const onEnd =
    onRequestStreamEnd === undefined ? undefined : () => requestSignal?.aborted !== true && onRequestStreamEnd()
  const stream =
    requestId === undefined
      ? undefined
      : host.addStream({
          kind: 'request',
          requestId,
          call: callOf(message, method!, clientId!),
          orphan: false,
          stored: undefined,
          onCursor: options.onresumptiontoken,
          onEnd,
        })
  // The call journal records a call before it goes (docs/design.md#the-call-journal).
  await host.journal.sending(message, requestId, session.id)
  if (requestId !== undefined) message = inbox.requests.register(message, requestId)
  // [spec 2026-07-28 cancellation] the Client aborts the request's own signal: the POST and its stream end, and the
  // Client, which has settled the call itself, hears nothing more of it.
  if (stream !== undefined && requestSignal !== undefined) {
    const cancel = (): void => {
      inbox.requests.forget(requestId!)
      host.journal.rejected(requestId!)
      stream.controller.abort(new TransportError('aborted', `${String(method)} was cancelled`))
    }
    // The listener goes with the stream, which cancel() ends.
    requestSignal.addEventListener('abort', cancel, {signal: stream.controller.signal})
  }
  // Only requests are named with it: each has a method and an ID.
  const what = `${String(method)} ${String(clientId)}`
  const outgoing: Outgoing = {message, method, what, requestId, stream, answers, headers, envelopeVersion, answeredIn}
  if (stream !== undefined) await post(host, outgoing, stream.controller.signal)
  else if (answers !== undefined)
    await host.answers.run((signal) => postAnswer(host, outgoing, answers, signal), lifetime)
  else await host.answers.run((signal) => post(host, outgoing, signal), lifetime)
}

/** [spec transports, session management] ends `sessionId` with `DELETE`: the answer's status, unless refused (thrown). */
export async function deleteSession(
  host: Pick<PostHost, 'http' | 'session'>,
  sessionId: string,
  signal: AbortSignal,
): Promise<number> {
  const response = await exchange(host.http, {
    method: 'DELETE',
    sessionId,
    protocolVersion: host.session.protocolVersion,
    signal,
  })
  if (classifyDeleteAnswer(response.status) === 'refused') throw await httpError(host.http, response, 'DELETE')
  discard(response)
  return response.status
}

/**
 * POSTs the Client's answer to server request `id`, again while the server cannot take it now (408, 425, 429, 5xx, a
 * network failure), with the reconnect backoff: a server request left unanswered would hang its tool. An answer
 * sent twice is harmless; one lost is not (docs/failures.md).
 */
async function postAnswer(host: PostHost, outgoing: Outgoing, id: JsonRpcId, signal: AbortSignal): Promise<void> {
  let taken = false
  try {
    const refusal = await retryWithBackoff(
      async () => {
        try {
          await post(host, outgoing, signal)
          return undefined
        } catch (error) {
          if (isTransportError(error, 'network') || (isTransportError(error, 'http') && isTransient(error.status ?? 0)))
            throw error
          return {error}
        }
      },
      host.policy,
      signal,
      () => {},
    )
    if (refusal !== undefined) throw refusal.error
    // Not sent when its session ended meanwhile (see post()).
    taken = outgoing.answeredIn?.sessionId === host.session.id
  } finally {
    // On its way until its last attempt is over: a copy of the request read between two attempts gets nothing.
    host.inbox.serverRequests.answerSent(id, taken)
  }
}

/**
 * POSTs one message and acts on the answer (docs/design.md#sending): resolves once a request's answer is delivered
 * or its stream is followed, a notification's or answer's acceptance is seen; rejects with what the caller must
 * know. A request that may have reached the server is never sent again.
 */
async function post(host: PostHost, outgoing: Outgoing, signal: AbortSignal): Promise<void> {
  const {message, method, what, requestId, stream, envelopeVersion} = outgoing
  const {session, inbox} = host
  const fail = (error: unknown): unknown => {
    if (requestId === undefined) return error
    inbox.requests.forget(requestId)
    // The Client hears of the failure from this rejection: its journaled call is delivered.
    host.journal.rejected(requestId)
    host.streams.remove(stream!, false)
    // A connection never opened sent nothing: safe to send again. Any other failure may have let it run.
    const failure = isTransportError(error, 'network')
      ? new TransportError(neverConnected(error) ? 'not-sent' : 'outcome-unknown', `${what}: ${error.message}`, {
          cause: error,
        })
      : error
    // [docs/failures.md] its tool may be asking the client meanwhile, on a stream nobody reads.
    if (isTransportError(failure, 'outcome-unknown')) host.standalone.wantReemission()
    return failure
  }
  // The session ended while the answer waited (its store write, its stream, its turn): the request died with it, and
  // its answer means nothing without it, nor in the next one.
  if (outgoing.answeredIn !== undefined && outgoing.answeredIn.sessionId !== session.id) return
  // [spec 2026-07-28] a request of that era goes without the session: the era has none.
  const sentSession = envelopeVersion === undefined ? session.id : undefined
  let response: Response
  // Before the POST goes: a copy of a server request on its stream may have been written before an answer was taken.
  const sentAt = moment()
  try {
    response = await exchange(host.http, {
      method: 'POST',
      sessionId: sentSession,
      protocolVersion: session.protocolVersion,
      headers: outgoing.headers,
      body: JSON.stringify(message),
      signal,
    })
  } catch (error) {
    throw fail(error)
  }
  const contentType = response.headers.get('content-type')
  const answer = classifyPostAnswer({
    status: response.status,
    body: bodyOf(response, contentType),
    sentSession: sentSession !== undefined,
    request: requestId !== undefined,
  })
  // The session is gone: the message is never sent again, in any path.
  const expired = async (why: string): Promise<TransportError> => {
    const error = new TransportError(
      'session-expired',
      `Session ${sentSession} has expired (${why}); ${method ?? 'the message'} was not sent again`,
      {status: response.status},
    )
    fail(error)
    await host.expireSession(error)
    return error
  }
  if (answer === 'session-expired') {
    discard(response)
    throw await expired('HTTP 404')
  }
  if (answer === 'refused' || answer === 'session-in-doubt') {
    const error = await httpError(host.http, response, `POST ${method ?? 'response'}`)
    // [docs/failures.md#a-session-the-server-no-longer-knows] the session's refusal, or the message's: its GET tells.
    const confirmed =
      answer === 'session-in-doubt' ? await host.sessionRefused(sentSession!, error, requestId, signal) : undefined
    if (confirmed !== undefined)
      throw await expired(`HTTP ${response.status}, and ${confirmed} to a GET of the session`)
    // [SDK interop] a 2026-07-28 request refused 400 with its JSON-RPC error (a header mismatch, an unsupported
    // version) is answered with it, as the v2 SDK's transport does: the Client's version negotiation reads it there.
    // Only a request has an envelope.
    const rpcError = envelopeVersion === undefined ? undefined : rpcErrorAnswering(error, requestId!)
    if (rpcError === undefined) throw fail(error)
    host.streams.remove(stream!, false)
    await inbox.deliver([rpcError])
    return
  }
  if (answer === 'outcome-unknown') {
    discard(response)
    const why = response.ok
      ? `answered ${response.status} with ${contentType === null ? 'no content type' : `content type ${JSON.stringify(contentType)}`}`
      : `failed with HTTP ${response.status}`
    throw fail(
      new TransportError('outcome-unknown', `${what} ${why}: it may have run, and was not sent again`, {
        status: response.status,
      }),
    )
  }
  // The server answered a request: the way to it is open again.
  host.standalone.wake()
  if (method === 'initialize' && requestId !== undefined) {
    try {
      session.offer(requestId, response.headers.get('mcp-session-id'))
    } catch (error) {
      discard(response)
      throw fail(error)
    }
  }
  // Only a message that is no request is 'accepted' (2xx); a request always has its stream.
  if (requestId === undefined) {
    discard(response)
    if (method === 'notifications/initialized') host.standalone.open('open', undefined)
    return
  }
  if (answer === 'event-stream') {
    host.follow(stream!, response.body!, sentAt)
    return
  }
  let messages: JSONRPCMessage[]
  try {
    messages = parseMessages(await response.text(), [], host.http.redact)
  } catch (error) {
    // The server took the request: whatever went wrong with its answer, it may have run.
    throw fail(
      new TransportError('outcome-unknown', `The answer to ${what} could not be read: ${asError(error).message}`, {
        cause: error,
      }),
    )
  }
  host.streams.remove(stream!, false)
  for (const answer of messages) await host.journal.receiving(answer)
  await inbox.deliver(messages)
  // Built only when needed: an error's stack trace costs more than the rest of a request's own work.
  // Stryker disable next-line ConditionalExpression: settle ignores a request no longer pending
  if (inbox.requests.isPending(requestId)) {
    inbox.settle(
      requestId,
      new TransportError('outcome-unknown', `The JSON answer to ${what} did not contain its response`),
    )
  }
}

/** What a POST's answer carries, as {@link classifyPostAnswer} tells it. */
function bodyOf(response: Response, contentType: string | null): 'event-stream' | 'json' | 'other' {
  if (response.body !== null && isEventStream(contentType)) return 'event-stream'
  if (response.body !== null && isJson(contentType)) return 'json'
  // Stryker disable next-line StringLiteral: only 'event-stream' and 'json' are told apart
  return 'other'
}

/** Request `message` as the app sent it: what a later process needs to say whose answer it is. */
function callOf(message: JSONRPCMessage, method: string, clientId: JsonRpcId): CallRecord {
  const params = (message as {params?: {name?: unknown; uri?: unknown; _meta?: Record<string, unknown>}}).params
  const name = typeof params?.name === 'string' ? params.name : typeof params?.uri === 'string' ? params.uri : undefined
  const call: CallRecord = {method, name, clientId}
  // [SEP-414] the W3C trace context of `_meta`, kept with the stream for a later process's telemetry.
  const {traceparent, tracestate} = params?._meta ?? {}
  if (typeof traceparent === 'string') call.traceparent = traceparent
  if (typeof tracestate === 'string') call.tracestate = tracestate
  return call
}
