/**
 * How a reconnect is served: the boundary of docs/design.md#what-a-server-must-do, the two ways of breaking it
 * seen in the field (docs/design.md#two-failures), and a server that loses what nobody reads. Everything else in the
 * server is the same in every mode.
 */
import type {EventStream, Session, StoredEvent} from './session.ts'

/**
 * - `correct`: a `Last-Event-ID` is looked up in the named session only, in the stream that emitted it, and
 *   that stream alone is replayed; a stream attached without one gets every pending server request again.
 * - `cursor-per-session` (faulty): event IDs are a per-session counter and replay follows the session's log,
 *   so a resumption replays other streams' events too; a stream attached without `Last-Event-ID` is
 *   "caught up" at the session's cursor: nothing replayed, pending requests never re-emitted.
 * - `global-log` (faulty): a `Last-Event-ID` is looked up in one log across all sessions, dead ones included,
 *   and its stream replayed whatever session the request names.
 * - `live-result-only` (faulty): as `correct`, but a call's result written while no connection of its stream is
 *   live is lost, not buffered: no resumption brings it (Cloudflare's `McpAgent` 0.32 stores it, then clears the
 *   stream). A client that answers a server request before it resumes the stream loses the result the answer ends
 *   with ([the design](https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#session)).
 */
export type ServerMode = 'correct' | 'cursor-per-session' | 'global-log' | 'live-result-only'

const modes: readonly ServerMode[] = ['correct', 'cursor-per-session', 'global-log', 'live-result-only']

/** Throws a TypeError naming `what` unless `mode` is a {@link ServerMode}. */
export function checkMode(mode: ServerMode, what: string): void {
  if (!modes.includes(mode)) throw new TypeError(`${what} must be one of ${modes.join(', ')}`)
}

/** What a GET with `Last-Event-ID` resumes: the stream new events of which go to the new connection, and the replay. */
export interface Resumption {
  stream: EventStream
  replay: StoredEvent[]
}

/** The ID of the next event of `stream`. */
export function nextEventId(mode: ServerMode, stream: EventStream): string {
  const n = ++stream.session.nextEvent
  // [spec 2025-11-25 transports] event IDs SHOULD encode the stream; the faulty server keeps a bare counter.
  return mode === 'cursor-per-session' ? String(n) : `${stream.id}_${n}`
}

/**
 * Finds what `lastEventId` resumes in `session`, or undefined when the ID is refused. `global` is the log of
 * every session since the last restart.
 */
export function findResumption(
  mode: ServerMode,
  session: Session,
  lastEventId: string,
  global: readonly StoredEvent[],
): Resumption | undefined {
  switch (mode) {
    case 'correct':
    case 'live-result-only': {
      // Looked up in this session only, in the stream that emitted it; replay is of that stream alone
      // (docs/design.md#what-a-server-must-do).
      const event = session.log.find((candidate) => candidate.id === lastEventId)
      // A stream that expired takes its events with it, while its session goes on.
      if (event === undefined || session.streams.get(event.stream.id) !== event.stream) return undefined
      return {stream: event.stream, replay: after(event.stream.events, event)}
    }
    case 'cursor-per-session': {
      const event = session.log.find((candidate) => candidate.id === lastEventId)
      // Faulty: the session's log is the cursor's frame, so every stream's later events come back.
      return event === undefined ? undefined : {stream: event.stream, replay: after(session.log, event)}
    }
    case 'global-log': {
      // Faulty: any session's event is accepted, even one of a session that no longer exists.
      const event = global.find((candidate) => candidate.id === lastEventId)
      return event === undefined ? undefined : {stream: event.stream, replay: after(event.stream.events, event)}
    }
  }
}

/** Whether a call's result is kept for a resumption when no connection of its stream is live to read it. */
export function keepsUnreadResult(mode: ServerMode): boolean {
  return mode !== 'live-result-only'
}

/** Whether a stream attached without `Last-Event-ID` gets the session's pending server requests. */
export function reemitsOnAttach(mode: ServerMode): boolean {
  // The faulty server saw a session "caught up" at its cursor and re-emitted nothing (docs/design.md#two-failures).
  return mode !== 'cursor-per-session'
}

function after(events: readonly StoredEvent[], event: StoredEvent): StoredEvent[] {
  return events.slice(events.indexOf(event) + 1)
}
