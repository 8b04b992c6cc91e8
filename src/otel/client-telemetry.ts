/**
 * The client half's telemetry, fed by the transport's public seams: what the Client sends (`send`), what it
 * receives (`onmessage`), the transport's events (`onEvent`) and its fetches (`fetch`). A span per request, as the MCP
 * conventions describe it, from `send` to its answer or its settlement, whatever reconnects its stream went
 * through; a span event for each of them; a span for the standalone stream's life; the conventions' two histograms
 * and this package's counters (src/otel/client-metrics.ts).
 */
import {context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Tracer} from '@opentelemetry/api'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {
  isTransportError,
  type CallRecord,
  type FetchLike,
  type JsonRpcId,
  type ResumptionHeaders,
  type TransportEvent,
  type TransportMetrics,
} from '../index.ts'
import {serverAttributes, SessionIds, targetOf} from './attributes.ts'
import {ClientMetrics} from './client-metrics.ts'
import {attribute, spanEvent, standaloneSpan} from './names.ts'
import {resolveTelemetry} from './options.ts'
import {errorTypeOf, keyOf, outcomeOf, trackedSpan, type Outcome, type Tracked} from './spans.ts'
import {streamFetch} from './stream-fetch.ts'
import {contextInMeta, spanContextOf, traceparentIn, withTraceContext} from './trace-context.ts'

/** What the telemetry reads of its transport, once it exists. */
export interface TelemetryHost {
  sessionId(): string | undefined
  protocolVersion(): string | undefined
  metrics(): Readonly<TransportMetrics>
}

export class ClientTelemetry {
  readonly #tracer: Tracer
  readonly #metrics: ClientMetrics
  readonly #sessionIds: SessionIds
  readonly #server: Attributes
  #host: TelemetryHost | undefined
  /** The Client's requests in flight, by their ID. */
  readonly #requests = new Map<string, Tracked>()
  /** Response streams an event named, by their wire ID: the Client's requests, and a previous process's calls. */
  readonly #streams = new Map<number, Tracked>()
  #standalone: Tracked | undefined
  /** The span of each resumption's `Last-Event-ID`, for the GET that sends it. */
  readonly #resumes = new Map<string, Tracked>()
  /** The session this process holds, since when. */
  #session: {id: string; started: number} | undefined
  /** A stream was reopened: what the Client receives may be a replay or a re-emission from now on. */
  #reopened = false

  constructor(url: URL, options: unknown) {
    const {tracer, meter, sessionIdAttribute} = resolveTelemetry(options, 'options.telemetry', [
      'tracerProvider',
      'meterProvider',
      'sessionIdAttribute',
    ])
    this.#tracer = tracer
    this.#metrics = new ClientMetrics(meter)
    this.#sessionIds = new SessionIds(sessionIdAttribute)
    this.#server = serverAttributes(url)
  }

  attach(host: TelemetryHost): void {
    this.#host = host
  }

  /** Sends `message` through `run` within its span: trace context in `params._meta`, unless the Client put one there. */
  async send(
    message: JSONRPCMessage,
    requestSignal: AbortSignal | undefined,
    run: (sent: JSONRPCMessage) => Promise<void>,
  ): Promise<void> {
    const {method, id, params} = message as {method?: unknown; id?: JsonRpcId; params?: {requestId?: unknown}}
    // An answer to a server request: no operation of the Client's.
    if (typeof method !== 'string') return run(message)
    if (method === 'notifications/cancelled') {
      const cancelled = params?.requestId
      if (typeof cancelled === 'string' || typeof cancelled === 'number')
        this.#endRequest(cancelled, {errorType: 'cancelled'})
    }
    const given = contextInMeta(message)
    const parent = given ?? context.active()
    const {spanName, attributes} = targetOf(method, (message as {params?: {name?: unknown; uri?: unknown}}).params)
    const metricAttributes = {...attributes, ...this.#server, ...this.#protocolAttribute()}
    const span = this.#tracer.startSpan(
      spanName,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...metricAttributes,
          ...(id === undefined ? {} : {[attribute.requestId]: String(id)}),
          ...this.#sessionAttribute(this.#host?.sessionId()),
        },
      },
      parent,
    )
    const sent = given === undefined ? withTraceContext(message, span.spanContext()) : message
    const tracked: Tracked = {
      span,
      started: performance.now(),
      metricAttributes,
      traceparent: traceparentIn(sent),
      clientId: id,
      wireId: undefined,
      resumedFrom: undefined,
      sending: true,
      ended: false,
    }
    if (id !== undefined) this.#requests.set(keyOf(id), tracked)
    requestSignal?.addEventListener('abort', () => this.#end(tracked, {errorType: 'cancelled'}), {once: true})
    try {
      await context.with(trace.setSpan(parent, span), () => run(sent))
    } catch (error) {
      if (isTransportError(error, 'outcome-unknown')) this.#metrics.outcomeUnknown('post')
      this.#end(tracked, {errorType: errorTypeOf(error)})
      throw error
    } finally {
      tracked.sending = false
    }
    // A notification is done once the server took it; a request, at its answer.
    if (id === undefined) this.#end(tracked, {})
  }

  /** What the Client receives: a response ends its request's span. */
  received(message: JSONRPCMessage): void {
    const {id, method} = message as {id?: JsonRpcId; method?: unknown}
    if (id !== undefined && method === undefined) {
      const tracked = this.#requests.get(keyOf(id))
      if (tracked !== undefined) this.#end(tracked, outcomeOf(message, tracked.metricAttributes[attribute.method]))
    }
    // Only a reopened stream replays or re-emits: until one was, reading the counters would find nothing new.
    if (this.#reopened) this.#sample()
  }

  /** A transport event: a span event, a span's end, a count. */
  event(event: TransportEvent): void {
    this.#metrics.count(event)
    switch (event.type) {
      case 'stream-opened':
        this.#standaloneStream()
        break
      case 'reconnect': {
        this.#reopened = true
        const tracked =
          event.stream === 'standalone' ? this.#standaloneStream() : this.#stream(event.requestId, event.call)
        tracked.span.addEvent(spanEvent.reconnect, {
          [attribute.branch]: event.branch,
          [attribute.streamKind]: event.stream,
          [attribute.attempt]: event.attempt,
          ...this.#headerAttributes(event.headers),
        })
        this.#resumedFrom(tracked, event.headers['last-event-id'])
        break
      }
      case 'reconnect-failed':
        this.#streamOf(event)?.span.addEvent(spanEvent.reconnectFailed, {
          [attribute.attempt]: event.attempt,
          [attribute.errorType]: errorTypeOf(event.error),
        })
        break
      case 'cursor-rejected':
        this.#streamOf(event)?.span.addEvent(spanEvent.cursorRefused, {
          [attribute.httpStatus]: event.status,
          [attribute.lastEventId]: [event.lastEventId],
        })
        break
      case 'stream-degraded':
        this.#standalone?.span.addEvent(spanEvent.degraded, {[attribute.errorType]: errorTypeOf(event.error)})
        break
      case 'stream-recovered':
        this.#standalone?.span.addEvent(spanEvent.recovered)
        break
      case 'stream-closed':
        this.#closed(event)
        break
      case 'request-settled': {
        const tracked = this.#requests.get(keyOf(event.requestId))
        // Settled while its POST was on its way: the POST's answer brought no response.
        if (tracked?.sending === true && event.code === 'outcome-unknown') this.#metrics.outcomeUnknown('post')
        if (tracked !== undefined) this.#end(tracked, {errorType: event.code})
        break
      }
      case 'unmatched-response': {
        // The answer to a previous process's call, resumed here.
        const tracked = this.#streams.get(event.id as number)
        if (tracked !== undefined && tracked.clientId === undefined)
          this.#end(tracked, outcomeOf(event.message, tracked.metricAttributes[attribute.method]))
        break
      }
      case 'session-started':
        this.#sessionEnded(undefined)
        this.#session = {id: event.sessionId, started: performance.now()}
        break
      case 'session-expired':
        this.#sessionEnded('session-expired')
        break
      case 'session-terminated':
        this.#sessionEnded(undefined)
        break
      default:
        break
    }
    this.#sample()
  }

  /** After `start()`: a stored or given session was attached. */
  started(): void {
    const id = this.#host?.sessionId()
    if (id !== undefined && this.#session === undefined) this.#session = {id, started: performance.now()}
  }

  /** After `close()`: what is still open ends here; the session, kept for a later process, ends for this one. */
  closed(): void {
    this.#sessionEnded(undefined, 'aborted')
    this.#sample()
  }

  /** `fetch` with each stream's GET in its span's context (src/otel/stream-fetch.ts). */
  fetch(inner: FetchLike | undefined): FetchLike {
    return streamFetch(inner, (lastEventId) =>
      lastEventId === null ? this.#standalone?.span : this.#resumes.get(lastEventId)?.span,
    )
  }

  #standaloneStream(): Tracked {
    if (this.#standalone !== undefined) return this.#standalone
    // A span of its own, in no request's trace: it lives as long as the session's stream.
    const span = this.#tracer.startSpan(standaloneSpan, {
      kind: SpanKind.INTERNAL,
      root: true,
      attributes: {...this.#server, ...this.#protocolAttribute(), ...this.#sessionAttribute(this.#host?.sessionId())},
    })
    return (this.#standalone = trackedSpan(span, undefined, undefined))
  }

  /** The span of response stream `wireId`: the Client's request it answers, or a previous process's call resumed here. */
  #stream(wireId: JsonRpcId | undefined, call: CallRecord | undefined): Tracked {
    const wire = wireId as number
    const known = this.#streams.get(wire)
    if (known !== undefined) return known
    const request = call === undefined ? undefined : this.#requests.get(keyOf(call.clientId))
    // The same request ID and trace context: this process's request; else a previous process's.
    if (request !== undefined && request.traceparent === call?.traceparent && request.wireId === undefined) {
      request.wireId = wire
      this.#streams.set(wire, request)
      return request
    }
    const restored = this.#restored(call)
    restored.wireId = wire
    this.#streams.set(wire, restored)
    return restored
  }

  /** A previous process's call whose stream this process resumes: a span in the call's trace, when it kept one. */
  #restored(call: CallRecord | undefined): Tracked {
    const method = call?.method ?? 'unknown'
    const named = method.startsWith('resources/') ? {uri: call?.name} : {name: call?.name}
    const {spanName, attributes} = targetOf(method, named)
    const spanContext = spanContextOf(call?.traceparent)
    const parent = spanContext === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, spanContext)
    const span = this.#tracer.startSpan(
      spanName,
      {
        kind: SpanKind.CLIENT,
        root: spanContext === undefined,
        attributes: {
          ...attributes,
          ...this.#server,
          ...this.#protocolAttribute(),
          ...this.#sessionAttribute(this.#host?.sessionId()),
          ...(call === undefined ? {} : {[attribute.requestId]: String(call.clientId)}),
          [attribute.restored]: true,
        },
      },
      parent,
    )
    return trackedSpan(span, undefined, call?.traceparent)
  }

  #streamOf(event: {stream: 'standalone' | 'request'; requestId: JsonRpcId | undefined}): Tracked | undefined {
    return event.stream === 'standalone' ? this.#standalone : this.#streams.get(event.requestId as number)
  }

  #resumedFrom(tracked: Tracked, lastEventId: string | undefined): void {
    if (tracked.resumedFrom !== undefined) this.#resumes.delete(tracked.resumedFrom)
    tracked.resumedFrom = lastEventId
    if (lastEventId !== undefined) this.#resumes.set(lastEventId, tracked)
  }

  #closed(event: Extract<TransportEvent, {type: 'stream-closed'}>): void {
    if (event.stream === 'standalone') {
      const standalone = this.#standalone
      standalone?.span.setAttribute(attribute.closeReason, event.reason)
      if (standalone !== undefined) this.#end(standalone, {})
      return
    }
    const tracked = this.#streams.get(event.requestId as number)
    if (tracked === undefined) return
    this.#streams.delete(event.requestId as number)
    if (event.reason !== 'completed' && !tracked.ended)
      tracked.span.addEvent(spanEvent.streamClosed, {[attribute.closeReason]: event.reason})
    // A previous process's call ends with its stream: no Client settles it.
    if (tracked.clientId === undefined)
      this.#end(tracked, event.reason === 'completed' ? {} : {errorType: 'outcome-unknown'})
  }

  /** The session held ended (`errorType` when the server ended it): its duration, and the spans that were its own. */
  #sessionEnded(errorType: string | undefined, leftOpen = errorType): void {
    const session = this.#session
    this.#session = undefined
    if (session !== undefined)
      this.#metrics.session((performance.now() - session.started) / 1000, {
        ...this.#server,
        ...this.#protocolAttribute(),
        ...(errorType === undefined ? {} : {[attribute.errorType]: errorType}),
      })
    if (this.#standalone !== undefined) this.#end(this.#standalone, {})
    for (const tracked of [...this.#streams.values()])
      if (tracked.clientId === undefined) this.#end(tracked, {errorType: leftOpen ?? 'aborted'})
  }

  #endRequest(id: JsonRpcId, outcome: Outcome): void {
    const tracked = this.#requests.get(keyOf(id))
    if (tracked !== undefined) this.#end(tracked, outcome)
  }

  #end(tracked: Tracked, {errorType, statusCode}: Outcome): void {
    if (tracked.ended) return
    tracked.ended = true
    if (tracked.clientId !== undefined) this.#requests.delete(keyOf(tracked.clientId))
    if (tracked.wireId !== undefined) this.#streams.delete(tracked.wireId)
    if (tracked.resumedFrom !== undefined) this.#resumes.delete(tracked.resumedFrom)
    if (tracked === this.#standalone) this.#standalone = undefined
    const {span} = tracked
    const failed: Attributes = {}
    if (errorType !== undefined) failed[attribute.errorType] = errorType
    if (statusCode !== undefined) failed[attribute.statusCode] = statusCode
    // Known only once answered, for `initialize`.
    const late = {...this.#protocolAttribute(), ...this.#sessionAttribute(this.#host?.sessionId())}
    span.setAttributes({...late, ...failed})
    // The status says what failed, never why in the server's words: a message may quote what it was sent.
    if (errorType !== undefined) span.setStatus({code: SpanStatusCode.ERROR, message: errorType})
    span.end()
    // Only what the Client sent is an operation of this process: a resumed call's start was another's.
    if (tracked.started !== undefined)
      this.#metrics.operation((performance.now() - tracked.started) / 1000, {
        ...tracked.metricAttributes,
        ...this.#protocolAttribute(),
        ...failed,
      })
  }

  #sample(): void {
    if (this.#host !== undefined) this.#metrics.sample(this.#host.metrics())
  }

  #protocolAttribute(): Attributes {
    const version = this.#host?.protocolVersion()
    return version === undefined ? {} : {[attribute.protocolVersion]: version}
  }

  #sessionAttribute(id: string | undefined): Attributes {
    return id === undefined ? {} : {[attribute.sessionId]: this.#sessionIds.value(id)}
  }

  /** [the founding note] both headers of a reconnect, the session ID as `sessionIdAttribute` says. */
  #headerAttributes(headers: ResumptionHeaders): Attributes {
    const sent: Attributes = this.#sessionAttribute(headers['mcp-session-id'])
    if (headers['last-event-id'] !== undefined) sent[attribute.lastEventId] = [headers['last-event-id']]
    return sent
  }
}
