/**
 * `mcp-resumable-http/otel` through the OpenTelemetry SDK's OTLP/HTTP exporters into a receiver on 127.0.0.1, as an
 * operator's collector gets it: a call's span with its attributes, and the metrics, in OTLP's JSON.
 */
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {OTLPMetricExporter} from '@opentelemetry/exporter-metrics-otlp-http'
import {OTLPTraceExporter} from '@opentelemetry/exporter-trace-otlp-http'
import {MeterProvider, PeriodicExportingMetricReader} from '@opentelemetry/sdk-metrics'
import {SimpleSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import {afterEach, expect, it} from 'vitest'
import {InstrumentedHTTPClientTransport} from '../../src/otel.ts'
import {createReferenceServer, listen} from '../../src/testing/node.ts'
import {until} from '../fixtures/client.ts'

const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

/** A collector's OTLP/HTTP endpoint: every body POSTed, by path. */
async function receiver(): Promise<{url: string; received: Map<string, unknown[]>}> {
  const received = new Map<string, unknown[]>()
  const http = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const bodies = received.get(request.url ?? '') ?? []
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      received.set(request.url ?? '', bodies)
      response.writeHead(200, {'content-type': 'application/json'}).end('{}')
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  closing.push(() => new Promise((resolve) => http.close(() => resolve())))
  return {url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, received}
}

it("exports a call's span and the metrics over OTLP/HTTP to a collector on 127.0.0.1", async () => {
  const collector = await receiver()
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({exporter: new OTLPTraceExporter({url: `${collector.url}/v1/traces`})})],
  })
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter({url: `${collector.url}/v1/metrics`}),
    exportIntervalMillis: 60_000,
  })
  const meterProvider = new MeterProvider({readers: [reader]})
  closing.push(
    () => tracerProvider.shutdown(),
    () => meterProvider.shutdown(),
  )
  const listening = await listen(createReferenceServer())
  closing.push(() => listening.close())
  const transport = new InstrumentedHTTPClientTransport(new URL(listening.url), {
    telemetry: {tracerProvider, meterProvider},
  })
  const client = new Client({name: 'otlp', version: '1'})
  await client.connect(transport)
  await client.callTool({name: 'echo', arguments: {text: 'hi'}})
  await client.close()
  await tracerProvider.forceFlush()
  await meterProvider.forceFlush()
  await until(() => collector.received.has('/v1/traces') && collector.received.has('/v1/metrics'))

  const spans = (collector.received.get('/v1/traces') as OtlpTraces[]).flatMap((body) =>
    body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
  )
  const call = spans.find((span) => span.name === 'tools/call echo')
  expect(call?.attributes).toEqual(
    expect.arrayContaining([
      {key: 'mcp.method.name', value: {stringValue: 'tools/call'}},
      {key: 'gen_ai.tool.name', value: {stringValue: 'echo'}},
    ]),
  )
  const metrics = (collector.received.get('/v1/metrics') as OtlpMetrics[]).flatMap((body) =>
    body.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics)),
  )
  expect(metrics.map((metric) => metric.name)).toEqual(
    expect.arrayContaining(['mcp.client.operation.duration', 'mcp.client.session.duration']),
  )
})

/** The parts of OTLP's JSON read here. */
interface OtlpTraces {
  resourceSpans: {scopeSpans: {spans: {name: string; attributes: {key: string; value: unknown}[]}[]}[]}[]
}
interface OtlpMetrics {
  resourceMetrics: {scopeMetrics: {metrics: {name: string}[]}[]}[]
}
