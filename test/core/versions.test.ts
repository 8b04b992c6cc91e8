/**
 * Test plan G (version gating): what the negotiated protocol version changes, from 2025-03-26 to the
 * stateless 2026-07-28.
 */
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {isTransportError, ResumableHTTPClientTransport, type JsonRpcId, type TransportEvent} from '../../src/index.ts'
import {connect, eventsOf, network, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {answerToolCalls, frame, sse} from '../fixtures/wire.ts'

const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}}
const methodNotFound = (id: JsonRpcId): Response =>
  HttpResponse.json({jsonrpc: '2.0', id, error: {code: -32601, message: 'Method not found'}}, {status: 404})

interface Seen {
  method: string
  rpcMethod: string | undefined
  sessionId: string | null
  protocolVersion: string | null
  lastEventId: string | null
}

/**
 * A 2026-07-28 server that still mints a session ID on initialize (to be ignored; `minted` null:
 * none), answers GET with 405, `tools/call` with `call`, and other requests with an SSE answer: a
 * notification, then the response, both under the same event ID.
 */
function modernServer(
  call: (id: JsonRpcId, tool: string) => Response,
  minted: string | null = 'minted-anyway',
): Seen[] {
  const seen: Seen[] = []
  network.use(
    http.all(url, async ({request}) => {
      const body =
        request.method === 'POST'
          ? ((await request.json()) as {id?: JsonRpcId; method?: string; params?: {name?: string}})
          : undefined
      const header = (name: string): string | null => request.headers.get(name)
      seen.push({
        method: request.method,
        rpcMethod: body?.method,
        sessionId: header('mcp-session-id'),
        protocolVersion: header('mcp-protocol-version'),
        lastEventId: header('last-event-id'),
      })
      if (body === undefined) return new HttpResponse(null, {status: 405})
      if (body.id === undefined) return new HttpResponse(null, {status: 202})
      if (body.method === 'initialize') {
        const result = {protocolVersion: '2026-07-28', capabilities: {}, serverInfo: {name: 'modern', version: '1'}}
        return HttpResponse.json(
          {jsonrpc: '2.0', id: body.id, result},
          {headers: minted === null ? {} : {'mcp-session-id': minted}},
        )
      }
      if (body.method === 'tools/call') return call(body.id, body.params?.name ?? '')
      // Event IDs mean nothing here: a server may repeat one, and both events must still arrive.
      return sse([frame('x1', note), frame('x1', {jsonrpc: '2.0', id: body.id, result: {tools: []}})])
    }),
  )
  return seen
}

/** A transport driven by hand: initialized against `modernServer`, then switched to 2026-07-28 as the Client would. */
async function onModernServer(call: (id: JsonRpcId, tool: string) => Response, minted?: string | null) {
  const seen = modernServer(call, minted)
  const store = new RecordingStore()
  const events: TransportEvent[] = []
  const messages: JSONRPCMessage[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {store, onEvent: (event) => events.push(event)})
  transport.onmessage = (message) => messages.push(message)
  await transport.start()
  const params = {protocolVersion: '2026-07-28', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}}
  await transport.send({jsonrpc: '2.0', id: 0, method: 'initialize', params})
  transport.setProtocolVersion('2026-07-28')
  await transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})
  const request = (id: number, method: string, tool?: string): Promise<void> =>
    transport.send({jsonrpc: '2.0', id, method, params: tool === undefined ? {} : {name: tool}})
  const answerTo = (id: number): JSONRPCMessage | undefined =>
    messages.find((message) => 'id' in message && message.id === id)
  return {seen, store, events, messages, transport, request, answerTo}
}

describe('2025-03-26', () => {
  it('a JSON batch answer is delivered whole: the progress notification, then the response', async () => {
    useMock({protocolVersion: '2025-03-26'})
    const {client, transport} = await connect()
    expect(transport.protocolVersion).toBe('2025-03-26')
    answerToolCalls((id, progressToken) =>
      HttpResponse.json([
        {jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken, progress: 1, total: 1}},
        {jsonrpc: '2.0', id, result: {content: [{type: 'text', text: 'batched'}]}},
      ]),
    )
    const progress: number[] = []
    const result = await client.callTool({name: 'echo'}, undefined, {onprogress: (p) => progress.push(p.progress)})
    expect(result.content).toEqual([{type: 'text', text: 'batched'}])
    expect(progress).toEqual([1])
    await client.close()
  })

  it('with no priming event, a stream is resumed from the first event ID the server happened to send', async () => {
    const mock = useMock({protocolVersion: '2025-03-26'})
    const {client, errors} = await connect()
    await until(() => mock.requests('GET').length === 1)
    mock.faults.cutNext({after: 1, how: 'error', on: 'POST'})
    const progress: number[] = []
    await client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })

    const [, tool] = mock.session().streams
    expect(tool!.events[0]!.data).not.toBe('')
    expect(mock.requests('GET').at(-1)).toMatchObject({lastEventId: tool!.events[0]!.id, sessionId: 'session-1'})
    expect(progress).toEqual([1, 2, 3])
    expect(mock.executions).toEqual({slow: 1})
    expect(errors).toEqual([])
    await client.close()
  })
})

describe('2025-11-25 polling', () => {
  it('a server close right after the priming event is routine: resumed, no onerror, no failure event', async () => {
    const mock = useMock({retryMs: 5})
    const {client, transport, errors, events} = await connect()
    await until(() => mock.requests('GET').length === 1)
    mock.faults.cutNext({after: 1, how: 'close', on: 'POST'})
    const result = await client.callTool({name: 'slow', arguments: {steps: 2}})
    expect(result.content).toEqual([{type: 'text', text: 'done after 2 steps'}])

    const [, tool] = mock.session().streams
    expect(eventsOf(events, 'reconnect')).toEqual([
      expect.objectContaining({
        branch: 'stream-resumption',
        headers: {'mcp-session-id': 'session-1', 'last-event-id': tool!.events[0]!.id},
      }),
    ])
    expect(eventsOf(events, 'reconnect-failed')).toEqual([])
    expect(errors).toEqual([])
    expect(transport.metrics.streamResumptions).toBe(1)
    await client.close()
  })

  it('the standalone GET closed after an event ID with retry is polled with Last-Event-ID, silently', async () => {
    useMock()
    const gets: (string | null)[] = []
    network.use(
      http.get(url, ({request}) => {
        gets.push(request.headers.get('last-event-id'))
        return gets.length === 1 ? sse(['retry: 5\nid: g1\ndata: \n\n'], 'close') : sse([], 'open')
      }),
    )
    const {client, errors, events} = await connect()
    await until(() => gets.length === 2)
    expect(gets).toEqual([null, 'g1'])
    expect(eventsOf(events, 'reconnect')).toEqual([
      expect.objectContaining({
        stream: 'standalone',
        branch: 'stream-resumption',
        headers: {'mcp-session-id': 'session-1', 'last-event-id': 'g1'},
      }),
    ])
    expect(errors).toEqual([])
    await client.close()
  })
})

describe('a 2026-07-28 server', () => {
  it('no session header, no GET, SSE IDs ignored; a broken stream rejects its request with outcome-unknown, never re-issued', async () => {
    const {seen, store, transport, request, answerTo, events, messages} = await onModernServer(() =>
      sse(['retry: 1\n' + frame('e1', note), frame('e2', note)], 'error'),
    )
    expect(transport.sessionId).toBeUndefined()
    await request(1, 'tools/call', 'echo')
    await until(() => answerTo(1) !== undefined)
    expect(answerTo(1)).toMatchObject({id: 1, error: {data: {code: 'outcome-unknown'}}})
    await request(2, 'tools/list')
    await until(() => answerTo(2) !== undefined)
    expect(answerTo(2)).toEqual({jsonrpc: '2.0', id: 2, result: {tools: []}})
    expect(messages).toContainEqual(note)

    const later = seen.slice(1)
    expect(later.map((entry) => entry.method)).toEqual(['POST', 'POST', 'POST'])
    expect(later.map((entry) => entry.rpcMethod)).toEqual(['notifications/initialized', 'tools/call', 'tools/list'])
    for (const entry of later)
      expect(entry).toMatchObject({sessionId: null, protocolVersion: '2026-07-28', lastEventId: null})
    expect(transport.metrics.streamResumptions).toBe(0)
    expect(eventsOf(events, 'reconnect')).toEqual([])
    // Nothing of a session or a stream is kept; only the bound below which wire IDs were used (docs/design.md#session).
    expect([...store.keys]).toEqual([expect.stringMatching(/#wire-ids$/)])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toHaveLength(4)
    await transport.close()
  })
})

describe('initialized again after 2026-07-28', () => {
  it('a Client that negotiates 2025-11-25 gets the session era back: its session ID sent, its GET stream opened', async () => {
    const {seen, transport} = await onModernServer(() => sse([]))
    const params = {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}}
    await transport.send({jsonrpc: '2.0', id: 1, method: 'initialize', params})
    transport.setProtocolVersion('2025-11-25')
    await transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})
    await until(() => seen.some((entry) => entry.method === 'GET'))

    expect(seen.slice(-2)).toMatchObject([
      {
        method: 'POST',
        rpcMethod: 'notifications/initialized',
        sessionId: 'minted-anyway',
        protocolVersion: '2025-11-25',
      },
      {method: 'GET', sessionId: 'minted-anyway'},
    ])
    await transport.close()
  })
})

describe('404 with -32601 is method not found', () => {
  it('in a session-less exchange a 404 with -32601 rejects that call with http 404; nothing else is touched', async () => {
    const mock = useMock({sessions: false})
    const {client, transport, events} = await connect()
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: JsonRpcId; params?: {name?: string}}
        return body.params?.name === 'missing' ? methodNotFound(body.id!) : undefined
      }),
    )
    const slow = client.callTool({name: 'slow', arguments: {steps: 3, delayMs: 10}})
    await until(() => mock.requests('POST', 'tools/call').length === 1)
    const error = await client.callTool({name: 'missing'}).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isTransportError(error, 'http') && error.status === 404).toBe(true)

    expect((await slow).content).toEqual([{type: 'text', text: 'done after 3 steps'}])
    await client.listTools()
    expect(eventsOf(events, 'session-expired')).toEqual([])
    expect(eventsOf(events, 'request-settled')).toEqual([])
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    expect(transport.sessionId).toBeUndefined()
    await client.close()
  })

  it('on 2026-07-28 a 404 with -32601 is http 404, not session expiry', async () => {
    const {transport, request, answerTo, events} = await onModernServer((id) => methodNotFound(id))
    const error = await request(1, 'tools/call', 'missing').then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isTransportError(error, 'http') && error.status === 404).toBe(true)
    await request(2, 'tools/list')
    await until(() => answerTo(2) !== undefined)
    expect(eventsOf(events, 'session-expired')).toEqual([])
    await transport.close()
  })
})

describe('a 2026-07-28 handshake that offers no session', () => {
  it('writes nothing of a session to the store, not even its deletion: there was none to end', async () => {
    const {store, transport, request, answerTo} = await onModernServer(() => sse([]), null)
    await request(1, 'tools/list')
    await until(() => answerTo(1) !== undefined)
    expect(store.writes.filter((write) => !write.key.endsWith('#wire-ids'))).toEqual([])
    await transport.close()
  })
})
