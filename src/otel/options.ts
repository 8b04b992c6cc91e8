import {metrics, trace, type Meter, type MeterProvider, type Tracer, type TracerProvider} from '@opentelemetry/api'
import type {SessionIdAttribute} from './attributes.ts'
import {scope} from './names.ts'

/** What the client half records with, and how it records session IDs. */
export interface ClientTelemetryOptions {
  /**
   * Where the spans go.
   * @defaultValue the global tracer provider (`trace.getTracerProvider()`: a no-op one until an SDK registers)
   */
  tracerProvider?: TracerProvider | undefined
  /**
   * Where the metrics go.
   * @defaultValue the global meter provider (`metrics.getMeterProvider()`)
   */
  meterProvider?: MeterProvider | undefined
  /**
   * How `mcp.session.id` is recorded, on spans and span events. `'digest'`: `sha256:` and 16 hex digits of the ID's
   * SHA-256, the same on both halves. `'raw'`: the ID itself: only where whoever reads the telemetry may act in the
   * session, for a session ID is a capability on many servers.
   * @defaultValue 'digest'
   */
  sessionIdAttribute?: SessionIdAttribute | undefined
}

/** What the server half records with. */
export interface ServerTelemetryOptions {
  /**
   * Where the metrics go. Span events go on the span active when the SDK handles each `GET`.
   * @defaultValue the global meter provider (`metrics.getMeterProvider()`)
   */
  meterProvider?: MeterProvider | undefined
}

/** The options checked, with their defaults. */
export interface Instruments {
  tracer: Tracer
  meter: Meter
  sessionIdAttribute: SessionIdAttribute
}

/** `options` checked: a TypeError that names the first option it cannot use. */
export function resolveTelemetry(options: unknown, where: string, keys: readonly string[]): Instruments {
  if (options === undefined) options = {}
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where} must be an object`)
  const given = options as Record<string, unknown>
  const unknown = Object.keys(given).filter((key) => !keys.includes(key))
  if (unknown.length > 0)
    throw new TypeError(`${where}: unknown option ${unknown.join(', ')} (the options are ${keys.join(', ')})`)
  const {tracerProvider, meterProvider, sessionIdAttribute = 'digest'} = given
  if (tracerProvider !== undefined && typeof (tracerProvider as TracerProvider | null)?.getTracer !== 'function')
    throw new TypeError(`${where}.tracerProvider must be a TracerProvider (with getTracer)`)
  if (meterProvider !== undefined && typeof (meterProvider as MeterProvider | null)?.getMeter !== 'function')
    throw new TypeError(`${where}.meterProvider must be a MeterProvider (with getMeter)`)
  if (sessionIdAttribute !== 'digest' && sessionIdAttribute !== 'raw')
    throw new TypeError(`${where}.sessionIdAttribute must be 'digest' or 'raw'`)
  return {
    tracer: ((tracerProvider as TracerProvider | undefined) ?? trace.getTracerProvider()).getTracer(scope),
    meter: ((meterProvider as MeterProvider | undefined) ?? metrics.getMeterProvider()).getMeter(scope),
    sessionIdAttribute,
  }
}
