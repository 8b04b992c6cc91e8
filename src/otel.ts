/**
 * `mcp-resumable-http/otel`: OpenTelemetry traces and metrics for both halves
 * ([telemetry](https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/telemetry.md)). The client's
 * {@link InstrumentedHTTPClientTransport} records a span per request by the MCP semantic conventions, lasting across
 * every reconnect of its stream, with a span event for each; {@link ServerTelemetry} exports the server half's
 * counters and marks each resumption on the span active then. `@opentelemetry/api` is its one (optional peer)
 * dependency: the app brings an OpenTelemetry SDK, or nothing is recorded. No Node built-in.
 * @packageDocumentation
 */
export {InstrumentedHTTPClientTransport, type InstrumentedHTTPClientTransportOptions} from './otel/client.ts'
export {ServerTelemetry} from './otel/server.ts'
export type {ClientTelemetryOptions, ServerTelemetryOptions} from './otel/options.ts'
export type {SessionIdAttribute} from './otel/attributes.ts'
export type {OutcomeUnknownCause} from './otel/client-metrics.ts'
