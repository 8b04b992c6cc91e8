import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {AnswerQueue} from './answer-queue.ts'
import {isTransportError, TransportError} from './errors.ts'
import {discard, exchange, httpError, isEventStream, isJson, type HttpClient} from './http.ts'
import {keyOfId, type Inbox} from './inbox.ts'
import {cancelledRequestIdOf, methodOf, parseMessages, requestIdOf, type JsonRpcId} from './jsonrpc.ts'
import type {CallRecord} from './persistence/records.ts'
import type {Session} from './session.ts'
import type {OpenStreams} from './streams/open-streams.ts'
import {requestKey, type Stream, type StreamInit} from './streams/stream.ts'

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
}

/** What sending needs from the transport. */
export interface PostHost {
  readonly http: HttpClient
  readonly session: Session
  readonly inbox: Inbox
  readonly streams: OpenStreams
  /** Where answers and notifications wait when `limits.maxConcurrentAnswers` are on their way. */
  readonly answers: AnswerQueue
  addStream(init: StreamInit): Stream
  /** Ends the session (a new one is being initialized); resolves when its records are gone. */
  endSession(error: TransportError): Promise<void>
  /** Follows a request's answer stream in the background. */
  follow(stream: Stream, body: ReadableStream<Uint8Array>): void
  expireSession(error: TransportError): Promise<void>
  /** The session is initialized: open the standalone GET stream. */
  initialized(): void
  /** Hands a JSON answer's messages to the Client, in order. */
  deliver(messages: JSONRPCMessage[]): Promise<void>
}

/**
 * Sends one message of the Client (docs/design.md#sending): the bookkeeping before it goes (a new session, an
 * answer stored, a cancellation or a request renamed to its wire ID, the stream of its answer), then the POST.
 */
export async function send(host: PostHost, message: JSONRPCMessage, lifetime: AbortSignal): Promise<void> {
  const {session, inbox} = host
  const method = methodOf(message)
  const clientId = requestIdOf(message)
  // [spec transports, session management] initialize starts a new session and carries no session ID.
  if (method === 'initialize') {
    session.initializing()
    if (session.id !== undefined) await host.endSession(new TransportError('aborted', 'A new session was initialized'))
  }
  // The answer to a server request is stored before it is sent: a restart must not run its handler again.
  const answers = inbox.recordAnswer(message)
  if (answers !== undefined) await session.keep(keyOfId(answers), message)
  const cancelledId = cancelledRequestIdOf(message)
  const cancelled = cancelledId === undefined ? undefined : inbox.cancel(message, cancelledId)
  if (cancelled !== undefined) {
    // [spec 2025-06-18 cancellation] cancelling is a POST naming the wire ID; the request's stream stops.
    message = cancelled.message
    host.streams.get(requestKey(cancelled.wireId))?.controller.abort()
  }
  // [spec basic] a request ID is never reused within a session, across processes too: the wire gets its own.
  const requestId = clientId === undefined ? undefined : await session.nextWireId()
  const stream = requestId === undefined ? undefined : host.addStream({kind: 'request', requestId, call: callOf(message), orphan: false, stored: undefined})
  if (requestId !== undefined) message = inbox.expect(message, requestId)
  const what = `${method ?? 'request'} ${String(clientId)}`
  const outgoing: Outgoing = {message, method, what, requestId, stream, answers}
  if (stream !== undefined) await post(host, outgoing, stream.controller.signal)
  else await host.answers.run((signal) => post(host, outgoing, signal), lifetime)
}

/**
 * POSTs one message and acts on the answer (docs/design.md#sending): resolves once a request's answer is delivered
 * or its stream is followed, a notification's or answer's acceptance is seen; rejects with what the caller must
 * know. A request that may have reached the server is never sent again.
 */
async function post(host: PostHost, outgoing: Outgoing, signal: AbortSignal): Promise<void> {
  const {message, method, what, requestId, stream, answers} = outgoing
  const {session, inbox} = host
  const fail = (error: unknown): unknown => {
    if (requestId !== undefined) inbox.forget(requestId)
    if (answers !== undefined) inbox.answerSent(answers)
    if (stream !== undefined) host.streams.remove(stream, false)
    // A request whose connection failed may have run: say so, so the app does not blindly retry it.
    return requestId !== undefined && isTransportError(error, 'network')
      ? new TransportError('outcome-unknown', `${what}: ${error.message}`, {cause: error})
      : error
  }
  const sentSession = session.id
  let response: Response
  try {
    response = await exchange(host.http, {method: 'POST', sessionId: sentSession, protocolVersion: session.protocolVersion, body: JSON.stringify(message), signal})
  } catch (error) {
    throw fail(error)
  }
  // [spec transports, session management] 404 to a request carrying the session ID: the session has expired.
  // The request is never sent again, in any path.
  if (response.status === 404 && sentSession !== undefined) {
    discard(response)
    const error = new TransportError('session-expired', `Session ${sentSession} has expired (HTTP 404); ${method ?? 'the message'} was not sent again`, {status: 404})
    fail(error)
    await host.expireSession(error)
    throw error
  }
  if (!response.ok) throw fail(await httpError(host.http, response, `POST ${method ?? 'response'}`))
  if (method === 'initialize' && requestId !== undefined) {
    try {
      session.offer(requestId, response.headers.get('mcp-session-id'))
    } catch (error) {
      discard(response)
      throw fail(error)
    }
  }
  if (stream === undefined || requestId === undefined) {
    // [spec transports, sending messages] notifications and responses are answered 202 with no body.
    discard(response)
    if (answers !== undefined) inbox.answerSent(answers)
    if (method === 'notifications/initialized') host.initialized()
    return
  }
  const contentType = response.headers.get('content-type')
  if (isEventStream(contentType) && response.body !== null) {
    host.follow(stream, response.body)
    return
  }
  if (!isJson(contentType)) {
    discard(response)
    throw fail(new TransportError('protocol', `POST ${method} answered with content type ${JSON.stringify(contentType)}`))
  }
  let messages: JSONRPCMessage[]
  try {
    messages = parseMessages(await response.text(), [], host.http.redact)
  } catch (error) {
    throw fail(isTransportError(error) ? error : new TransportError('network', 'Reading the response failed', {cause: error}))
  }
  host.streams.remove(stream, false)
  await host.deliver(messages)
  // Built only when needed: an error's stack trace costs more than the rest of a request's own work.
  if (inbox.isPending(requestId)) {
    inbox.settle(requestId, new TransportError('protocol', `The JSON answer to ${what} did not contain its response`))
  }
}

/** Request `message` as the app sent it: what a later process needs to say whose answer it is. */
function callOf(message: JSONRPCMessage): CallRecord | undefined {
  const method = methodOf(message)
  const clientId = requestIdOf(message)
  if (method === undefined || clientId === undefined) return undefined
  const params = (message as {params?: {name?: unknown; uri?: unknown}}).params
  const name = typeof params?.name === 'string' ? params.name : typeof params?.uri === 'string' ? params.uri : undefined
  return name === undefined ? {method, clientId} : {method, name, clientId}
}
