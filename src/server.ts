/**
 * `mcp-resumable-http/server`: for MCP servers on the official SDK (v1 `@modelcontextprotocol/sdk`, v2
 * `@modelcontextprotocol/server`), the server's half of keeping stream resumption and session resumption
 * apart ([server](https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/server.md)):
 * {@link ResumableEventStore}, the SDK's `EventStore` done right, and {@link reemitPendingRequests},
 * which sends a session's unanswered server requests again on a stream attached without `Last-Event-ID`.
 * No Node built-in: Node, Workers, Deno and Bun alike. Redis: `./server/redis`.
 * @packageDocumentation
 */
export {
  RefusedEventIdError,
  ResumableEventStore,
  type EventStoreMetrics,
  type JsonRpcMessage,
  type RefusedEventIdReason,
  type ResumableEventStoreOptions,
} from './server/event-store.ts'
export {
  MemoryEventLog,
  type Appended,
  type EventBounds,
  type EventLog,
  type Held,
  type LoggedEvent,
  type Lookup,
} from './server/event-log.ts'
export {
  reemitPendingRequests,
  type PendingOnAttach,
  type PendingRequests,
  type PendingRequestsMetrics,
  type PendingRequestsOptions,
  type SdkServerTransport,
  type SessionResumption,
} from './server/pending-requests.ts'
