import {RecentMap} from '../recent-map.ts'
import type {ReconnectBranch} from '../decision.ts'
import {TransportError} from '../errors.ts'
import type {StreamKind} from '../events.ts'
import type {CursorRecord} from '../persistence/records.ts'

/** Event IDs remembered per stream to drop replayed duplicates. */
const seenEventIds = 1024

/** One SSE stream with its own cursor and `retry`, across all the connections that carry it. */
export interface Stream {
  readonly key: string
  readonly kind: StreamKind
  /** The wire ID of the request whose answer this stream carries. */
  readonly requestId: number | undefined
  /** Left by a previous process: its messages were meant for that process's Client. */
  readonly orphan: boolean
  /** Aborts this stream alone; aborted too when the transport closes. */
  readonly controller: AbortController
  lastEventId: string | undefined
  /** The session that produced `lastEventId`: the cursor means nothing in any other. */
  cursorSessionId: string | undefined
  retryMs: number | undefined
  /** Set once the server refused the cursor: it is never sent again. */
  rejection: TransportError | undefined
  answered: boolean
  readonly seen: RecentMap<string, true>
}

/** One HTTP response carrying a stream, and how it was opened. */
export interface Connection {
  readonly stream: Stream
  readonly branch: ReconnectBranch | 'open'
  /** Sent with `Last-Event-ID`: what arrives is a replay. */
  readonly resumed: boolean
}

/** How a series of connection attempts ended: the stream is over, or it broke after progress. */
export type StreamOutcome = 'done' | 'again'

/**
 * A new stream, aborted with `lifetime` (the listener goes away with the stream), from a stored `cursor` of
 * session `sessionId` when there is one.
 */
export function createStream(
  lifetime: AbortSignal,
  {kind, requestId, orphan, cursor, sessionId}: {kind: StreamKind; requestId: number | undefined; orphan: boolean; cursor: CursorRecord | undefined; sessionId: string | undefined},
): Stream {
  const controller = new AbortController()
  lifetime.addEventListener('abort', () => controller.abort(lifetime.reason), {once: true, signal: controller.signal})
  return {
    key: kind === 'standalone' ? 'standalone' : requestKey(requestId!),
    kind,
    requestId,
    orphan,
    controller,
    lastEventId: cursor?.lastEventId,
    cursorSessionId: cursor === undefined ? undefined : sessionId,
    retryMs: cursor?.retryMs,
    rejection: undefined,
    answered: false,
    seen: new RecentMap(seenEventIds),
  }
}

export function requestKey(wireId: number): string {
  return `request:${wireId}`
}

/** The wire ID of a stored request stream's key, if `key` is one. */
export function wireIdOfKey(key: string): number | undefined {
  const wireId = Number(key.slice('request:'.length))
  return key.startsWith('request:') && Number.isSafeInteger(wireId) ? wireId : undefined
}

export function describeStream(stream: Stream): string {
  return stream.kind === 'standalone' ? 'the standalone GET stream' : `the response stream of request ${stream.requestId}`
}

/** A connection's deadline: see {@link watchSilence}. */
export interface SilenceWatch {
  /** Aborts with the stream, or when the deadline passes. */
  readonly signal: AbortSignal
  readonly expired: boolean
  /** The first event came: no deadline any more. */
  disarm(): void
  release(): void
}

/**
 * The deadline of a response stream's connection resumed with `Last-Event-ID`: `signal` aborts when it has
 * brought no event within `limitMs`. The first event disarms it for good, so a quiet tool is never cut short once
 * its stream proved alive; neither the POST's own connection nor the standalone stream have one.
 */
export function watchSilence(connection: Connection, limitMs: number): SilenceWatch | undefined {
  const {stream} = connection
  // Past 2^31 - 1 ms, timers fire at once: any such deadline means none.
  if (!connection.resumed || stream.kind !== 'request' || limitMs > 2 ** 31 - 1) return undefined
  const parent = stream.controller.signal
  const controller = new AbortController()
  const follow = (): void => controller.abort(parent.reason)
  parent.addEventListener('abort', follow, {once: true})
  let expired = false
  const timer = setTimeout(() => {
    expired = true
    controller.abort(new TransportError('network', `No event within ${limitMs} ms of resuming`))
  }, limitMs)
  return {
    signal: controller.signal,
    get expired() {
      return expired
    },
    disarm: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer)
      parent.removeEventListener('abort', follow)
    },
  }
}
