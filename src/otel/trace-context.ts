/**
 * Trace context in `params._meta` ([SEP-414], as the MCP semantic conventions ask): `traceparent` and `tracestate`
 * in their W3C formats, whatever propagator the app registered for HTTP headers. `@opentelemetry/api` has no W3C
 * propagator of its own, and an OpenTelemetry SDK is no run-time dependency here: the one format is written here.
 */
import {isSpanContextValid, ROOT_CONTEXT, trace, type Context, type SpanContext} from '@opentelemetry/api'

/** [W3C Trace Context] version 00: `00-{trace-id}-{parent-id}-{trace-flags}`, lowercase hex. */
const traceparentPattern = /^00-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})$/

/** `traceparent` of `spanContext`. */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${spanContext.traceFlags.toString(16).padStart(2, '0')}`
}

/**
 * The remote span context of a `traceparent`, or undefined when it is not a valid one. Its `tracestate` stays behind:
 * the API parses none without an SDK (its `createTraceState` is deprecated for the SDK's), and a vendor's entries
 * are the vendor's to carry.
 */
export function spanContextOf(traceparent: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined
  const match = traceparentPattern.exec(traceparent)
  if (match === null) return undefined
  const spanContext: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  }
  return isSpanContextValid(spanContext) ? spanContext : undefined
}

/** The `params._meta` of a request or notification, if it has one. */
function metaOf(message: object): Record<string, unknown> | undefined {
  return (message as {params?: {_meta?: Record<string, unknown>}}).params?._meta
}

/** The `traceparent` in `message`'s `params._meta`, if there is one. */
export function traceparentIn(message: object): string | undefined {
  const traceparent = metaOf(message)?.['traceparent']
  return typeof traceparent === 'string' ? traceparent : undefined
}

/** The context of the trace the Client put in `message`'s `params._meta`, if it put one there. */
export function contextInMeta(message: object): Context | undefined {
  const spanContext = spanContextOf(metaOf(message)?.['traceparent'])
  return spanContext === undefined ? undefined : trace.setSpanContext(ROOT_CONTEXT, spanContext)
}

/**
 * `message` with `spanContext` in its `params._meta`, the rest as it was (a copy: the Client's message is left
 * alone); `message` itself when the span context is not valid (no tracer provider was registered).
 */
export function withTraceContext<M extends object>(message: M, spanContext: SpanContext): M {
  if (!isSpanContextValid(spanContext)) return message
  const meta: Record<string, unknown> = {...metaOf(message), traceparent: traceparentOf(spanContext)}
  const tracestate = spanContext.traceState?.serialize()
  if (tracestate !== undefined && tracestate !== '') meta['tracestate'] = tracestate
  const params = (message as {params?: Record<string, unknown>}).params
  return {...message, params: {...params, _meta: meta}}
}
