/**
 * What the reference server lets a test see: every request with both resumption headers, and read-only
 * snapshots of its sessions and streams. A server should log both headers on every reconnect and count replayed
 * events and re-emitted requests apart, since they should move independently (docs/design.md#what-a-server-must-do).
 */
import type {Incoming, JsonObject, RequestId} from './protocol.ts'
import type {EventStream, Session} from './session.ts'

/** One request as the server saw it, and the status it answered. */
export interface LoggedRequest {
  method: string
  sessionId: string | undefined
  lastEventId: string | undefined
  protocolVersion: string | undefined
  /** The JSON-RPC method of a POST; undefined for a response (the client's answer to a server request). */
  rpcMethod: string | undefined
  status: number
}

/** Server-wide counters. Replayed events are counted per stream ({@link StreamView.replayed}). */
export interface ServerCounters {
  /** Pending server requests written again on a stream attached without `Last-Event-ID`. */
  reemittedRequests: number
  /** Pending server requests cancelled on such a stream (`pendingOnAttach: 'cancel'`). */
  cancelledRequests: number
  /** `Last-Event-ID`s refused ({@link refusals}.resumptionRefused). */
  refusedResumptions: number
  /** Client answers to server requests the session does not hold (unknown, already answered, or of another session). */
  unmatchedAnswers: number
  /** Results lost as no connection of their stream was live (`mode: 'live-result-only'`). */
  droppedResults: number
}

export interface StreamView {
  /** `p<n>` for a POST stream, `g<n>` for a standalone GET stream. */
  id: string
  kind: 'request' | 'standalone'
  requestId: RequestId | undefined
  /** Every event emitted on the stream, priming events included (empty `data`). */
  events: {id: string; data: string}[]
  /** A client is reading the stream now. */
  connected: boolean
  /** The response has been written. */
  finished: boolean
  /** Events written live on a connection. */
  sent: number
  /** Events written again after a `Last-Event-ID`. */
  replayed: number
}

export interface PendingRequestView {
  sessionId: string | undefined
  id: RequestId
  method: string
  /** The stream it was first written on, if any. */
  streamId: string | undefined
}

export interface SessionView {
  /** Undefined for a server that mints no session. */
  id: string | undefined
  protocolVersion: string
  streams: StreamView[]
  pending: PendingRequestView[]
}

/** The log entry of a request, its status still to come. */
export function logEntryOf(incoming: Incoming): LoggedRequest {
  const first = incoming.messages?.[0]
  const {method, sessionId, lastEventId, protocolVersion} = incoming
  return {
    method,
    sessionId,
    lastEventId,
    protocolVersion,
    rpcMethod: typeof first?.['method'] === 'string' ? first['method'] : undefined,
    status: 0,
  }
}

/** The entries of one HTTP method (and JSON-RPC method), in order. */
export function requestsIn(
  log: readonly LoggedRequest[],
  method: string,
  rpcMethod: string | undefined,
): LoggedRequest[] {
  return log.filter((entry) => entry.method === method && (rpcMethod === undefined || entry.rpcMethod === rpcMethod))
}

/** Adds `answer`, a client's answer to a server request, to the answers recorded for its ID. */
export function recordAnswer(answers: Map<RequestId, JsonObject[]>, answer: JsonObject): void {
  const id = answer['id'] as RequestId
  answers.set(id, [...(answers.get(id) ?? []), answer])
}

export function viewOfStream(stream: EventStream): StreamView {
  return {
    id: stream.id,
    kind: stream.kind,
    requestId: stream.requestId,
    events: stream.events.map(({id, data}) => ({id, data})),
    connected: stream.connection !== undefined,
    finished: stream.finished,
    sent: stream.sent,
    replayed: stream.replayed,
  }
}

export function viewOfPending(session: Session): PendingRequestView[] {
  return [...session.pending].map(([id, pending]) => ({
    sessionId: session.id,
    id,
    method: String(pending.message['method']),
    streamId: pending.streamId,
  }))
}

export function viewOfSession(session: Session): SessionView {
  return {
    id: session.id,
    protocolVersion: session.protocolVersion,
    streams: [...session.streams.values()].map(viewOfStream),
    pending: viewOfPending(session),
  }
}
