/**
 * `mcp-resumable-http`: the transport ({@link ResumableHTTPClientTransport}), its options, errors and events, the
 * store seam with {@link MemoryStore}, the call journal's types, and the reconnect decision as pure functions.
 * @packageDocumentation
 * @module mcp-resumable-http
 */
export {ResumableHTTPClientTransport} from './transport.ts'
export {MemoryStore, type ResumptionStore} from './persistence/store.ts'
export {isLeaseLost, LeaseLostError, type Fence, type Lease} from './persistence/lease.ts'
export type {OwnershipOptions} from './persistence/ownership.ts'
export {
  TransportError,
  isTransportError,
  transportErrorCodeOf,
  type HttpErrorData,
  type TransportErrorCode,
  type TransportErrorOptions,
} from './errors.ts'
export type {AuthProvider, FetchLike, OAuthClientModule, OAuthFlowOptions, UnauthorizedContext} from './wire/auth.ts'
export type {ResumableHTTPClientTransportOptions, StreamableHTTPReconnectionOptions} from './options.ts'
export type {ReconnectOptions} from './policy/backoff.ts'
export {defaultLimits, type LimitName, type LimitOptions, type Limits} from './policy/limits.ts'
export type {Calls} from './calls/call-journal.ts'
export type {
  CallRecord,
  CallState,
  JournaledCall,
  JsonObject,
  ResumptionHeaders,
  StreamKind,
  TransportEvent,
  TransportMetrics,
} from './events.ts'
export type {JsonRpcId, JsonValue} from './wire/jsonrpc.ts'
export type {SendOptions} from './session/post.ts'
export type {AppRequest, AppRequestOptions} from './delivery/app-requests.ts'
export {
  classifyDeleteAnswer,
  classifyPostAnswer,
  classifyStreamAnswer,
  decideReconnect,
  type PostAnswer,
  type PostAnswerFacts,
  type ReconnectBranch,
  type ReconnectDecision,
  type ReconnectInput,
  type StreamAnswer,
  type StreamAnswerFacts,
} from './policy/decision.ts'
