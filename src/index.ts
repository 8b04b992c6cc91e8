export {ResumableHTTPClientTransport} from './transport.ts'
export {MemoryStore, type JsonValue, type ResumptionStore} from './persistence/store.ts'
export {isLeaseLost, LeaseLostError, type Fence, type Lease} from './persistence/lease.ts'
export type {OwnershipOptions} from './persistence/ownership.ts'
export {TransportError, isTransportError, transportErrorCodeOf, type TransportErrorCode, type TransportErrorOptions} from './errors.ts'
export type {FetchLike} from './http.ts'
export type {ResumableHTTPClientTransportOptions} from './options.ts'
export type {ReconnectOptions} from './backoff.ts'
export type {ResumptionHeaders, StreamKind, TransportEvent, TransportMetrics} from './events.ts'
export type {JsonRpcId} from './jsonrpc.ts'
export {
  decideReconnect,
  type ReconnectBranch,
  type ReconnectDecision,
  type ReconnectInput,
} from './decision.ts'
