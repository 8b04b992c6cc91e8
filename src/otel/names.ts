/**
 * The names `mcp-resumable-http/otel` records under: the MCP semantic conventions' where they have one
 * (open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md, status Development), this package's own
 * namespace, `mcp_resumable_http`, for what they lack (reconnects, replays, re-emissions). Listed in docs/telemetry.md.
 */

/** The instrumentation scope of every tracer and meter here. */
export const scope = 'mcp-resumable-http'

/** Namespace of this package's own attributes, events and metrics. */
const own = 'mcp_resumable_http'

export const attribute = {
  // [semconv mcp] the span and metric attributes of the conventions.
  method: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  sessionId: 'mcp.session.id',
  resourceUri: 'mcp.resource.uri',
  requestId: 'jsonrpc.request.id',
  statusCode: 'rpc.response.status_code',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operation: 'gen_ai.operation.name',
  errorType: 'error.type',
  networkTransport: 'network.transport',
  networkProtocol: 'network.protocol.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  /** [semconv http] a request header, as an array of its values. */
  lastEventId: 'http.request.header.last-event-id',
  httpStatus: 'http.response.status_code',
  // This package's own.
  branch: `${own}.reconnect.branch`,
  attempt: `${own}.reconnect.attempt`,
  streamKind: `${own}.stream.kind`,
  closeReason: `${own}.stream.close_reason`,
  restored: `${own}.restored`,
  duplicate: `${own}.duplicate.kind`,
  cause: `${own}.outcome_unknown.cause`,
  resumptionOutcome: `${own}.resumption.outcome`,
  refusedReason: `${own}.refused_reason`,
  replayedEvents: `${own}.replayed_events`,
  reemittedRequests: `${own}.reemitted_requests`,
  cancelledRequests: `${own}.cancelled_requests`,
} as const

/** Span events. */
export const spanEvent = {
  reconnect: `${own}.reconnect`,
  reconnectFailed: `${own}.reconnect_failed`,
  cursorRefused: `${own}.cursor_refused`,
  streamClosed: `${own}.stream_closed`,
  degraded: `${own}.stream_degraded`,
  recovered: `${own}.stream_recovered`,
  streamResumption: `${own}.stream_resumption`,
  sessionResumption: `${own}.session_resumption`,
} as const

/** The span of the standalone GET stream's life. */
export const standaloneSpan = 'standalone stream'

/** [semconv mcp] the histograms' advised bucket boundaries, in seconds. */
export const durationBuckets = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/** Every metric, with its unit and description as exported. */
export const metric = {
  operationDuration: {
    name: 'mcp.client.operation.duration',
    unit: 's',
    description: 'The duration of the MCP request or notification, from the time it was sent until its answer',
  },
  sessionDuration: {
    name: 'mcp.client.session.duration',
    unit: 's',
    description: 'The duration of the MCP session, as this process held it',
  },
  reconnects: {name: `${own}.client.reconnects`, unit: '{reconnect}', description: 'Broken streams reopened'},
  replayedEvents: {
    name: `${own}.client.replayed_events`,
    unit: '{event}',
    description: 'Events received on streams reopened with Last-Event-ID (stream resumption)',
  },
  reemittedRequests: {
    name: `${own}.client.reemitted_requests`,
    unit: '{request}',
    description: 'Server requests received on streams attached without Last-Event-ID (session resumption)',
  },
  duplicatesDropped: {
    name: `${own}.client.duplicates_dropped`,
    unit: '{message}',
    description: 'Events, responses, server requests and progress dropped because they had been delivered already',
  },
  cursorsRefused: {
    name: `${own}.client.cursors_refused`,
    unit: '{cursor}',
    description: 'Last-Event-IDs the server refused',
  },
  sessionsExpired: {
    name: `${own}.client.sessions_expired`,
    unit: '{session}',
    description: 'Sessions the server ended or no longer knew',
  },
  outcomeUnknown: {
    name: `${own}.client.outcome_unknown`,
    unit: '{request}',
    description: 'Requests settled outcome-unknown: they may have run, and were not sent again',
  },
  storedEvents: {name: `${own}.server.stored_events`, unit: '{event}', description: 'Events stored'},
  evictedEvents: {
    name: `${own}.server.evicted_events`,
    unit: '{event}',
    description: 'Events dropped by maxBytes or maxAgeMs',
  },
  streamResumptions: {
    name: `${own}.server.stream_resumptions`,
    unit: '{resumption}',
    description: 'Last-Event-IDs accepted',
  },
  serverReplayedEvents: {
    name: `${own}.server.replayed_events`,
    unit: '{event}',
    description: 'Events sent again by stream resumptions',
  },
  refusedEventIds: {
    name: `${own}.server.refused_event_ids`,
    unit: '{event_id}',
    description: 'Last-Event-IDs refused',
  },
  sessionResumptions: {
    name: `${own}.server.session_resumptions`,
    unit: '{resumption}',
    description: 'GETs without Last-Event-ID answered with a stream',
  },
  serverReemittedRequests: {
    name: `${own}.server.reemitted_requests`,
    unit: '{request}',
    description: 'Server requests sent again on a stream attached without Last-Event-ID',
  },
  cancelledRequests: {
    name: `${own}.server.cancelled_requests`,
    unit: '{request}',
    description: 'Server requests cancelled on a stream attached without Last-Event-ID',
  },
} as const
