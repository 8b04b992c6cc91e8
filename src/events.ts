import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {ReconnectBranch} from './policy/decision.ts'
import type {TransportErrorCode} from './errors.ts'
import type {JsonRpcId, JsonValue} from './wire/jsonrpc.ts'
import type {LimitName} from './policy/limits.ts'

/** The request a response stream answers, as the app sent it: lets a later process tell the app whose answer it is. */
export interface CallRecord {
  method: string
  /** The tool, prompt or resource the request names (`params.name` or `params.uri`), when it names one. */
  name?: string | undefined
  /** The request ID the Client used (the wire carries another). */
  clientId: string | number
  /**
   * The W3C trace context the request carried in `params._meta` (`traceparent`, `tracestate`), when it carried one:
   * kept with its stream, so that a later process's telemetry goes on with the call's trace when it resumes it.
   */
  traceparent?: string | undefined
  tracestate?: string | undefined
}

/**
 * What the call journal knows of one call
 * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#the-call-journal | the call journal}):
 *
 * - `sent`: on the wire, no answer yet.
 * - `input-required`: the server asked for input (an `input_required` result, SEP-2322); `resume` holds what
 *   continues the round.
 * - `task`: the server answered with a task handle (`resultType: 'task'`): the transport polls `tasks/get`.
 * - `completed`, `failed`, `cancelled`: the outcome, for a call whose answer the Client never received (a previous
 *   process's, a task's): `result`, or `error` (the JSON-RPC error).
 * - `outcome-unknown`: it may have run; nothing can say how it ended (`reason` says why).
 * - `delivered`: the Client received the answer; the record is gone (the last `call-changed` event says so).
 */
export type CallState =
  'sent' | 'input-required' | 'task' | 'completed' | 'failed' | 'cancelled' | 'outcome-unknown' | 'delivered'

/** A JSON object, as the journal keeps parts of messages. */
export type JsonObject = {[key: string]: JsonValue}

/** One journaled call as the app sees it (`transport.calls.list()`, `call-changed` events). */
export interface JournaledCall {
  /** Stable for the call's whole life: across restarts and across the legs of its `input_required` rounds. */
  readonly callId: string
  readonly method: string
  /** The tool's name. */
  readonly name: string
  /**
   * SHA-256 (hex) of the call's `arguments` as canonical JSON (keys sorted): never the arguments themselves,
   * which may hold secrets. Compare with `digestArguments` of `mcp-resumable-http/journal`.
   */
  readonly argumentsDigest: string
  /** The request ID the Client gave its latest leg (the wire carried `wireId`). */
  readonly clientId: string | number
  /** The wire request ID of its latest leg. */
  readonly wireId: number
  /** `legacy`: 2025 revisions (sessions, resumable streams); `modern`: 2026-07-28 on. */
  readonly era: 'legacy' | 'modern'
  readonly state: CallState
  /** When it was first sent (ms since the epoch). */
  readonly startedAt: number
  /** True when a previous process (or page) sent it: its answer cannot reach this process's Client. */
  readonly inherited: boolean
  /** The latest progress notification's fields. */
  readonly progress?: {progress: number; total?: number | undefined; message?: string | undefined} | undefined
  /** The task handle and its latest status (`task` state). */
  readonly task?:
    | {taskId: string; status: string; statusMessage?: string | undefined; pollIntervalMs?: number | undefined}
    | undefined
  /**
   * In an `input_required` round: spread it into the call's params to continue the round without asking again
   * (`client.callTool({name, arguments, ...call.resume})`): the server's `requestState`, echoed byte for byte,
   * and `inputResponses`, the answers already given (none yet in the `input-required` state).
   */
  readonly resume?: {requestState?: string | undefined; inputResponses?: JsonObject | undefined} | undefined
  /** The input the server asked for in the current round (`input-required`). */
  readonly inputRequests?: JsonObject | undefined
  readonly result?: JsonValue | undefined
  readonly error?: JsonValue | undefined
  /** Why the outcome is unknown. */
  readonly reason?: string | undefined
}

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
  /** `status`: the answer to its `DELETE`, undefined when none came (the session is forgotten all the same). */
  | {type: 'session-terminated'; sessionId: string; status: number | undefined}
  /** A stream opened without being a reconnect: the standalone GET after `notifications/initialized`. */
  | {type: 'stream-opened'; stream: StreamKind; requestId: JsonRpcId | undefined; headers: ResumptionHeaders}
  /**
   * A broken stream is being reopened: `branch` says which resumption, `headers` what was sent; `call` is the request
   * a response stream answers, as the app sent it (undefined for the standalone stream).
   */
  | {
      type: 'reconnect'
      stream: StreamKind
      requestId: JsonRpcId | undefined
      branch: ReconnectBranch
      attempt: number
      headers: ResumptionHeaders
      call: CallRecord | undefined
    }
  | {type: 'reconnect-failed'; stream: StreamKind; requestId: JsonRpcId | undefined; attempt: number; error: Error}
  /** The standalone stream ran out of fast attempts: it goes on every `maxDelayMs`, and when a request succeeds. */
  | {type: 'stream-degraded'; stream: StreamKind; error: Error}
  /** A degraded stream connected again, `downMs` after it degraded. */
  | {type: 'stream-recovered'; stream: StreamKind; downMs: number}
  | {type: 'cursor-rejected'; stream: StreamKind; requestId: JsonRpcId | undefined; lastEventId: string; status: number}
  | {
      type: 'stream-closed'
      stream: StreamKind
      requestId: JsonRpcId | undefined
      /** `silent`: resumed with `Last-Event-ID` four times in a row, each brought nothing new within `resumeTimeoutMs`. */
      reason: 'completed' | 'ended-by-server' | 'not-offered' | 'given-up' | 'abandoned' | 'silent'
    }
  | {type: 'duplicate-dropped'; what: 'event' | 'response' | 'server-request' | 'progress'; id: string | number}
  | {type: 'cached-answer-resent'; requestId: JsonRpcId}
  /** A server request a previous process received but never answered, handed to this process's Client. */
  | {type: 'request-restored'; requestId: JsonRpcId}
  /**
   * A response to no pending request of this transport, not delivered: typically the answer to a request
   * of a previous process, replayed on the stream it left. `message` lets the app use it all the same; `call` says
   * which request it answers, as the app sent it (method, tool name, the app's own request ID), when the stream
   * that brought it was that request's. `id` is the request's ID on the wire.
   */
  | {type: 'unmatched-response'; id: JsonRpcId; message: JSONRPCMessage; call?: CallRecord | undefined}
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
  /**
   * A journaled call (`transport.calls`) was recorded or changed: sent, a round, a task's status, progress, its
   * outcome; `delivered` when the Client received its answer and the record went.
   */
  | {type: 'call-changed'; call: JournaledCall}
  /**
   * The store failed or did not answer within `storeTimeoutMs`: reported once, after which the transport carries
   * on in memory (see `storeTimeoutMs`).
   */
  | {type: 'store-error'; key: string; error: unknown}
  /** A loaded record was not valid (`reason` says why): it was not used, and is deleted. */
  | {type: 'record-discarded'; key: string; reason: string}
  /**
   * Something the server controls went past `limits[limit]` (`size`, in that limit's unit, when known); what
   * happens then is said in that limit's TSDoc. `requestId` names the request whose stream or server request it was.
   */
  | {
      type: 'limit-exceeded'
      limit: LimitName
      size: number | undefined
      max: number
      stream: StreamKind | undefined
      requestId: JsonRpcId | undefined
    }

/**
 * The `limit-exceeded` event: `size` went past `limit`, whose value is `max`, on `stream` or for `requestId` where one
 * is known.
 */
export function limitExceeded(
  limit: LimitName,
  max: number,
  at: {size?: number | undefined; stream?: StreamKind | undefined; requestId?: JsonRpcId | undefined},
): TransportEvent {
  return {type: 'limit-exceeded', limit, size: at.size, max, stream: at.stream, requestId: at.requestId}
}

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
