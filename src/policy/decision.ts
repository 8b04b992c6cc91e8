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
  const lastEventId = usableCursor(cursor, cursorRejected, sessionId)
  if (lastEventId !== undefined) return {branch: 'stream-resumption', sessionId, lastEventId}
  return {branch: 'session-resumption', sessionId, dropCursor: cursor !== undefined, settleRequest}
}

/**
 * The cursor rule (docs/design.md#cursor): the `Last-Event-ID` a stream may send to session `sessionId`, if any.
 * The reconnect decision and `Stream.cursorFor` (what is stored, what errors quote) both ask here.
 */
export function usableCursor(
  cursor: ReconnectInput['cursor'],
  cursorRejected: boolean,
  sessionId: string,
): string | undefined {
  // [spec 2025-11-25 transports] event IDs are unique within a session only: never send one to another session.
  // [WHATWG SSE] an empty `id:` resets the cursor, so an empty one is no cursor; a refused one is never sent again.
  if (cursor?.sessionId !== sessionId || cursorRejected || cursor.lastEventId === '') return undefined
  return cursor.lastEventId
}

/*
 * What each answer means (docs/failures.md has the whole table, request kind by answer). Transient
 * answers keep everything and are tried again; a refusal of the cursor drops that cursor only; the
 * session ends on a 404 to a request that carried it, and on a 400 or 410 to one that carried
 * nothing else (docs/failures.md#a-session-the-server-no-longer-knows).
 */

/**
 * Statuses that refuse a request as a whole (besides the spec's 404): what servers built on the SDK's examples
 * answer for a session they do not know (400), and "gone" (410). To a request that carries nothing but the session
 * ID, they refuse the session.
 */
function refusesRequest(status: number): boolean {
  return status === 400 || status === 410
}

/** Statuses that say "not now": the server did not act, and the same request may succeed later. */
export function isTransient(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500
}

/** What the answer to a stream GET means, named after what the server did. */
export type StreamAnswer =
  /** 200 with an event stream: read it. */
  | 'open'
  /** 404 to a request that carried the session ID, or 400 or 410 to one that carried no cursor: the session is gone. */
  | 'session-expired'
  /** A refusal of the `Last-Event-ID` sent: the cursor is dropped, the decision made again without it. */
  | 'cursor-refused'
  /** 405, or 404 without a session: the server offers no GET stream. */
  | 'not-offered'
  /** Another success: the server has ended the stream. */
  | 'ended-by-server'
  /** Not now (408, 425, 429, 5xx; 409: a half-open connection on the server's side): tried again later, the cursor kept. */
  | 'transient'
  /** 401 or 403 (once the credentials were renewed, if an auth provider is set): not this stream's fault. */
  | 'unauthorized'
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
  // [spec transports, listening for messages] a GET is answered with a stream or 405. One without Last-Event-ID
  // carries the session ID, the version that session negotiated and nothing else: a refusal of it refuses the
  // session, whatever status the server chose (the SDK's examples answer 400).
  if (refusesRequest(status) && sentSession && !sentCursor) return 'session-expired'
  // [spec transports, listening for messages] the server MAY answer 405: it offers no GET stream.
  // A server without sessions may answer 404 the same way.
  if (status === 405 || status === 404) return 'not-offered'
  // [SEP-1699 review] a non-200 success to a reconnect means the server has ended the stream.
  if (isSuccess(status)) return 'ended-by-server'
  // A deploy, a rate limiter, an overloaded proxy: the cursor is still good, and the server will want it.
  if (isTransient(status)) return 'transient'
  // [SDK interop] the SDK server answers 409 while the stream asked for (with a cursor) or the session's GET stream
  // (without) is still connected on its side: a half-open connection it lets go of at its next failed write. The
  // cursor is good: what the server wrote to the dead socket is replayed once it lets go.
  if (status === 409) return 'transient'
  if (status === 401 || status === 403) return 'unauthorized'
  // Any other 4xx to a Last-Event-ID (400, 410, 422, ...) refuses that cursor; a redirect not followed does not.
  if (sentCursor && status >= 400) return 'cursor-refused'
  return 'refused'
}

/** What the answer to a POST means for the message it carried. */
export type PostAnswer =
  /** 404 to a POST that carried the session ID: the session is gone, the message was not acted on. */
  | 'session-expired'
  /**
   * 400 or 410 to a POST that carried the session ID: the session, or the message? Refused, unless its body is no
   * answer to the request and the session's GET, which carries nothing but the session, is refused too: then
   * `session-expired` (docs/failures.md#a-session-the-server-no-longer-knows).
   */
  | 'session-in-doubt'
  /** A request answered with an event stream, or with JSON: read the answer there. */
  | 'event-stream'
  | 'json'
  /** A notification or an answer, accepted. */
  | 'accepted'
  /** The server took the request (2xx) but gave no readable answer, or failed while it may have run it. */
  | 'outcome-unknown'
  /** The server did not act on it (3xx, 4xx, 503, ...): a `http` error the caller may act on. */
  | 'refused'

export interface PostAnswerFacts {
  status: number
  /** The answer's media type: event stream, JSON, or anything else. */
  body: 'event-stream' | 'json' | 'other'
  sentSession: boolean
  /** A JSON-RPC request (it expects an answer), rather than a notification or an answer. */
  request: boolean
}

export function classifyPostAnswer({status, body, sentSession, request}: PostAnswerFacts): PostAnswer {
  // [spec transports, session management] 404 to a request carrying the session ID: the session has expired.
  if (status === 404 && sentSession) return 'session-expired'
  // A POST carries a body besides the session: its refusal may be the body's.
  if (refusesRequest(status) && sentSession) return 'session-in-doubt'
  if (isSuccess(status)) {
    // [spec transports, sending messages] notifications and responses are answered 202, with no body.
    if (!request) return 'accepted'
    if (body === 'event-stream') return 'event-stream'
    if (body === 'json') return 'json'
    return 'outcome-unknown'
  }
  // 500, 502, 504: the server, or the one behind a gateway, may have run the request before it failed.
  if (request && status >= 500 && status !== 503) return 'outcome-unknown'
  return 'refused'
}

/**
 * What the answer to `DELETE` means: `cleared` when the session is over for the server too (2xx; 404, 400 and 410:
 * it does not know the session, the one thing a DELETE carries; [spec transports, session management] 405: the
 * server does not let clients end sessions), else `refused`: the server may still hold it. The transport forgets
 * the session either way.
 */
export function classifyDeleteAnswer(status: number): 'cleared' | 'refused' {
  return isSuccess(status) || status === 404 || status === 405 || refusesRequest(status) ? 'cleared' : 'refused'
}

/**
 * A 2xx status. Nothing below 200 gets here: fetch hands over no 1xx, and a browser's opaque redirect (status 0) is
 * refused before it is classified.
 */
function isSuccess(status: number): boolean {
  return Math.floor(status / 100) === 2
}
