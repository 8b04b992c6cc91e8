/**
 * Both halves of `mcp-resumable-http/otel` with the real OpenTelemetry SDK, against the official SDK servers over
 * real sockets through a TCP proxy that cuts them, each server request handled in a SERVER span as an HTTP
 * instrumentation makes one: a cut-and-resumed `tools/call` is one trace with its reconnect on both halves; a
 * client that kept its cursor shows replay and no re-emission, one that lost it the reverse, on both halves.
 */
import {SpanKind, SpanStatusCode} from '@opentelemetry/api'
import type {ReadableSpan} from '@opentelemetry/sdk-trace'
import {describe, expect, it} from 'vitest'
import {InstrumentedHTTPClientTransport, ServerTelemetry} from '../../src/otel.ts'
import {callTool, until, type CreateTransport} from '../fixtures/interop.ts'
import {named, useTelemetry, withServerSpans} from '../fixtures/otel.ts'
import * as servers from '../fixtures/sdk-servers.ts'
import {afterEventWith, afterHeaders, type CutRule} from '../fixtures/tcp-proxy.ts'

const telemetry = useTelemetry()
const start = servers.useServerStacks()
type Flavour = servers.Flavour

const isAttach = (chunk: string): boolean => /^GET /.test(chunk) && !/last-event-id/i.test(chunk)
const isToolsCall = (chunk: string): boolean => chunk.includes('"tools/call"')

const instrumented: CreateTransport = (url, options) =>
  new InstrumentedHTTPClientTransport(url, {
    ...options,
    telemetry: {tracerProvider: telemetry.tracerProvider, meterProvider: telemetry.meterProvider},
  })

/** The server parts, instrumented, every request in a SERVER span. */
const parts = (flavour: Flavour, options: Partial<servers.TestServerOptions> = {}): servers.TestServerOptions => ({
  flavour,
  store: 'resumable',
  reemit: {},
  telemetry: new ServerTelemetry({meterProvider: telemetry.meterProvider}),
  serve: withServerSpans(telemetry.tracerProvider.getTracer('http-server')),
  ...options,
})

const stackOf = (
  flavour: Flavour,
  cut: CutRule,
  reconnectMs = 20,
  options: Partial<servers.TestServerOptions> = {},
): Promise<servers.ServerStack> => start('ours', parts(flavour, options), cut, reconnectMs, instrumented)

const serverSpans = (method: string, resumed: boolean): ReadableSpan[] =>
  telemetry
    .spans()
    .filter(
      (span) =>
        span.kind === SpanKind.SERVER &&
        span.name === method &&
        (span.attributes['test.last_event_id'] !== '') === resumed,
    )
const eventsNamed = (span: ReadableSpan | undefined, name: string) =>
  (span?.events ?? []).filter((event) => event.name === `mcp_resumable_http.${name}`).map((event) => event.attributes)

/** The counters of both halves that tell the two resumptions apart. */
async function counters(): Promise<Record<string, number>> {
  const names = [
    'client.replayed_events',
    'client.reemitted_requests',
    'server.replayed_events',
    'server.reemitted_requests',
  ]
  const values = await Promise.all(names.map((name) => telemetry.count(`mcp_resumable_http.${name}`)))
  return Object.fromEntries(names.map((name, index) => [name, values[index]!]))
}

describe.each(servers.flavours)('on %s', (flavour) => {
  it('shows a tools/call cut mid-stream and resumed as one trace: its POST, its cut, its resume on both halves, its answer', async () => {
    const stack = await stackOf(flavour, {request: isToolsCall, at: afterEventWith('"progress":1')})
    const call = callTool(stack.peer, 'slow')
    await stack.cut
    await call.settled
    expect(call.state).toBe('result')
    await until(() => serverSpans('GET', true).length > 0)
    const [client] = named(telemetry.spans(), 'tools/call slow')
    expect(client?.status.code).toBe(SpanStatusCode.UNSET)
    const {traceId, spanId} = client!.spanContext()
    expect(eventsNamed(client, 'reconnect')).toMatchObject([
      {'mcp_resumable_http.reconnect.branch': 'stream-resumption'},
    ])
    // The server's side: its POST and its resumed GET are children of the call's span.
    const post = serverSpans('POST', false).find((span) => span.spanContext().traceId === traceId)
    const [resumed] = serverSpans('GET', true)
    for (const span of [post, resumed]) {
      expect(span?.spanContext().traceId).toBe(traceId)
      expect(span?.parentSpanContext?.spanId).toBe(spanId)
    }
    const session = stack.server.session(stack.peer.transport.sessionId!)
    expect(eventsNamed(resumed, 'stream_resumption')).toEqual([
      {
        'mcp_resumable_http.resumption.outcome': 'replayed',
        'http.request.header.last-event-id': [resumed!.attributes['test.last_event_id']],
        'mcp_resumable_http.replayed_events': session.store!.metrics.replayedEvents,
      },
    ])
    expect(await telemetry.count('mcp_resumable_http.server.stream_resumptions')).toBe(1)
    expect(await telemetry.count('mcp_resumable_http.server.stored_events')).toBe(session.store!.metrics.storedEvents)
  })

  it('for a client that kept its cursor, counts replay and no re-emission on both halves', async () => {
    const stack = await stackOf(flavour, {request: isAttach, at: afterEventWith('"first"')}, 150)
    await until(() => stack.server.requests('GET').some((entry) => entry.status === 200))
    await stack.server.notify('first')
    await stack.cut
    // While the standalone stream is down, a tool asks the user something on it.
    await callTool(stack.peer, 'ask-later').settled
    await until(() => stack.server.lateAnswers.length === 1)
    const values = await counters()
    expect(values).toMatchObject({'client.reemitted_requests': 0, 'server.reemitted_requests': 0})
    expect(values['client.replayed_events']).toBeGreaterThanOrEqual(1)
    expect(values['server.replayed_events']).toBe(values['client.replayed_events'])
    // The standalone stream's spans end with it.
    await stack.peer.client.close()
    await until(() => serverSpans('GET', true).length === 1)
    expect(eventsNamed(named(telemetry.spans(), 'standalone stream')[0], 'reconnect')).toMatchObject([
      {'mcp_resumable_http.reconnect.branch': 'stream-resumption', 'mcp_resumable_http.stream.kind': 'standalone'},
    ])
    expect(eventsNamed(serverSpans('GET', true)[0], 'stream_resumption')).toMatchObject([
      {'mcp_resumable_http.resumption.outcome': 'replayed', 'mcp_resumable_http.replayed_events': 1},
    ])
  })

  it('for a client that lost its cursor, counts re-emission and no replay on both halves', async () => {
    const stack = await stackOf(flavour, {request: isAttach, at: afterHeaders}, 150)
    await stack.cut
    await callTool(stack.peer, 'ask-later').settled
    await until(() => stack.server.lateAnswers.length === 1)
    expect(await counters()).toEqual({
      'client.replayed_events': 0,
      'client.reemitted_requests': 1,
      'server.replayed_events': 0,
      'server.reemitted_requests': 1,
    })
    expect(await telemetry.count('mcp_resumable_http.server.session_resumptions')).toBe(2)
    await stack.peer.client.close()
    await until(() => serverSpans('GET', false).length === 2)
    expect(eventsNamed(named(telemetry.spans(), 'standalone stream')[0], 'reconnect')).toMatchObject([
      {'mcp_resumable_http.reconnect.branch': 'session-resumption'},
    ])
    const attaches = serverSpans('GET', false).flatMap((span) => eventsNamed(span, 'session_resumption'))
    expect(attaches).toContainEqual({
      'mcp_resumable_http.reemitted_requests': 1,
      'mcp_resumable_http.cancelled_requests': 0,
    })
  })
})

describe('a call whose stream cannot be resumed', () => {
  it('is counted outcome-unknown by its cause, and its span ends with that error.type', async () => {
    const stack = await stackOf('v1-node', {request: isToolsCall, at: afterEventWith('sampling/createMessage')}, 20, {
      store: 'none',
      reemit: false,
    })
    const call = callTool(stack.peer, 'sample')
    await stack.cut
    await call.settled
    expect(call.failure).toBe('outcome-unknown')
    await until(() => named(telemetry.spans(), 'tools/call sample').length === 1)
    expect(
      await telemetry.count('mcp_resumable_http.client.outcome_unknown', {
        'mcp_resumable_http.outcome_unknown.cause': 'abandoned',
      }),
    ).toBe(1)
    const [span] = named(telemetry.spans(), 'tools/call sample')
    expect(span?.attributes['error.type']).toBe('outcome-unknown')
    expect(span?.status.code).toBe(SpanStatusCode.ERROR)
  })
})
