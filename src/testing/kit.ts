/**
 * What both entries of the testing kit export: the reference server, its faults and its views. `./testing` adds the
 * msw adapter, `./testing/node` the Node adapter.
 */
export {createReferenceServer, ReferenceServer} from './server.ts'
export {createFaultProxy, FaultProxy, type WebHandler} from './proxy.ts'
export type {ReferenceServerOptions} from './options.ts'
export {builtinTools} from './tools.ts'
export {
  ClientAnswerError,
  type LogLevel,
  type PromptArgument,
  type PromptDefinition,
  type ResourceDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from './catalog.ts'
export type {ServerMode} from './modes.ts'
export type {TaskStatus, TaskSupport, TaskView} from './tasks.ts'
export type {ByteCut, Cut} from './connection.ts'
export type {
  CorruptFault,
  DelayFault,
  HttpMethod,
  DisconnectOptions,
  ExpireOptions,
  Faults,
  StatusFault,
  TransportFaults,
} from './faults.ts'
export type {LoggedRequest, PendingRequestView, ServerCounters, SessionView, StreamView} from './instrumentation.ts'
export {
  errorCodes,
  refusals,
  supportedProtocolVersions,
  type JsonObject,
  type Refusal,
  type RequestHandler,
  type RequestId,
} from './protocol.ts'
