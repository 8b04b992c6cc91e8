/**
 * Test plan B (POST responses): JSON and SSE answers, streams that break before their response, `retry` and
 * backoff. A request is never POSTed twice.
 */
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {McpError} from '@modelcontextprotocol/sdk/types.js'
import {HttpResponse} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type ResumableHTTPClientTransportOptions,
  type TransportEvent,
} from '../../src/index.ts'
import {answerResumes, connect, eventsOf, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {msUntil} from '../fixtures/timing.ts'
import {answerToolCalls, codeOf, failure, frame, result, sse, tap} from '../fixtures/wire.ts'

afterEach(() => {
  vi.useRealTimers()
})

const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}}

/** A transport without the Client, initialized with the mock (no standalone GET: no notifications/initialized). */
async function driven(options: ResumableHTTPClientTransportOptions = {}) {
  const events: TransportEvent[] = []
  const messages: JSONRPCMessage[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {...options, onEvent: (event) => events.push(event)})
  transport.onmessage = (message) => messages.push(message)
  await transport.start()
  const params = {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}}
  await transport.send({jsonrpc: '2.0', id: 0, method: 'initialize', params})
  const call = (id: number): Promise<void> =>
    transport.send({jsonrpc: '2.0', id, method: 'tools/call', params: {name: 'echo'}})
  const answerTo = (id: number): JSONRPCMessage | undefined =>
    messages.find((message) => 'id' in message && message.id === id)
  return {transport, events, messages, call, answerTo}
}

describe('JSON responses', () => {
  it('a JSON response is delivered once, with no stream and no reconnect', async () => {
    const mock = useMock({json: true})
    const {client, transport, events} = await connect()
    const seen = tap(transport)
    const answer = await client.callTool({name: 'echo', arguments: {n: 1}})
    expect(answer.content).toEqual([{type: 'text', text: 'echo: {"n":1}'}])
    await client.listTools()

    expect(seen.filter((message) => 'result' in message)).toHaveLength(2)
    expect(mock.executions).toEqual({echo: 1})
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    expect(eventsOf(events, 'reconnect')).toEqual([])
    expect(eventsOf(events, 'stream-opened').filter((event) => event.stream === 'request')).toEqual([])
    await client.close()
  })

  it.each([
    ['text/html', '<html>proxy error</html>'],
    ['application/json-seq', '{}'],
  ])(
    'a request answered 200 with content type %s is rejected with outcome-unknown (the server took it) and not sent again',
    async (type, text) => {
      useMock()
      const {client} = await connect()
      const calls = answerToolCalls(() => new HttpResponse(text, {headers: {'content-type': type}}))
      const error = await failure(client.callTool({name: 'echo'}))
      expect(codeOf(error)).toBe('outcome-unknown')
      await client.listTools()
      expect(calls).toHaveLength(1)
      await client.close()
    },
  )
})

describe('a stream that breaks before any event ID', () => {
  it.each(['error', 'close'] as const)(
    'connection %s before the response: the call rejects at once with outcome-unknown, no re-POST, no resume GET; the standalone stream re-attaches without its cursor',
    async (end) => {
      const mock = useMock()
      const {client, transport} = await connect()
      await until(() => mock.requests('GET').length === 1)
      const calls = answerToolCalls(() => sse([frame(undefined, note)], end))
      const started = Date.now()
      // A hang would end in the SDK's request timeout (60 s by default; 3 s here) with another error.
      const error = await failure(client.callTool({name: 'echo'}, undefined, {timeout: 3000}))
      expect(Date.now() - started).toBeLessThan(1000)
      expect(error).toBeInstanceOf(McpError)
      expect(codeOf(error)).toBe('outcome-unknown')
      await client.listTools()

      expect(calls).toHaveLength(1)
      expect(mock.log.filter((entry) => entry.lastEventId !== undefined)).toEqual([])
      // The server re-emits what the call's tool may have asked to a stream attached without Last-Event-ID.
      await until(() => mock.requests('GET').length === 2)
      expect(transport.metrics).toMatchObject({streamResumptions: 0, sessionResumptions: 1})
      await client.close()
    },
  )

  it('a POST that fails at the network level rejects with outcome-unknown and is never sent again', async () => {
    useMock()
    const {client} = await connect()
    const calls = answerToolCalls(() => HttpResponse.error())
    const error = await failure(client.callTool({name: 'echo'}))
    expect(isTransportError(error, 'outcome-unknown')).toBe(true)
    expect(isTransportError((error as Error).cause, 'network')).toBe(true)
    await client.listTools()
    expect(calls).toHaveLength(1)
    await client.close()
  })
})

async function primingMovesTheCursor(priming: string): Promise<void> {
  const mock = useMock()
  const store = new RecordingStore()
  const {client, transport, errors} = await connect({store})
  const seen = tap(transport)
  const calls = answerToolCalls(() => sse([`retry: 1\n${priming}`], 'close'))
  const resumes = answerResumes(mock, () => sse([frame('e2', result(calls[0]!.id))]))
  await client.callTool({name: 'echo'})

  expect(resumes).toEqual([{lastEventId: 'e1', sessionId: 'session-1'}])
  // Stored when the connection broke: nothing was delivered before it, so the write could wait until then.
  expect(store.writes).toContainEqual({
    op: 'set',
    key: expect.stringMatching(/#stream:request:\d+$/),
    value: expect.objectContaining({lastEventId: 'e1', retryMs: 1}),
  })
  expect(seen.map((message) => ('id' in message ? message.id : undefined))).toEqual([calls[0]!.id])
  expect(errors).toEqual([])
  expect(calls).toHaveLength(1)
  await client.close()
}

describe('priming events', () => {
  it('a priming event (ID, empty data) moves the cursor, is stored, and is never parsed or delivered', () =>
    primingMovesTheCursor('id: e1\ndata: \n\n'))

  it('a priming event with no data line (an ID alone) moves the cursor too, as WHATWG says', () =>
    primingMovesTheCursor('id: e1\n\n'))
})

describe('a stream that ends after its response', () => {
  it.each([
    ['a result', 'close', {result: {content: []}}],
    ['a JSON-RPC error', 'close', {error: {code: -32602, message: 'bad arguments'}}],
    ['a result, the connection left open', 'open', {result: {content: []}}],
  ] as const)('after %s the stream is finished: no reconnect, its cursor deleted', async (_what, end, outcome) => {
    const mock = useMock()
    const store = new RecordingStore()
    const {client, transport, events} = await connect({store})
    const calls = answerToolCalls((id) =>
      sse(['retry: 1\nid: e1\ndata: \n\n', frame('e2', {jsonrpc: '2.0', id, ...outcome})], end),
    )
    const error = await client.callTool({name: 'echo'}).then(
      () => undefined,
      (e: unknown) => e,
    )
    if ('error' in outcome) expect(error).toMatchObject({code: -32602})
    else expect(error).toBeUndefined()
    await client.listTools()
    // `retry: 1`: a wrong reconnect would have come by now.
    await new Promise((resolve) => setTimeout(resolve, 20))

    expect(eventsOf(events, 'reconnect')).toEqual([])
    expect(mock.log.filter((entry) => entry.lastEventId !== undefined)).toEqual([])
    expect(transport.metrics.streamResumptions).toBe(0)
    expect(await store.cursor(`request:${calls[0]!.id}`)).toBeUndefined()
    await client.close()
  })

  it('reports the finished stream as stream-closed with reason completed', async () => {
    useMock()
    const {client, events} = await connect()
    await client.callTool({name: 'slow', arguments: {steps: 1}})
    await until(() => eventsOf(events, 'stream-closed').length > 0, 300)
    expect(eventsOf(events, 'stream-closed')).toEqual([
      expect.objectContaining({stream: 'request', reason: 'completed'}),
    ])
    await client.close()
  })
})

describe('server close with retry', () => {
  it('closed after E_k with retry R: GET with Last-Event-ID E_k exactly R ms later, never a re-POST', async () => {
    const retryMs = 400
    const mock = useMock()
    const {transport, call, answerTo} = await driven()
    // One chunk, so that the stream closes as it opens: the `retry` wait counts from the close.
    const calls = answerToolCalls(() => sse([`retry: ${retryMs}\nid: e1\ndata: \n\n${frame('e2', note)}`]))
    const resumes = answerResumes(mock, () => sse([frame('e3', result(calls[0]!.id))]))
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    await call(7)

    expect(await msUntil(() => resumes.length === 1)).toBe(retryMs)
    await msUntil(() => answerTo(7) !== undefined)
    expect(answerTo(7)).toEqual(result(7))
    expect(resumes).toEqual([{lastEventId: 'e2', sessionId: 'session-1'}])
    expect(calls).toHaveLength(1)
    await transport.close()
  })
})

describe('no retry: backoff, attempts counted per stream', () => {
  it('the count resets when the cursor advances; with no progress the stream is given up after maxAttempts', async () => {
    const mock = useMock()
    // A connection that lives past maxDelayMs counts as progress: 200 ms keeps an empty one (closed as it opens) a
    // failed attempt on a loaded machine too.
    const {client, transport, events} = await connect({reconnect: {maxAttempts: 2, minDelayMs: 1, maxDelayMs: 200}})
    const calls = answerToolCalls(() => sse(['id: e1\ndata: \n\n'], 'close'))
    // Three resumes each bring one new event and close; after that the server accepts and closes at once.
    const resumes = answerResumes(mock, (n) => sse(n <= 3 ? [frame(`e${n + 1}`, note)] : [], 'close'))
    const error = await failure(client.callTool({name: 'echo'}))

    expect(codeOf(error)).toBe('outcome-unknown')
    expect(resumes.map((resume) => resume.lastEventId)).toEqual(['e1', 'e2', 'e3', 'e4', 'e4'])
    expect(eventsOf(events, 'reconnect').map((event) => event.attempt)).toEqual([1, 1, 1, 1, 2])
    expect(eventsOf(events, 'stream-closed')).toContainEqual(
      expect.objectContaining({stream: 'request', reason: 'given-up'}),
    )
    expect(transport.metrics.streamResumptions).toBe(5)
    expect(calls).toHaveLength(1)
    await client.close()
  })

  it('between failed attempts the delay grows by factor, capped by maxDelayMs', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0) // no jitter: exactly minDelayMs × factor^n
    const mock = useMock()
    const {transport, call, answerTo} = await driven({
      reconnect: {maxAttempts: 3, minDelayMs: 100, factor: 3, maxDelayMs: 250},
    })
    answerToolCalls(() => sse(['id: e1\ndata: \n\n'], 'close'))
    const resumes = answerResumes(mock, () => sse([], 'close'))
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    await call(7)

    await msUntil(() => resumes.length === 1)
    expect(await msUntil(() => resumes.length === 2)).toBe(100)
    expect(await msUntil(() => resumes.length === 3)).toBe(250)
    await msUntil(() => answerTo(7) !== undefined)
    expect(answerTo(7)).toMatchObject({error: {data: {code: 'outcome-unknown'}}})
    expect(resumes).toHaveLength(3)
    await transport.close()
  })

  it('without retry, even the first resume after a drop waits for the backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const mock = useMock()
    const {transport, call} = await driven({reconnect: {minDelayMs: 100, maxDelayMs: 1000}})
    answerToolCalls(() => sse(['id: e1\ndata: \n\n'], 'close'))
    const resumes = answerResumes(mock, () => sse([], 'open'))
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    await call(7)

    expect(await msUntil(() => resumes.length === 1)).toBeGreaterThanOrEqual(100)
    await transport.close()
  })
})

describe('network error mid-stream', () => {
  it('a drop after E_k resumes from E_k, the last stored cursor; each event delivered once', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const {client} = await connect({store})
    await until(() => mock.requests('GET').length === 1)
    mock.faults.cutNext({after: 3, how: 'error', on: 'POST'})
    const progress: number[] = []
    await client.callTool({name: 'slow', arguments: {steps: 5}}, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })

    const [, tool] = mock.session().streams
    const lastBeforeDrop = tool!.events[2]!.id
    const resumes = mock.log.filter((entry) => entry.lastEventId !== undefined)
    expect(resumes).toEqual([
      expect.objectContaining({method: 'GET', lastEventId: lastBeforeDrop, sessionId: 'session-1'}),
    ])
    const stored = store.writes.map((write) => JSON.stringify(write.value))
    expect(stored.some((value) => value.includes(`"lastEventId":"${lastBeforeDrop}"`))).toBe(true)
    expect(progress).toEqual([1, 2, 3, 4, 5])
    expect(mock.executions).toEqual({slow: 1})
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    await client.close()
  })
})
