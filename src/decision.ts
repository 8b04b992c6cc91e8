/**
 * The reconnect decision: which kind of resumption a broken stream gets, from the combination of what the
 * transport holds. Pure and without imports: it takes facts, so the whole boundary is one table
 * (docs/design.md#the-decision).
 *
 * An event ID is a position inside one stream; a session ID is an identity across streams. Neither substitutes
 * for the other.
 */

/** Which resumption a reconnect performs. */
export type ReconnectBranch = 'stream-resumption' | 'session-resumption' | 'new-session'

export interface ReconnectInput {
  /** The session the transport holds now, if any. */
  sessionId: string | undefined
  /** The broken stream's last event ID and the session that produced it, if it has one. */
  cursor: {sessionId: string | undefined; lastEventId: string} | undefined
  /** True when the server has refused this cursor: it is never sent again. */
  cursorRejected: boolean
  /** The standalone GET stream, or the response stream of one request. */
  stream: 'standalone' | 'request'
}

export type ReconnectDecision =
  /** GET with `Mcp-Session-Id` and `Last-Event-ID`: the server replays what came after the cursor on that stream. */
  | {branch: 'stream-resumption'; sessionId: string; lastEventId: string}
  /**
   * GET with `Mcp-Session-Id` only: a fresh stream, nothing replayed; the server may re-emit pending
   * server-to-client requests. A request stream's answer cannot come back this way, so that request is settled.
   */
  | {branch: 'session-resumption'; sessionId: string; dropCursor: boolean; settleRequest: boolean}
  /** No session: nothing to resume. The client initializes a new session; a request in flight is settled. */
  | {branch: 'new-session'; dropCursor: boolean; settleRequest: boolean}

export function decideReconnect(input: ReconnectInput): ReconnectDecision {
  const {sessionId, cursor, cursorRejected, stream} = input
  const settleRequest = stream === 'request'
  if (sessionId === undefined) {
    // No session: an event ID without its session is meaningless (docs/design.md#the-decision).
    return {branch: 'new-session', dropCursor: cursor !== undefined, settleRequest}
  }
  // [spec 2025-11-25 transports] event IDs are unique within a session only: never send one to another session.
  // [WHATWG SSE] an empty `id:` resets the cursor, so an empty one is no cursor.
  const usable =
    cursor !== undefined && !cursorRejected && cursor.sessionId === sessionId && cursor.lastEventId !== ''
  if (usable) return {branch: 'stream-resumption', sessionId, lastEventId: cursor.lastEventId}
  return {branch: 'session-resumption', sessionId, dropCursor: cursor !== undefined, settleRequest}
}

/** What the answer to a stream GET means, named after what the server did. */
export type StreamAnswer =
  /** 200 with an event stream: read it. */
  | 'open'
  /** 404 to a request that carried the session ID: the session is gone. */
  | 'session-expired'
  /** A refusal of the `Last-Event-ID` sent: the cursor is dropped, the decision made again without it. */
  | 'cursor-refused'
  /** 405, or 404 without a session: the server offers no GET stream. */
  | 'not-offered'
  /** Another success: the server has ended the stream. */
  | 'ended-by-server'
  /** Worth trying again later: 408, 409, 429, 5xx. */
  | 'transient'
  /** Any other status: trying again would get the same answer. */
  | 'refused'

export interface StreamAnswerFacts {
  status: number
  /** Whether the answer's content type is `text/event-stream`. */
  eventStream: boolean
  /** Whether the request carried `Mcp-Session-Id`. */
  sentSession: boolean
  /** Whether the request carried `Last-Event-ID`. */
  sentCursor: boolean
}

export function classifyStreamAnswer({status, eventStream, sentSession, sentCursor}: StreamAnswerFacts): StreamAnswer {
  if (status === 200 && eventStream) return 'open'
  // [spec transports, session management] 404 to a request carrying the session ID: the session is gone.
  if (status === 404 && sentSession) return 'session-expired'
  // [spec transports, listening for messages] the server MAY answer 405: it offers no GET stream.
  // A server without sessions may answer 404 the same way.
  if (status === 405 || status === 404) return 'not-offered'
  // [SEP-1699 review] a non-200 success to a reconnect means the server has ended the stream.
  if (status >= 200 && status < 300) return 'ended-by-server'
  if (sentCursor) return 'cursor-refused'
  if (status === 408 || status === 409 || status === 429 || status >= 500) return 'transient'
  return 'refused'
}
