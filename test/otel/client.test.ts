/**
 * The client half of `mcp-resumable-http/otel` with the real OpenTelemetry SDK, against the reference server over
 * real sockets (`./testing/node`): the span of a call lasts across a dropped connection and carries its reconnect,
 * the trace context goes in `params._meta`, a restart from a `FileStore` goes on in the call's trace, an expired
 * session ends what it held, and no secret reaches an attribute or an event.
 */
import {createHash} from 'node:crypto'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {GetPromptResultSchema} from '@modelcontextprotocol/sdk/types.js'
import {SpanKind, SpanStatusCode} from '@opentelemetry/api'
import type {ReadableSpan} from '@opentelemetry/sdk-trace'
import {afterEach, describe, expect, it} from 'vitest'
import type {FetchLike, TransportEvent} from '../../src/index.ts'
import {FileStore} from '../../src/node.ts'
import {InstrumentedHTTPClientTransport, type InstrumentedHTTPClientTransportOptions} from '../../src/otel.ts'
import {
  builtinTools,
  createReferenceServer,
  listen,
  type Listening,
  type ReferenceServer,
} from '../../src/testing/node.ts'
import {until} from '../fixtures/client.ts'
import {everythingRecorded, named, useTelemetry} from '../fixtures/otel.ts'

const telemetry = useTelemetry()
const digest = (id: string): string => `sha256:${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 16)}`
const reconnectEvent = 'mcp_resumable_http.reconnect'

interface Stack {
  reference: ReferenceServer
  listening: Listening
  client: Client
  transport: InstrumentedHTTPClientTransport
  events: TransportEvent[]
  /** The JSON-RPC bodies the transport POSTed. */
  posted: {method?: string; params?: {_meta?: Record<string, unknown>}}[]
}

const open: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close()
})

/** The reference server on a socket of its own, with a tool that fails and a resource. */
async function serve(
  reference = createReferenceServer(referenceOptions()),
): Promise<{reference: ReferenceServer; listening: Listening}> {
  const listening = await listen(reference)
  open.push(() => listening.close())
  return {reference, listening}
}

function referenceOptions(): Parameters<typeof createReferenceServer>[0] {
  return {
    tools: [
      ...builtinTools(),
      {name: 'fail', handler: () => ({content: [{type: 'text', text: 'it failed'}], isError: true})},
    ],
    resources: [{uri: 'https://files.example/report?token=uri-secret', name: 'report', read: () => 'the report'}],
  }
}

/** A Client on the instrumented transport, to `url`, recording what it POSTs and every event. */
async function connect(
  url: string,
  options: InstrumentedHTTPClientTransportOptions = {},
): Promise<Omit<Stack, 'reference' | 'listening'>> {
  const events: TransportEvent[] = []
  const posted: Stack['posted'] = []
  const recording: FetchLike = (input, init) => {
    if (typeof init?.body === 'string') posted.push(JSON.parse(init.body) as Stack['posted'][number])
    return fetch(input, init)
  }
  const transport = new InstrumentedHTTPClientTransport(new URL(url), {
    reconnect: {minDelayMs: 20, maxDelayMs: 100},
    fetch: recording,
    onEvent: (event) => events.push(event),
    ...options,
    telemetry: {tracerProvider: telemetry.tracerProvider, meterProvider: telemetry.meterProvider, ...options.telemetry},
  })
  const client = new Client({name: 'otel-test', version: '1.0.0'}, {capabilities: {sampling: {}}})
  await client.connect(transport)
  open.push(() => client.close())
  return {client, transport, events, posted}
}

async function stack(options: InstrumentedHTTPClientTransportOptions = {}): Promise<Stack> {
  const served = await serve()
  return {...served, ...(await connect(served.listening.url, options))}
}

/** Calls the slow tool, and runs `cut` once `cutAfter` of its progress notifications arrived. */
function slowCall(client: Client, cutAfter: number, cut: () => unknown): Promise<unknown> {
  let progress = 0
  return client.callTool({name: 'slow', arguments: {steps: 6, delayMs: 40}}, undefined, {
    onprogress: () => {
      if (++progress === cutAfter) void cut()
    },
  })
}

const only = (spans: ReadableSpan[], name: string): ReadableSpan => {
  const found = named(spans, name)
  expect(found).toHaveLength(1)
  return found[0]!
}

describe('the span of a request', () => {
  it('lasts from the POST to the answer across a dropped connection, with an event naming both headers of its reconnect', async () => {
    const {client, transport, listening, events} = await stack()
    await slowCall(client, 2, () => listening.dropConnections())
    const call = only(telemetry.spans(), 'tools/call slow')
    const sessionId = transport.sessionId!
    expect(call.kind).toBe(SpanKind.CLIENT)
    expect(call.status.code).toBe(SpanStatusCode.UNSET)
    expect(call.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'slow',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '1',
      'mcp.protocol.version': transport.protocolVersion,
      'mcp.session.id': digest(sessionId),
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(listening.url).port),
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
    })
    const reconnect = events.find((event) => event.type === 'reconnect' && event.stream === 'request')
    expect(reconnect).toBeDefined()
    const lastEventId = reconnect?.type === 'reconnect' ? reconnect.headers['last-event-id'] : undefined
    expect(call.events.filter((event) => event.name === reconnectEvent).map((event) => event.attributes)).toEqual([
      {
        'mcp_resumable_http.reconnect.branch': 'stream-resumption',
        'mcp_resumable_http.stream.kind': 'request',
        'mcp_resumable_http.reconnect.attempt': 1,
        'mcp.session.id': digest(sessionId),
        'http.request.header.last-event-id': [lastEventId],
      },
    ])
    expect(
      await telemetry.count('mcp_resumable_http.client.reconnects', {'mcp_resumable_http.stream.kind': 'request'}),
    ).toBe(1)
    expect(await telemetry.count('mcp_resumable_http.client.replayed_events')).toBe(transport.metrics.replayedEvents)
    const [duration] = (await telemetry.points('mcp.client.operation.duration')).filter(
      (point) => point.attributes['gen_ai.tool.name'] === 'slow',
    )
    expect(duration?.value).toMatchObject({count: 1})
    expect(duration?.attributes['mcp.session.id']).toBeUndefined()
  })

  it('puts the trace context of its span in params._meta, and leaves alone one the Client put there itself', async () => {
    const {client, posted} = await stack()
    await client.callTool({name: 'echo'})
    const given = `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`
    await client.callTool({name: 'increment', _meta: {traceparent: given, tracestate: 'app=1'}})
    const echo = only(telemetry.spans(), 'tools/call echo')
    const increment = only(telemetry.spans(), 'tools/call increment')
    const sent = (name: string) => posted.find((body) => (body.params as {name?: string} | undefined)?.name === name)
    const {traceId, spanId} = echo.spanContext()
    expect(sent('echo')?.params?._meta).toMatchObject({traceparent: `00-${traceId}-${spanId}-01`})
    expect(sent('increment')?.params?._meta).toMatchObject({traceparent: given, tracestate: 'app=1'})
    // The span goes under the context the Client gave.
    expect(increment.spanContext().traceId).toBe('c'.repeat(32))
    expect(increment.parentSpanContext?.spanId).toBe('d'.repeat(16))
  })

  it("ends with error.type: a tool's error result is tool_error, a JSON-RPC error its code", async () => {
    const {client} = await stack()
    await client.callTool({name: 'fail'})
    await client
      .request({method: 'prompts/get', params: {name: 'nothing-here'}}, GetPromptResultSchema)
      .catch(() => 'refused')
    const fail = only(telemetry.spans(), 'tools/call fail')
    expect(fail.status.code).toBe(SpanStatusCode.ERROR)
    expect(fail.attributes['error.type']).toBe('tool_error')
    const prompt = only(telemetry.spans(), 'prompts/get nothing-here')
    expect(prompt.attributes).toMatchObject({
      'gen_ai.prompt.name': 'nothing-here',
      'rpc.response.status_code': expect.any(String),
    })
    expect(prompt.attributes['error.type']).toBe(prompt.attributes['rpc.response.status_code'])
  })
})

describe('a restart', () => {
  it('resumes the call from a FileStore in a span of its trace, a child of the span the first process left', async () => {
    const {reference, listening} = await serve()
    const directory = await mkdtemp(join(tmpdir(), 'otel-restart-'))
    open.push(() => rm(directory, {recursive: true, force: true}))
    const file = join(directory, 'resumption.json')
    const before = await connect(listening.url, {store: new FileStore(file)})
    // The first process dies mid-call: its transport closed, its session and cursors left in the file.
    await slowCall(before.client, 2, () => before.transport.close()).catch(() => 'process died')
    const first = only(telemetry.spans(), 'tools/call slow')
    expect(first.attributes['error.type']).toBe('aborted')

    const after = await connect(listening.url, {store: new FileStore(file)})
    await until(() => after.transport.metrics.unmatchedResponses === 1)
    const resumed = named(telemetry.spans(), 'tools/call slow').find((span) => span !== first)!
    expect(resumed.attributes).toMatchObject({'mcp_resumable_http.restored': true, 'jsonrpc.request.id': '1'})
    expect(resumed.spanContext().traceId).toBe(first.spanContext().traceId)
    expect(resumed.parentSpanContext?.spanId).toBe(first.spanContext().spanId)
    expect(resumed.status.code).toBe(SpanStatusCode.UNSET)
    expect(
      resumed.events.map((event) => [event.name, event.attributes?.['mcp_resumable_http.reconnect.branch']]),
    ).toEqual([[reconnectEvent, 'stream-resumption']])
    expect(reference.requests('POST', 'tools/call')).toHaveLength(1)
  })
})

describe('a session the server ended', () => {
  it('is counted, ends its standalone stream span, and records its duration with error.type', async () => {
    const {reference, client} = await stack()
    await client.callTool({name: 'echo'})
    reference.faults.expireSession()
    expect(
      await client.callTool({name: 'echo'}).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused')
    await until(() => named(telemetry.spans(), 'standalone stream').length === 1)
    expect(await telemetry.count('mcp_resumable_http.client.sessions_expired')).toBe(1)
    const [session] = await telemetry.points('mcp.client.session.duration')
    expect(session?.attributes['error.type']).toBe('session-expired')
    expect(named(telemetry.spans(), 'tools/call echo').map((span) => span.attributes['error.type'])).toEqual([
      undefined,
      'session-expired',
    ])
  })
})

describe('what is recorded', () => {
  it('holds no secret: no token, no query of the server URL, no argument, no resource query, no raw session ID', async () => {
    const {listening} = await serve()
    const {client, transport} = await connect(`${listening.url}?key=query-secret`, {
      requestInit: {headers: {authorization: 'Bearer token-secret', 'x-api-key': 'header-secret'}},
    })
    await client.callTool({name: 'echo', arguments: {password: 'argument-secret'}})
    await client.readResource({uri: 'https://files.example/report?token=uri-secret'})
    await transport.close()
    const recorded = everythingRecorded(telemetry.spans())
    for (const secret of [
      'query-secret',
      'token-secret',
      'header-secret',
      'argument-secret',
      'uri-secret',
      transport.sessionId!,
    ])
      expect(recorded).not.toContain(secret)
    expect(only(telemetry.spans(), 'resources/read').attributes['mcp.resource.uri']).toBe(
      'https://files.example/report',
    )
  })

  it('records the raw session ID only when the app opts in', async () => {
    const {client, transport} = await stack({telemetry: {sessionIdAttribute: 'raw'}})
    await client.callTool({name: 'echo'})
    expect(only(telemetry.spans(), 'tools/call echo').attributes['mcp.session.id']).toBe(transport.sessionId)
  })

  it('refuses telemetry options it cannot use, naming them', () => {
    const url = new URL('http://127.0.0.1:1/mcp')
    expect(() => new InstrumentedHTTPClientTransport(url, {telemetry: {sessionIdAttribute: 'hash' as never}})).toThrow(
      /options\.telemetry\.sessionIdAttribute must be 'digest' or 'raw'/,
    )
    expect(() => new InstrumentedHTTPClientTransport(url, {telemetry: {tracer: {}} as never})).toThrow(
      /unknown option tracer/,
    )
    expect(() => new InstrumentedHTTPClientTransport(url, {telemetry: {meterProvider: {}} as never})).toThrow(
      /options\.telemetry\.meterProvider must be a MeterProvider/,
    )
    // The transport's own options are still the transport's to check.
    expect(() => new InstrumentedHTTPClientTransport(url, {onEvent: 'log' as never})).toThrow(/onEvent/)
  })

  it('puts nothing in params._meta without a tracer provider: the global one records nothing', async () => {
    const {listening} = await serve()
    const {client, posted} = await connect(listening.url, {telemetry: {tracerProvider: undefined}})
    await client.callTool({name: 'echo'})
    expect(posted.filter((body) => body.method === 'tools/call').map((body) => body.params?._meta)).toEqual([undefined])
    expect(telemetry.spans()).toEqual([])
  })
})
