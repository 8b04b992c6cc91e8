import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {getEventListeners} from 'node:events'
import {http, HttpResponse} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {ToolListChangedNotificationSchema} from '@modelcontextprotocol/sdk/types.js'
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type JsonRpcId,
  type ResumptionStore,
} from '../../src/index.ts'
import {connect, dieMidCall, eventsOf, interceptGets, network, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore, SlowApplyStore} from '../fixtures/recording-store.ts'
import {pendingTimers, realTurns, timersBesidesUndici} from '../fixtures/timing.ts'
import {answerToolCalls, encoder, eventStream, failure, frame, result, sse} from '../fixtures/wire.ts'

afterEach(() => {
  vi.useRealTimers()
})

/** `memory` with some of its calls replaced. */
function storeOver(memory: MemoryStore, replaced: Partial<ResumptionStore>): ResumptionStore {
  return {
    get: (key) => memory.get(key),
    set: (key, value, fence) => memory.set(key, value, fence),
    delete: (key, fence) => memory.delete(key, fence),
    list: (prefix) => memory.list(prefix),
    acquire: (name, ttlMs) => memory.acquire(name, ttlMs),
    ...replaced,
  }
}

describe('close()', () => {
  it('aborts every stream and backoff timer, leaves nothing running and sends no DELETE', async () => {
    const mock = useMock()
    const {transport} = await connect({reconnect: {minDelayMs: 60_000, maxDelayMs: 60_000}})
    await until(() => mock.session().streams.length === 1)
    const [standalone] = mock.session().streams
    // The tool's stream breaks with no event ID after the priming one is refused: make the GET fail so a
    // backoff timer is pending when close() comes.
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    network.use(http.get(url, () => HttpResponse.error()))
    mock.faults.disconnect({stream: standalone!.id, how: 'close'})
    // Every timer counts but undici's: the connection of the stream the server ended stays in its pool.
    await vi.waitFor(() => {
      expect(timersBesidesUndici()).toBe(1)
    })
    let closed = 0
    transport.onclose = () => closed++
    await transport.close()

    expect(timersBesidesUndici()).toBe(0)
    expect(closed).toBe(1)
    expect(mock.requests('DELETE')).toHaveLength(0)
    expect(transport.sessionId).toBe('session-1')
  })

  it('while a stream waits the retry its server asked leaves no timer of that wait behind, and the stream never reconnects', async () => {
    const mock = useMock()
    // One chunk, the end right after it: no gap, so no fake timer of sse()'s own, before it ends.
    const gets = interceptGets(mock, (_get, index) =>
      index === 0 ? sse(['retry: 60000\nid: g1\ndata: \n\n']) : undefined,
    )
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      const {transport} = await connect()
      await realTurns(() => pendingTimers(60_000) === 1)
      expect(pendingTimers(60_000)).toBe(1)
      await transport.close()
      expect(pendingTimers(60_000)).toBe(0)
      expect(gets).toHaveLength(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it('sends DELETE first with terminateOnClose', async () => {
    const mock = useMock()
    const {transport} = await connect({terminateOnClose: true})
    await transport.close()
    expect(mock.requests('DELETE')).toEqual([expect.objectContaining({sessionId: 'session-1', status: 200})])
    expect(transport.sessionId).toBeUndefined()
  })

  it('rejects a pending call at once with code aborted, and start() works again afterwards', async () => {
    const mock = useMock()
    const {client, transport} = await connect()
    const call = client.callTool({name: 'slow', arguments: {steps: 50, delayMs: 50}}).catch((error: unknown) => error)
    await until(() => mock.requests('POST', 'tools/call').length === 1)
    await transport.close()
    const error = await call
    expect(error).toBeInstanceOf(Error)

    await expect(transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})).rejects.toSatisfy((e) =>
      isTransportError(e, 'aborted'),
    )
    await client.connect(transport)
    // The session outlived the closed transport: the Client does not initialize again.
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    await client.close()
  })

  it('during start(), while the store is still leasing, gives the lease up: the next owner takes the session at once', async () => {
    const memory = new MemoryStore()
    let leased: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (leased = resolve))
    const slowLease = storeOver(memory, {
      acquire: async (name, ttlMs) => {
        await gate
        return memory.acquire(name, ttlMs)
      },
    })
    const first = new ResumableHTTPClientTransport(new URL(url), {store: slowLease, leaseTtlMs: 60_000})
    const starting = first.start().catch((error: unknown) => error)
    await first.close()
    leased()
    const outcome = await starting

    // With ownership 'wait', a lease still held would keep this start() waiting for its 60 s.
    const next = new ResumableHTTPClientTransport(new URL(url), {store: memory, ownership: 'wait', leaseTtlMs: 60_000})
    const started = await Promise.race([
      next.start().then(() => 'started'),
      new Promise((resolve) => setTimeout(resolve, 1_000, 'still waiting')),
    ])
    await next.close()
    expect(started).toBe('started')
    expect(isTransportError(outcome, 'aborted')).toBe(true)
  })

  it("during start(), while the store still reads a call's stream to resume, opens no stream: nothing fetched after close()", async () => {
    const mock = useMock()
    const memory = new MemoryStore()
    // A session with a call's stream to resume: a next start() opens it once the store is read.
    await dieMidCall(memory, 2)
    const getsBefore = mock.requests('GET').length
    let reading: () => void = () => undefined
    const read = new Promise<void>((resolve) => (reading = resolve))
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slowStreams = storeOver(memory, {
      get: async (key) => {
        if (key.includes('#stream:')) {
          reading()
          await gate
        }
        return memory.get(key)
      },
    })
    const reconnect = {minDelayMs: 1, maxDelayMs: 5}
    const transport = new ResumableHTTPClientTransport(new URL(url), {store: slowStreams, reconnect})
    const starting = transport.start().catch((error: unknown) => error)
    await read
    await transport.close()
    release()
    const outcome = await starting
    // Time for a stream opened anyway to reach the server.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(mock.requests('GET').slice(getsBefore)).toEqual([])
    expect(isTransportError(outcome, 'aborted')).toBe(true)
  })

  it('refuses a second start()', async () => {
    useMock()
    const {transport, client} = await connect()
    await expect(transport.start()).rejects.toThrow(/already started/)
    await client.close()
  })
})

describe('terminateSession()', () => {
  it.each([200, 204, 400, 404, 405, 410])(
    'DELETE answered %i clears the session and its stored cursors, and resolves',
    async (status) => {
      const mock = useMock({retryMs: 1})
      const store = new RecordingStore()
      const {transport, client} = await connect({store})
      await client.callTool({name: 'echo'})
      const deletes: (string | null)[] = []
      network.use(
        http.delete(url, ({request}) => {
          deletes.push(request.headers.get('mcp-session-id'))
          return new HttpResponse(null, {status})
        }),
      )
      await transport.terminateSession()
      expect(transport.sessionId).toBeUndefined()
      expect(store.keys.size).toBe(0)
      expect(deletes).toEqual(['session-1'])
      expect(mock.requests('GET').length).toBeGreaterThan(0)
      await client.close()
    },
  )

  it.each([
    ['503', () => new HttpResponse('busy', {status: 503}), 'http', 'DELETE failed with HTTP 503: "busy"', 503],
    ['500', () => new HttpResponse(null, {status: 500}), 'http', 'DELETE failed with HTTP 500', 500],
    [
      'no answer (a network failure)',
      () => HttpResponse.error(),
      'network',
      'DELETE http://mcp.test/mcp failed: fetch failed',
      undefined,
    ],
  ] as const)(
    'DELETE answered %s still forgets the session and its records, then rejects saying the server may keep it; the next connect initializes',
    async (_answer, answer, code, message, status) => {
      const mock = useMock()
      const store = new RecordingStore()
      const {transport, client, events} = await connect({store})
      network.use(http.delete(url, answer))
      const error = await failure(transport.terminateSession())
      expect(error).toMatchObject({
        code,
        message: `${message}; the session was forgotten here all the same, and the server may keep it until it expires it`,
      })
      expect(transport.sessionId).toBeUndefined()
      expect(store.keys.size).toBe(0)
      expect(error).toMatchObject({status})
      expect(eventsOf(events, 'session-terminated')).toEqual([
        {type: 'session-terminated', sessionId: 'session-1', status},
      ])
      await client.close()
      await client.connect(transport)
      expect(transport.sessionId).toBe('session-2')
      expect(mock.requests('POST', 'initialize')).toHaveLength(2)
      await client.close()
    },
  )
})

describe('what a call writes to the store', () => {
  it('a call answered on its own stream writes no cursor: the answer leaves nothing to resume', async () => {
    useMock()
    const store = new RecordingStore()
    const {client} = await connect({store})
    const from = store.writes.length
    expect((await client.callTool({name: 'echo'})).content).toEqual([{type: 'text', text: 'echo: {}'}])
    // Longer than a cursor with nothing to deliver (the priming event) waits before it is written.
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(
      store.writes.slice(from).filter((write) => write.op === 'set' && write.key.includes('#stream:request:')),
    ).toEqual([])
    await client.close()
  })

  it('a call whose stream brings progress before its answer stores its cursor before the progress is delivered', async () => {
    useMock()
    const store = new RecordingStore()
    const {client} = await connect({store})
    // The server sends each event once the one before was delivered: no progress reaches the transport with the answer.
    let send: (text: string) => void = () => {}
    let later: string[] = []
    answerToolCalls((id, progressToken) => {
      const progress = (n: number): object => ({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: {progressToken, progress: n},
      })
      later = [frame('e2', progress(2)), frame('e3', result(id))]
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => void (send = (text) => controller.enqueue(encoder.encode(text))),
      })
      send(frame('e1', progress(1)))
      return new Response(body, {headers: eventStream})
    })
    const stored: boolean[] = []
    await client.callTool({name: 'echo'}, undefined, {
      onprogress: () => {
        stored.push(store.writes.some((write) => write.op === 'set' && write.key.includes('#stream:request:')))
        send(later.shift()!)
      },
    })
    expect(stored).toEqual([true, true])
    await client.close()
  })

  it('a call answered on another stream while its own waits to be resumed is not resumed, and its cursor goes', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    let push: ((text: string) => void) | undefined
    const resumedFrom: string[] = []
    interceptGets(mock, (get) => {
      if (get.lastEventId !== undefined) resumedFrom.push(get.lastEventId)
      if (get.lastEventId === 'p1')
        return sse(
          [
            frame('p2', {
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: {progressToken: calls[0]!.progressToken, progress: 2},
            }),
          ],
          'open',
        )
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => void (push = (text) => controller.enqueue(new TextEncoder().encode(text))),
      })
      return new Response(body, {headers: {'content-type': 'text/event-stream'}})
    })
    const {client, events} = await connect({store, reconnect: {minDelayMs: 200, maxDelayMs: 400}})
    await until(() => push !== undefined)
    const calls = answerToolCalls((_id, progressToken) =>
      sse(
        [frame('p1', {jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken, progress: 1}})],
        'error',
      ),
    )
    const call = client.callTool({name: 'echo'}, undefined, {onprogress: () => {}})
    await until(() => eventsOf(events, 'reconnect-failed').some((event) => event.stream === 'request'))
    // The server answers the call on the standalone stream while the call's own stream waits out its backoff.
    push!(frame('g1', result(calls[0]!.id)))
    expect((await call).content).toEqual([{type: 'text', text: 'ok'}])
    const from = store.writes.length
    await until(() => eventsOf(events, 'stream-closed').some((event) => event.stream === 'request'), 2000)
    expect(
      store.writes.slice(from).filter((write) => write.op === 'set' && write.key.includes('#stream:request:')),
    ).toEqual([])
    expect(resumedFrom).toEqual([])
    expect(await store.list('mcp-resumable-http:http://mcp.test/mcp#stream:request:')).toEqual([])
    await client.close()
  })

  it("a call answered just before close() leaves no cursor behind: a next process never resumes an answered call's stream", async () => {
    useMock()
    const store = new MemoryStore()
    const {client} = await connect({store})
    await client.callTool({name: 'slow', arguments: {steps: 2}}, undefined, {onprogress: () => {}})
    await client.close()
    expect(await store.list('mcp-resumable-http:http://mcp.test/mcp#stream:request:')).toEqual([])
  })
})

describe('cancellation', () => {
  it('a cancelled call POSTs notifications/cancelled (never a GET) and forgets its stream', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const {client} = await connect({store})
    const controller = new AbortController()
    const call = client
      .callTool({name: 'slow', arguments: {steps: 20, delayMs: 20}}, undefined, {signal: controller.signal})
      .catch((error: unknown) => error)
    await until(() => mock.requests('POST', 'tools/call').length === 1)
    await until(() => store.writes.some((write) => write.key.endsWith('#stream:request:1')))
    controller.abort('user')
    await call
    await until(() => mock.requests('POST', 'notifications/cancelled').length === 1)
    await until(
      () => store.writes.at(-1)?.op === 'delete' && store.writes.at(-1)?.key.endsWith('#stream:request:1') === true,
    )
    expect(await store.cursor('request:1')).toBeUndefined()
    expect(mock.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toHaveLength(0)
    await client.close()
  })

  it('a dropped connection is never turned into a cancel', async () => {
    const mock = useMock()
    const {client} = await connect()
    mock.faults.cutNext({after: 1, how: 'error', on: 'POST'})
    await client.callTool({name: 'slow', arguments: {steps: 2}})
    expect(mock.requests('POST', 'notifications/cancelled')).toHaveLength(0)
    expect(mock.executions).toEqual({slow: 1})
    await client.close()
  })
})

describe('durability', () => {
  /** A standalone stream of `frames`, sent in five network chunks (a batch is cut only between chunks). */
  function standaloneInChunks(frames: string[]): void {
    const size = frames.length / 5
    const chunks = Array.from({length: 5}, (_, n) => frames.slice(n * size, n * size + size).join(''))
    network.use(http.get(url, () => sse(chunks, 'open')))
  }

  it('the cursor of a notification is in the store before the notification reaches onmessage, once per batch', async () => {
    // Writes take effect only when they resolve: what onmessage sees stored was awaited, not only started.
    const store = new SlowApplyStore(5)
    useMock()
    standaloneInChunks(
      Array.from({length: 50}, (_, n) =>
        frame(`e${n + 1}`, {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: n + 1}}),
      ),
    )
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, sessionId: 'kept'})
    const checks: boolean[] = []
    transport.onmessage = (message) => {
      const n = (message as unknown as {params: {data: number}}).params.data
      checks.push(Number(store.appliedCursor('standalone')?.slice(1)) >= n)
    }
    await transport.start()
    await until(() => checks.length === 50)
    expect(checks.every(Boolean)).toBe(true)
    const cursorWrites = store.writes.filter((write) => write.op === 'set' && write.key.endsWith('#stream:standalone'))
    expect(cursorWrites.length).toBeLessThanOrEqual(5)
    await transport.close()
    // Closing keeps the cursor for the next process.
    expect(await store.cursor('standalone')).toBe('e50')
  })

  it('relaxed: an event reaches onmessage before its cursor is in the store, and close() waits for the writes', async () => {
    const store = new SlowApplyStore(50)
    const notification = (n: number): object => ({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: {level: 'info', data: n},
    })
    useMock()
    network.use(http.get(url, () => sse([frame('e1', notification(1)), frame('e2', notification(2))], 'open')))
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, sessionId: 'kept', durability: 'relaxed'})
    const applied: (string | undefined)[] = []
    transport.onmessage = () => applied.push(store.appliedCursor('standalone'))
    await transport.start()
    await until(() => applied.length === 2)
    expect(applied).toEqual([undefined, undefined])
    await transport.close()
    expect(await store.cursor('standalone')).toBe('e2')
  })
})

describe('reading a stream', () => {
  const progress = (token: unknown, n: number): object => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: {progressToken: token, progress: n},
  })
  const streamWrites = (store: RecordingStore, from: number) =>
    store.writes.slice(from).filter((write) => write.key.includes('#stream:request:'))

  it("a call's stream the server leaves open after the answer is done with at once: closed as completed, its body cancelled", async () => {
    useMock()
    let cancelled = false
    // The app's fetch hands the transport the response as the server made it (msw would stand between).
    const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const call = typeof init?.body === 'string' ? (JSON.parse(init.body) as {method?: string; id?: JsonRpcId}) : {}
      if (call.method !== 'tools/call') return globalThis.fetch(input, init)
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode(frame('e1', result(call.id!)))),
        cancel: () => void (cancelled = true),
      })
      return new Response(body, {headers: {'content-type': 'text/event-stream'}})
    }
    const {client, events} = await connect({fetch})
    expect((await client.callTool({name: 'echo'})).content).toEqual([{type: 'text', text: 'ok'}])
    await until(() => eventsOf(events, 'stream-closed').some((event) => event.stream === 'request'))
    expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'request')).toMatchObject([
      {reason: 'completed'},
    ])
    await until(() => cancelled)
    await client.close()
  })

  it.each([
    [
      'without event IDs, progress before the answer',
      (id: JsonRpcId, token: unknown) => [frame(undefined, progress(token, 1)), frame(undefined, result(id))],
    ],
    [
      'with event IDs, progress and the answer in one chunk',
      (id: JsonRpcId, token: unknown) => [frame('e1', progress(token, 1)) + frame('e2', result(id))],
    ],
  ] as const)(
    'a call whose stream brings %s writes nothing to the store: there is nothing left to resume',
    async (_what, chunks) => {
      useMock()
      const store = new RecordingStore()
      const {client} = await connect({store})
      const from = store.writes.length
      answerToolCalls((id, token) => sse(chunks(id, token)))
      const seen: number[] = []
      await client.callTool({name: 'echo'}, undefined, {onprogress: ({progress: n}) => seen.push(n)})
      expect(seen).toEqual([1])
      await client.close()
      expect(streamWrites(store, from)).toEqual([])
    },
  )

  it('events without an ID after one with an ID store the cursor once: it did not move', async () => {
    useMock()
    const store = new RecordingStore()
    const {client} = await connect({store})
    const from = store.writes.length
    answerToolCalls((id, token) =>
      sse([
        frame('e1', progress(token, 1)),
        frame(undefined, progress(token, 2)),
        frame(undefined, progress(token, 3)),
        frame(undefined, result(id)),
      ]),
    )
    const seen: number[] = []
    await client.callTool({name: 'echo'}, undefined, {onprogress: ({progress: n}) => seen.push(n)})
    expect(seen).toEqual([1, 2, 3])
    expect(streamWrites(store, from).filter((write) => write.op === 'set')).toHaveLength(1)
    await client.close()
  })

  it('a retry alone moves what is stored of the stream: a next process waits it', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    let second: (() => void) | undefined
    interceptGets(mock, (_get, index) => {
      if (index > 0) return undefined
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(
            new TextEncoder().encode(frame('g1', {jsonrpc: '2.0', method: 'notifications/tools/list_changed'})),
          )
          second = () => controller.enqueue(new TextEncoder().encode('retry: 3000\n\n'))
        },
      })
      return new Response(body, {headers: {'content-type': 'text/event-stream'}})
    })
    const {client, transport} = await connect({store})
    const listChanged = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    )
    await listChanged
    await until(() => second !== undefined)
    second!()
    await new Promise((resolve) => setTimeout(resolve, 20))
    await transport.close()
    expect(await store.get('mcp-resumable-http:http://mcp.test/mcp#stream:standalone')).toMatchObject({
      lastEventId: 'g1',
      retryMs: 3000,
    })
  })

  it('events of another type than message are not for the Client: neither delivered nor parsed', async () => {
    useMock()
    const {client, errors} = await connect()
    answerToolCalls((id) => sse([`event: keepalive\ndata: not JSON\n\n`, frame('e1', result(id))]))
    expect((await client.callTool({name: 'echo'})).content).toEqual([{type: 'text', text: 'ok'}])
    expect(errors).toEqual([])
    await client.close()
  })
})

describe('callbacks across close() and connect()', () => {
  it("keeps the app's own callbacks across close() and connect(), as the SDK transport does", async () => {
    const mock = useMock()
    const transport = new ResumableHTTPClientTransport(new URL(url))
    const seen: string[] = []
    const errors: Error[] = []
    transport.onmessage = (message) => seen.push('method' in message ? message.method : 'response')
    transport.onerror = (error) => errors.push(error)
    const client = new Client({name: 'test', version: '1.0.0'}, {capabilities: {sampling: {}}})
    await client.connect(transport)
    await client.close()
    seen.length = 0
    await client.connect(transport)
    await client.listTools()

    // Connected again, the Client initializes and is answered from the store: no second initialize is sent.
    expect(seen).toEqual(['response', 'response'])
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    expect(errors).toEqual([])
    await client.close()
  })
})

describe('what the transport says when it is used out of turn or ends a session', () => {
  it('send() before start() rejects with aborted, naming start(); close() before start() does nothing', async () => {
    const transport = new ResumableHTTPClientTransport(new URL(url))
    let closed = 0
    transport.onclose = () => closed++
    await expect(transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})).rejects.toSatisfy(
      (error) =>
        isTransportError(error, 'aborted') &&
        error.message === 'The transport is not started: call start() (Client.connect does) first',
    )
    await expect(transport.close()).resolves.toBeUndefined()
    expect(closed).toBe(0)
  })

  it('finishAuth() without any authProvider is a TypeError naming options.authProvider', async () => {
    await expect(new ResumableHTTPClientTransport(new URL(url)).finishAuth('code')).rejects.toThrow(
      new TypeError('finishAuth needs options.authProvider'),
    )
  })

  it('terminateSession() before a session exists sends no DELETE', async () => {
    const mock = useMock()
    const transport = new ResumableHTTPClientTransport(new URL(url))
    await transport.start()
    await transport.terminateSession()
    expect(mock.requests('DELETE')).toHaveLength(0)
    await transport.close()
  })

  it.each([
    [
      'terminateSession()',
      'Session session-1 was terminated',
      [{type: 'session-terminated', sessionId: 'session-1', status: 200}],
      (transport: ResumableHTTPClientTransport) => transport.terminateSession(),
    ],
    ['close()', 'The transport was closed', [], (transport: ResumableHTTPClientTransport) => transport.close()],
    [
      'setProtocolVersion() of an era without sessions',
      'Protocol 2026-07-28 has no sessions',
      [],
      (transport: ResumableHTTPClientTransport) => transport.setProtocolVersion('2026-07-28'),
    ],
  ])(
    '%s rejects a call in flight with the message %j, settles it as aborted, and emits %j',
    async (_how, message, terminated, end) => {
      useMock()
      const {transport, client, events} = await connect()
      const call = client.callTool({name: 'slow', arguments: {steps: 50, delayMs: 50}}).catch((error: unknown) => error)
      await until(() => transport.pendingRequests === 1)
      await end(transport)
      expect(await call).toMatchObject({message: expect.stringContaining(message) as unknown})
      expect(eventsOf(events, 'session-terminated')).toEqual(terminated)
      // The Client's ID of the call: initialize was 0.
      expect(eventsOf(events, 'request-settled')).toEqual([{type: 'request-settled', requestId: 1, code: 'aborted'}])
      await client.close()
    },
  )

  it('close() with terminateOnClose reports a refused DELETE once through onerror, and still closes', async () => {
    useMock()
    const {transport, client, errors} = await connect({terminateOnClose: true})
    network.use(http.delete(url, () => new HttpResponse('busy', {status: 403})))
    let closed = 0
    transport.onclose = () => closed++
    await transport.close()
    expect(errors.map((error) => [isTransportError(error, 'http'), error.message])).toEqual([
      [true, expect.stringContaining('DELETE failed with HTTP 403')],
    ])
    expect(closed).toBe(1)
    await client.close()
  })
})

describe('a stream that waited the retry its server asked', () => {
  it('leaves no listener of that wait on its signal once it reconnected', async () => {
    const mock = useMock()
    interceptGets(mock, (_get, index) => (index === 0 ? sse(['retry: 20\nid: g1\ndata: \n\n']) : sse([], 'open')))
    // The listeners on the standalone stream's signal as each of its GETs goes out. That signal is kept from fetch,
    // whose own listeners would count too: each body is cancelled on abort all the same.
    const listeners: number[] = []
    const {client} = await connect({
      fetch: (input, init) => {
        if (init?.method === 'GET' && init.signal) listeners.push(getEventListeners(init.signal, 'abort').length)
        return fetch(input, {...init, signal: null})
      },
    })
    await until(() => listeners.length === 2)
    expect(listeners[1]).toBe(listeners[0])
    await client.close()
  })
})

describe('a call resumed again and again', () => {
  it("leaves no listener of each resumed connection's deadline on its stream's signal", async () => {
    const mock = useMock()
    const progress = (token: unknown, n: number): object => ({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: {progressToken: token, progress: n},
    })
    const calls = answerToolCalls((_id, progressToken) => sse([frame('c1', progress(progressToken, 1))], 'error'))
    interceptGets(mock, (get) => {
      if (get.lastEventId === 'c1') return sse([frame('c2', progress(calls[0]!.progressToken, 2))], 'error')
      if (get.lastEventId === 'c2') return sse([frame('c3', progress(calls[0]!.progressToken, 3))], 'error')
      if (get.lastEventId === 'c3') return sse([frame('c4', result(calls[0]!.id))])
      return undefined
    })
    // The listeners on the call's stream signal as each resume GET goes out (the signal kept from fetch, whose own
    // listeners would count too).
    const listeners: number[] = []
    const {client} = await connect({
      fetch: (input, init) => {
        if (
          init?.method === 'GET' &&
          init.signal &&
          init.headers !== undefined &&
          new Headers(init.headers).has('last-event-id')
        ) {
          listeners.push(getEventListeners(init.signal, 'abort').length)
        }
        return fetch(input, {...init, signal: null})
      },
    })
    await client.callTool({name: 'echo'}, undefined, {onprogress: () => {}})
    expect(listeners).toHaveLength(3)
    expect(new Set(listeners).size).toBe(1)
    await client.close()
  })
})
