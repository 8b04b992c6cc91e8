/**
 * What a span in flight of the client half holds, and how each kind of end is read: a `TransportError`'s code, a
 * JSON-RPC error, a tool's error result.
 */
import type {Attributes, Span} from '@opentelemetry/api'
import {isTransportError, type JsonRpcId} from '../index.ts'

/** How a span ends: the conventions' `error.type` and `rpc.response.status_code`, when it failed. */
export interface Outcome {
  errorType?: string | undefined
  statusCode?: string | undefined
}

/** One span in flight: a request or notification of the Client's, a previous process's call resumed, or the standalone stream. */
export interface Tracked {
  readonly span: Span
  /** `performance.now()` when it started; undefined when it is not an operation the histogram measures. */
  readonly started: number | undefined
  /** What `mcp.client.operation.duration` is recorded with. */
  readonly metricAttributes: Attributes
  /** The `traceparent` the request carried in `params._meta`: how its stream's events are told from another's. */
  readonly traceparent: string | undefined
  /** The Client's request ID, while it is in flight. */
  readonly clientId: JsonRpcId | undefined
  /** The wire ID of its stream, once an event named it. */
  wireId: number | undefined
  /** The `Last-Event-ID` of its latest resumption: the GET that sends it goes in this span's context. */
  resumedFrom: string | undefined
  sending: boolean
  ended: boolean
}

/** The key of a JSON-RPC ID among the Client's requests in flight (1 and "1" apart). */
export const keyOf = (id: JsonRpcId): string => (typeof id === 'number' ? `n${id}` : `s${id}`)

/** The `error.type` of a rejection: the `TransportError` code, else the error's name. */
export function errorTypeOf(error: unknown): string {
  if (isTransportError(error)) return error.code
  return error instanceof Error ? error.name : '_OTHER'
}

/** [semconv mcp] how a response ends its request's span: a JSON-RPC error's code, or `tool_error` for a tool's error result. */
export function outcomeOf(message: object, method: unknown): Outcome {
  const {error, result} = message as {error?: {code?: unknown}; result?: {isError?: unknown}}
  if (error !== undefined) {
    const code = String(error.code)
    return {errorType: code, statusCode: code}
  }
  if (method === 'tools/call' && result?.isError === true) return {errorType: 'tool_error'}
  return {}
}

/** A span of the standalone stream, or of a previous process's call: no operation of this process's Client. */
export function trackedSpan(span: Span, started: number | undefined, traceparent: string | undefined): Tracked {
  return {
    span,
    started,
    metricAttributes: {},
    traceparent,
    clientId: undefined,
    wireId: undefined,
    resumedFrom: undefined,
    sending: false,
    ended: false,
  }
}
