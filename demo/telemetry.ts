/**
 * `npm run demo -- --otel`: every client of this process on `mcp-resumable-http/otel`, with the OpenTelemetry SDK's
 * meter provider and a tracer provider that keeps its spans; at the end, the counters they exported.
 */
import {MeterProvider, MetricReader, type DataPoint} from '@opentelemetry/sdk-metrics'
import {InMemorySpanExporter, SimpleSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import type {ResumableHTTPClientTransportOptions} from '../src/index.ts'
import {InstrumentedHTTPClientTransport} from '../src/otel.ts'
import {bold, dim} from './output.ts'

/** A reader the demo collects from when it prints. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }

  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

const reader = new OnDemandReader()
const meterProvider = new MeterProvider({readers: [reader]})
const spans = new InMemorySpanExporter()
const tracerProvider = new TracerProvider({spanProcessors: [new SimpleSpanProcessor({exporter: spans})]})

/** The demo's transport, instrumented. */
export function instrumented(url: URL, options: ResumableHTTPClientTransportOptions): InstrumentedHTTPClientTransport {
  return new InstrumentedHTTPClientTransport(url, {...options, telemetry: {tracerProvider, meterProvider}})
}

/** A data point's attributes, as `key=value` without this package's namespace. */
const attributesOf = (point: DataPoint<unknown>): string =>
  Object.entries(point.attributes)
    .map(([key, value]) => `${key.replace(/^mcp_resumable_http\./, '')}=${String(value)}`)
    .join(' ')

/** Prints every counter exported, point by point, and how many spans ended. */
export async function printTelemetry(): Promise<void> {
  const {resourceMetrics} = await reader.collect()
  console.log(`\n${bold('OpenTelemetry')} ${dim('(--otel: what the clients of this process exported)')}`)
  for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
    const points = metric.dataPoints as DataPoint<unknown>[]
    // A histogram's points differ by server and method: their count says enough here.
    if (points.some((point) => typeof point.value !== 'number')) {
      const count = points.reduce((sum, point) => sum + (point.value as {count: number}).count, 0)
      console.log(`  ${metric.descriptor.name}  ${dim(`${String(count)} recorded`)}`)
      continue
    }
    for (const point of points)
      console.log(`  ${metric.descriptor.name} ${dim(attributesOf(point))}  ${String(point.value)}`)
  }
  const finished = spans.getFinishedSpans()
  console.log(dim(`  ${finished.length} spans ended, ${new Set(finished.map((span) => span.name)).size} names`))
}
