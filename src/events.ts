import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {ReconnectBranch} from './decision.ts'
import type {TransportErrorCode} from './errors.ts'
import type {JsonRpcId} from './jsonrpc.ts'
import type {CallRecord} from './persistence/records.ts'

/** The standalone GET stream, or the response stream of one request. */
export type StreamKind = 'standalone' | 'request'

/** The two headers that decide a reconnect, exactly as sent (undefined: not sent). */
export interface ResumptionHeaders {
  'mcp-session-id': string | undefined
  'last-event-id': string | undefined
}

/** What happened inside the transport, for logs and dashboards. Delivered synchronously; must not throw. */
export type TransportEvent =
  | {type: 'session-started'; sessionId: string}
  | {type: 'session-expired'; sessionId: string; settledRequests: number}
  | {type: 'session-terminated'; sessionId: string; status: number}
  /** A stream opened without being a reconnect: the standalone GET after `notifications/initialized`. */
  | {type: 'stream-opened'; stream: StreamKind; requestId: JsonRpcId | undefined; headers: ResumptionHeaders}
  /** A broken stream is being reopened: `branch` says which resumption, `headers` what was sent. */
  | {
      type: 'reconnect'
      stream: StreamKind
      requestId: JsonRpcId | undefined
      branch: ReconnectBranch
      attempt: number
      headers: ResumptionHeaders
    }
  | {type: 'reconnect-failed'; stream: StreamKind; requestId: JsonRpcId | undefined; attempt: number; error: Error}
  | {type: 'cursor-rejected'; stream: StreamKind; requestId: JsonRpcId | undefined; lastEventId: string; status: number}
  | {
      type: 'stream-closed'
      stream: StreamKind
      requestId: JsonRpcId | undefined
      /** `silent`: resumed with `Last-Event-ID`, the server sent nothing within `resumeTimeoutMs`. */
      reason: 'completed' | 'ended-by-server' | 'not-offered' | 'given-up' | 'abandoned' | 'silent'
    }
  | {type: 'duplicate-dropped'; what: 'event' | 'response' | 'server-request' | 'progress'; id: string | number}
  | {type: 'cached-answer-resent'; requestId: JsonRpcId}
  /** A server request a previous process received but never answered, handed to this process's Client. */
  | {type: 'request-restored'; requestId: JsonRpcId}
  /**
   * A response to no pending request of this transport, not delivered: typically the answer to a request
   * of a previous process, replayed on the stream it left. `message` lets the app use it all the same.
   */
  | {type: 'unmatched-response'; id: JsonRpcId; message: JSONRPCMessage}
  /**
   * A notification (progress, a log) on a stream a previous process left: meant for that process's Client, not
   * delivered; `call` is the request the stream answers.
   */
  | {type: 'orphaned-notification'; method: string | undefined; message: JSONRPCMessage; call?: CallRecord | undefined}
  /**
   * The number of requests awaiting an answer changed (`pendingRequests` of the transport): emitted on every
   * change, so `pending` going from 0 to 1 and back to 0 brackets the time work is in flight (an extension arms a
   * keep-alive in between). Counts the Client's requests and a previous process's requests whose streams are
   * being resumed.
   */
  | {type: 'pending-changed'; pending: number}
  | {type: 'request-settled'; requestId: JsonRpcId; code: TransportErrorCode}
  | {type: 'store-error'; key: string; error: unknown}

/** Counters that move independently: replay belongs to stream resumption, re-emission to session resumption. */
export interface TransportMetrics {
  /** Events received on streams reopened with `Last-Event-ID` (stream resumption). */
  replayedEvents: number
  /** Server-to-client requests received on streams attached without `Last-Event-ID` (session resumption). */
  reemittedRequests: number
  /** Events, responses and server requests dropped because they had been delivered already. */
  duplicatesDropped: number
  /** Reconnects that sent `Last-Event-ID`. */
  streamResumptions: number
  /** Reconnects that attached a fresh stream to a held session. */
  sessionResumptions: number
  /** Sessions established by `initialize`. */
  newSessions: number
  /**
   * Responses to no request of this transport: answers to a previous process's requests replayed on the
   * streams it left (never delivered to the Client), or responses the Client already gave up on.
   */
  unmatchedResponses: number
}

/** Every counter at zero: a new transport's metrics. */
export function zeroMetrics(): TransportMetrics {
  return {
    replayedEvents: 0,
    reemittedRequests: 0,
    duplicatesDropped: 0,
    streamResumptions: 0,
    sessionResumptions: 0,
    newSessions: 0,
    unmatchedResponses: 0,
  }
}
