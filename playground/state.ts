/**
 * What the playground server tells the page about the reference server (`GET /__playground/state`), and the
 * control endpoints the page's fault buttons call. Shared by playground/server.ts and the page.
 */
import type {LoggedRequest, ServerCounters, ServerMode} from '../src/testing/index.ts'

export interface StreamState {
  /** `p<n>` (a POST's response stream) or `g<n>` (a standalone GET stream). */
  id: string
  kind: 'request' | 'standalone'
  requestId: string | number | undefined
  /** Events emitted on the stream, priming events included. */
  events: number
  lastEventId: string | undefined
  /** Events written live, and written again after a `Last-Event-ID`. */
  sent: number
  replayed: number
  connected: boolean
  finished: boolean
}

export interface SessionState {
  id: string | undefined
  protocolVersion: string
  streams: StreamState[]
  /** Server-to-client requests waiting for an answer. */
  pending: {id: string | number; method: string}[]
}

export interface PlaygroundState {
  mode: ServerMode
  /** Tool executions by tool name, since the playground started. */
  executions: Record<string, number>
  counters: ServerCounters & {
    /** Events written again after a `Last-Event-ID`, over the live sessions' streams. */
    replayedEvents: number
  }
  /** JSON-RPC requests POSTed, by method. */
  posts: Record<string, number>
  sessions: SessionState[]
  /** The latest requests, newest last, with both resumption headers as the server saw them. */
  log: LoggedRequest[]
}

/** The control endpoints (all POST, JSON bodies). */
export const control = {
  state: '/__playground/state',
  /** Breaks every live SSE connection, as a network drop. */
  cut: '/__playground/cut',
  /** `{sessionId}`: the server forgets the session (404 from then on). */
  expire: '/__playground/expire',
  /** `{mode}`: how the server serves reconnects. */
  mode: '/__playground/mode',
} as const
