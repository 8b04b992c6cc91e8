/**
 * Test plan A (session establishment and headers), plus attaching to a session the app kept itself.
 */
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {CreateMessageRequestSchema, McpError} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type FetchLike,
  type ResumptionStore,
  type TransportEvent,
} from '../../src/index.ts'
import {
  connect,
  eventsOf,
  interceptGets,
  network,
  storedSession,
  until,
  untilGetsServed,
  url,
  useMock,
} from '../fixtures/harness.ts'
import type {ReferenceServer} from '../../src/testing/index.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {failure} from '../fixtures/wire.ts'

const initialize: JSONRPCMessage = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}},
}

/** A transport driven by hand (no Client), started, with what it delivers and reports. */
async function started(options: {sessionId?: string} = {}) {
  const events: TransportEvent[] = []
  const messages: JSONRPCMessage[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {...options, onEvent: (event) => events.push(event)})
  transport.onmessage = (message) => messages.push(message)
  await transport.start()
  return {transport, events, messages}
}

/** Every request's session header, as it went over the wire, answered by `reply`. */
function sessionHeaders(reply: (body: {method?: string}) => Response): (string | null)[] {
  const seen: (string | null)[] = []
  network.use(
    http.post(url, async ({request}) => {
      seen.push(request.headers.get('mcp-session-id'))
      return reply((await request.json()) as {method?: string})
    }),
  )
  return seen
}

/** A fetch that hands over every answer carrying a session ID with `sessionId` instead. */
function withSessionId(sessionId: string): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init)
    if (!response.headers.has('mcp-session-id')) return response
    const headers = new Headers(response.headers)
    headers.set('mcp-session-id', sessionId)
    return new Response(response.body, {status: response.status, headers})
  }
}

describe('the session comes from the initialize response', () => {
  it('takes a visible-ASCII session ID from initialize, reports and stores it', async () => {
    const sessionId = '!S-1.a~Z'
    const mock = useMock({sessionIds: [sessionId]})
    const store = new RecordingStore()
    const {transport, client, events} = await connect({store})
    expect(transport.sessionId).toBe(sessionId)
    expect(transport.metrics.newSessions).toBe(1)
    expect(eventsOf(events, 'session-started')).toEqual([{type: 'session-started', sessionId}])
    expect(store.writes).toContainEqual({
      op: 'set',
      key: expect.stringMatching(/#session$/),
      value: expect.objectContaining({sessionId}),
    })
    await client.listTools()
    expect(mock.requests('POST', 'tools/list')[0]!.sessionId).toBe(sessionId)
    await client.close()
  })

  // undici refuses a control character in a header it reads (HPE_INVALID_HEADER_TOKEN), so msw 3, which answers
  // through it, cannot send one: a fetch of the app's own may hand one over (the Fetch standard's Headers take it).
  it.each([
    ['a space', 'bad id', 'the wire'],
    ['a control character', 'bad\x01id', 'a fetch'],
    ['DEL (0x7F)', 'bad\x7Fid', 'a fetch'],
    ['a non-ASCII character', 'caf\xE9', 'the wire'],
  ] as const)(
    'a session ID with %s fails connect with protocol, and nothing more is sent',
    async (_what, sessionId, from) => {
      const mock = useMock(from === 'the wire' ? {sessionIds: [sessionId]} : {})
      const error = await failure(connect(from === 'the wire' ? {} : {fetch: withSessionId(sessionId)}))
      expect(isTransportError(error, 'protocol')).toBe(true)
      expect(mock.log.map((entry) => entry.rpcMethod ?? entry.method)).toEqual(['initialize'])
    },
  )
})

describe('the answer that starts the session', () => {
  it('is the answer to initialize itself: another response the stream brings first neither starts the session nor stands for its result', async () => {
    const serverInfo = {name: 'srv', version: '1'}
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.json()) as {id?: number; method?: string}
        if (body.method !== 'initialize') return new HttpResponse(null, {status: 202})
        const stray = {jsonrpc: '2.0', id: 99, result: {stray: true}}
        const answer = {
          jsonrpc: '2.0',
          id: body.id,
          result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo},
        }
        const text = `data: ${JSON.stringify(stray)}\n\ndata: ${JSON.stringify(answer)}\n\n`
        return new HttpResponse(text, {headers: {'content-type': 'text/event-stream', 'mcp-session-id': 'session-9'}})
      }),
      http.get(url, () => new HttpResponse(null, {status: 405})),
    )
    const {transport, events, messages} = await started()
    await transport.send(initialize)
    await until(() => messages.some((message) => 'id' in message && message.id === 0))

    expect(transport.sessionId).toBe('session-9')
    expect(transport.initializeResult).toMatchObject({serverInfo})
    expect(eventsOf(events, 'session-started')).toEqual([{type: 'session-started', sessionId: 'session-9'}])
    await transport.close()
  })
})

describe('a stored session that expires before the Client asked for its initialize answer', () => {
  it('answers the next initialize from the server, not from the store', async () => {
    const mock = useMock()
    const store = await storedSession()
    interceptGets(mock, () => new HttpResponse(null, {status: 404}))

    const events: TransportEvent[] = []
    const messages: JSONRPCMessage[] = []
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, onEvent: (event) => events.push(event)})
    transport.onmessage = (message) => messages.push(message)
    transport.onerror = () => {}
    await transport.start()
    await until(() => eventsOf(events, 'session-expired').length === 1)
    await transport.send(initialize)
    await until(() => messages.some((message) => 'id' in message && message.id === 0))

    expect(mock.requests('POST', 'initialize')).toHaveLength(2)
    expect(transport.sessionId).toBe('session-2')
    await transport.close()
  })
})

describe('no session ID means stateless', () => {
  it('never sends Mcp-Session-Id, and a broken stream is not resumed: no cursor without a session', async () => {
    const mock = useMock({sessions: false})
    const {client, transport} = await connect()
    expect(transport.sessionId).toBeUndefined()
    await until(() => mock.requests('GET').length === 1)
    await client.listTools()
    // The priming event and the first progress carry IDs, then the connection drops.
    mock.faults.cutNext({after: 2, how: 'error', on: 'POST'})
    const error = await failure(
      client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, {onprogress: () => {}, timeout: 3000}),
    )
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).data).toMatchObject({code: 'outcome-unknown'})
    await client.listTools()

    expect(mock.log.filter((entry) => entry.sessionId !== undefined)).toEqual([])
    expect(mock.log.filter((entry) => entry.lastEventId !== undefined)).toEqual([])
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    expect(transport.metrics.streamResumptions).toBe(0)
    await client.close()
  })
})

describe('protocol headers on every later request', () => {
  it('POST, GET and DELETE after initialize carry Mcp-Session-Id and the negotiated version; initialize carries neither', async () => {
    const mock = useMock({protocolVersion: '2025-06-18'})
    const {client, transport} = await connect()
    await client.callTool({name: 'echo'})
    await client.listTools()
    await until(() => mock.requests('GET').length === 1)
    await transport.terminateSession()

    const [first, ...later] = mock.log
    expect(first).toMatchObject({rpcMethod: 'initialize', sessionId: undefined, protocolVersion: undefined})
    expect(new Set(later.map((entry) => entry.method))).toEqual(new Set(['POST', 'GET', 'DELETE']))
    for (const entry of later) expect(entry).toMatchObject({sessionId: 'session-1', protocolVersion: '2025-06-18'})
    await client.close()
  })
})

describe('notifications and responses', () => {
  it('notifications/initialized and the answer to a server request are accepted with 202', async () => {
    const mock = useMock()
    const {client, errors} = await connect()
    const result = await client.callTool({name: 'ask'})
    expect(result.content).toEqual([{type: 'text', text: 'answer 1'}])
    const accepted = mock.log.filter(
      (entry) => entry.method === 'POST' && entry.rpcMethod !== 'initialize' && entry.rpcMethod !== 'tools/call',
    )
    expect(accepted).toEqual([
      expect.objectContaining({rpcMethod: 'notifications/initialized', status: 202}),
      expect.objectContaining({rpcMethod: undefined, status: 202}),
    ])
    expect(mock.answers.get('srv-1')).toHaveLength(1)
    expect(errors).toEqual([])
    await client.close()
  })

  // A 400 may be the session's: the session's GET, which carries nothing else, is asked, and the mock answers it with a
  // stream (the session lives).
  it.each<[string, number, JSONRPCMessage, number[]]>([
    ['a notification', 403, {jsonrpc: '2.0', method: 'notifications/roots/list_changed'}, []],
    ['an answer to a server request', 400, {jsonrpc: '2.0', id: 'srv-9', result: {}}, [200]],
  ])(
    'a 4xx to %s rejects send with http and its status, and it is not sent again',
    async (_what, status, message, asked) => {
      const mock = useMock()
      const {client, transport} = await connect()
      // The standalone GET is served first, so that the log after the mark holds the POSTs alone.
      await untilGetsServed()
      const before = mock.log.length
      mock.faults.failNext({method: 'POST', status})
      const error = await failure(transport.send(message))
      expect(isTransportError(error, 'http') && error.status === status).toBe(true)
      // The first GET after it (the standalone stream then re-attaches: a server may have put
      // something on that stream).
      const gets = mock.log.slice(before).filter((entry) => entry.method === 'GET')
      expect(gets.slice(0, 1).map((entry) => [entry.lastEventId, entry.status])).toEqual(
        asked.map((answer) => [undefined, answer]),
      )
      await client.listTools()
      expect(
        mock.log
          .slice(before)
          .filter((entry) => entry.method === 'POST')
          .map((entry) => [entry.rpcMethod, entry.status]),
      ).toEqual([
        ['method' in message ? message.method : undefined, status],
        ['tools/list', 200],
      ])
      expect(transport.sessionId).toBe('session-1')
      await client.close()
    },
  )

  it('a 2xx with a body to a notification is ignored: nothing from it is delivered', async () => {
    const {transport, messages} = await started()
    const reply = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'stray'}}
    sessionHeaders(() => HttpResponse.json(reply))
    await transport.send({jsonrpc: '2.0', method: 'notifications/roots/list_changed'})
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(messages).toEqual([])
    await transport.close()
  })
})

describe('a server that offers no GET stream', () => {
  it('is asked again in the next session: a 405 in one session does not keep the standalone stream closed in the next', async () => {
    const mock = useMock()
    const gets = interceptGets(mock, (get) =>
      get.sessionId === 'session-1' ? new Response(null, {status: 405}) : undefined,
    )
    const {client, transport} = await connect()
    await until(() => gets.length === 1)
    mock.faults.expireSession(transport.sessionId)
    expect(isTransportError(await failure(client.callTool({name: 'echo'})), 'session-expired')).toBe(true)
    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    await until(() => gets.length === 2)
    expect(gets.map((get) => get.sessionId)).toEqual(['session-1', 'session-2'])
    await client.close()
  })
})

describe('session IDs anywhere else are ignored', () => {
  it('ignores a session ID on every non-initialize response, POST and GET alike', async () => {
    const mock = useMock()
    network.use(
      http.all(url, async ({request}) => {
        const body = request.method === 'POST' ? ((await request.clone().json()) as {method?: string}) : undefined
        if (body?.method === 'initialize') return undefined
        const answer = await mock.handle(request)
        const headers = new Headers(answer.headers)
        headers.set('mcp-session-id', 'intruder')
        return new Response(answer.body, {status: answer.status, headers})
      }),
    )
    const {client, transport, events} = await connect()
    await client.callTool({name: 'slow', arguments: {steps: 2}})
    await client.listTools()
    await until(() => mock.requests('GET').length === 1)
    await client.callTool({name: 'echo'})

    expect(transport.sessionId).toBe('session-1')
    expect(eventsOf(events, 'session-started')).toHaveLength(1)
    expect(mock.log.slice(1).map((entry) => entry.sessionId)).toEqual(mock.log.slice(1).map(() => 'session-1'))
    await client.close()
  })

  it.each([
    [
      'an HTTP error',
      () => HttpResponse.json({error: 'overloaded'}, {status: 503, headers: {'mcp-session-id': 'S-err'}}),
    ],
    [
      'a JSON-RPC error',
      () =>
        HttpResponse.json(
          {jsonrpc: '2.0', id: 0, error: {code: -32602, message: 'Unsupported'}},
          {headers: {'mcp-session-id': 'S-err'}},
        ),
    ],
  ])('ignores a session ID on %s answering initialize', async (_what, answer) => {
    const sent = sessionHeaders((body) =>
      body.method === 'initialize' ? answer() : new HttpResponse(null, {status: 202}),
    )
    const {transport, events} = await started()
    await transport.send(initialize).catch(() => undefined)
    expect(transport.sessionId).toBeUndefined()
    expect(transport.metrics.newSessions).toBe(0)
    expect(eventsOf(events, 'session-started')).toEqual([])
    await transport.send({jsonrpc: '2.0', method: 'notifications/roots/list_changed'})
    expect(sent).toEqual([null, null])
    await transport.close()
  })
})

/**
 * Calls `ask`; once `asked`, the session expires (a call sees it), then `release()` lets the answer go on: no answer
 * may reach the server after that.
 */
async function expectNoAnswerAfterExpiry(
  mock: ReferenceServer,
  client: Client,
  asked: Promise<void>,
  release: () => void,
): Promise<void> {
  void client.callTool({name: 'ask'}).catch(() => undefined)
  await asked
  mock.faults.expireSession()
  await expect(client.listTools()).rejects.toThrow()
  release()
  await new Promise((resolve) => setTimeout(resolve, 100))
  expect(mock.requests('POST').filter((entry) => entry.rpcMethod === undefined)).toEqual([])
  await client.close()
}

describe('an answer to a server request of a session that expired while the answer was being stored', () => {
  it('is not POSTed: neither without a session nor into the next one', async () => {
    const mock = useMock()
    const memory = new MemoryStore()
    let storing: () => void = () => undefined
    const asked = new Promise<void>((resolve) => (storing = resolve))
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const store: ResumptionStore = {
      get: (key) => memory.get(key),
      list: (prefix) => memory.list(prefix),
      delete: (key, fence) => memory.delete(key, fence),
      acquire: (name, ttlMs) => memory.acquire(name, ttlMs),
      // The Client's answer is stored before it is sent: that write waits here.
      set: async (key, value, fence) => {
        if (key.includes('#request:') && JSON.stringify(value).includes('"result"')) {
          storing()
          await gate
        }
        return memory.set(key, value, fence)
      },
    }
    const {client} = await connect({store})
    await expectNoAnswerAfterExpiry(mock, client, asked, release)
  })

  it('waiting its turn behind another answer while the session expired, is not POSTed without a session', async () => {
    const mock = useMock()
    let holding: () => void = () => undefined
    const held = new Promise<void>((resolve) => (holding = resolve))
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    // The first answer's POST is slow: the second one waits its turn (one answer at a time).
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {method?: string; id?: unknown}
        if (body.method === undefined && body.id === 'srv-1') {
          holding()
          await gate
        }
        return undefined
      }),
    )
    const {client} = await connect({limits: {maxConcurrentAnswers: 1}})
    void client.callTool({name: 'ask', arguments: {count: 2}}).catch(() => undefined)
    await held
    mock.faults.expireSession()
    await expect(client.listTools()).rejects.toThrow()
    release()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(
      mock.requests('POST').filter((entry) => entry.rpcMethod === undefined && entry.sessionId === undefined),
    ).toEqual([])
    await client.close()
  })
})

describe('an answer the Client gives once the session of its request expired', () => {
  it('is not POSTed without a session: the request died with its session', async () => {
    const mock = useMock()
    let asked: () => void = () => undefined
    const handled = new Promise<void>((resolve) => (asked = resolve))
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const {client} = await connect()
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked()
      await gate
      return {model: 'm', role: 'assistant', content: {type: 'text', text: 'late'}}
    })
    await expectNoAnswerAfterExpiry(mock, client, handled, release)
  })
})

describe('a 400 to a request', () => {
  it('a 400 (unsupported MCP-Protocol-Version) rejects the call with http 400 and it is not retried', async () => {
    const mock = useMock()
    const {client, transport} = await connect()
    const refusal = {
      jsonrpc: '2.0',
      id: null,
      error: {code: -32000, message: 'Bad Request: Unsupported protocol version'},
    }
    let calls = 0
    network.use(
      http.post(url, async ({request}) => {
        if (((await request.clone().json()) as {method?: string}).method !== 'tools/call') return undefined
        calls++
        return HttpResponse.json(refusal, {status: 400})
      }),
    )
    const error = await failure(client.callTool({name: 'echo'}))
    expect(isTransportError(error, 'http') && error.status === 400).toBe(true)
    expect((error as Error).message).toContain('Unsupported protocol version')
    await client.listTools()
    expect(calls).toBe(1)
    expect(mock.executions).toEqual({})
    expect(transport.sessionId).toBe('session-1')
    await client.close()
  })
})

describe('the sessionId option', () => {
  it('attaches to the session: no initialize, a GET without Last-Event-ID, one session resumption', async () => {
    const mock = useMock()
    await storedSession()
    const {client, transport, events} = await connect({sessionId: 'session-1'})
    await until(() => mock.requests('GET').length >= 2)
    await client.callTool({name: 'echo'})

    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    expect(mock.requests('GET')[1]).toMatchObject({sessionId: 'session-1', lastEventId: undefined, status: 200})
    expect(mock.requests('POST', 'tools/call')[0]!.sessionId).toBe('session-1')
    expect(transport.metrics).toMatchObject({sessionResumptions: 1, streamResumptions: 0, newSessions: 0})
    expect(eventsOf(events, 'reconnect')).toEqual([
      expect.objectContaining({
        branch: 'session-resumption',
        headers: {'mcp-session-id': 'session-1', 'last-event-id': undefined},
      }),
    ])
    await client.close()
  })

  it('a session the store does not know numbers its requests past the current time in microseconds: its used IDs are unknown', async () => {
    useMock()
    await storedSession()
    const ids: number[] = []
    const before = Date.now() * 1000
    const {client} = await connect({
      sessionId: 'session-1',
      fetch: (input, init) => {
        if (typeof init?.body === 'string') ids.push((JSON.parse(init.body) as {id?: number}).id ?? -1)
        return fetch(input, init)
      },
    })
    await client.callTool({name: 'echo'})
    expect(ids.filter((id) => id >= 0).length).toBeGreaterThan(0)
    for (const id of ids.filter((id) => id >= 0)) expect(id).toBeGreaterThanOrEqual(before)
    await client.close()
  })

  it.each(['bad id', 'bad\nid', '', 'caf\xE9'])(
    'an invalid sessionId option %j is a TypeError at construction that shows it',
    (sessionId) => {
      expect(() => new ResumableHTTPClientTransport(new URL(url), {sessionId})).toThrow(
        new TypeError(
          `options.sessionId must be a session ID: 1 to 1024 visible ASCII characters (0x21-0x7E), got ${JSON.stringify(sessionId)}`,
        ),
      )
    },
  )

  it('a sessionId option of 1025 characters, more than a stored record holds, is a TypeError at construction', () => {
    expect(() => new ResumableHTTPClientTransport(new URL(url), {sessionId: 's'.repeat(1025)})).toThrow(
      new TypeError(
        `options.sessionId must be a session ID: 1 to 1024 visible ASCII characters (0x21-0x7E), got "${'s'.repeat(1025)}"`,
      ),
    )
  })

  it('a sessionId option of 1024 characters, the most a stored record holds, is attached to', async () => {
    const mock = useMock({sessionIds: ['s'.repeat(1024)]})
    await storedSession()
    const before = mock.requests('GET').length
    const {transport} = await started({sessionId: 's'.repeat(1024)})
    expect(transport.sessionId).toBe('s'.repeat(1024))
    await until(() => mock.requests('GET').length > before)
    expect(mock.requests('GET')[before]).toMatchObject({sessionId: 's'.repeat(1024), status: 200})
    await transport.close()
  })
})

describe('what the session says and writes', () => {
  it('an invalid session ID from the server fails connect with protocol, in a message that shows it', async () => {
    useMock({sessionIds: ['bad id']})
    const error = await failure(connect())
    expect(isTransportError(error, 'protocol')).toBe(true)
    expect((error as Error).message).toBe(
      'The server sent an invalid session ID "bad id": only 1 to 1024 visible ASCII characters (0x21-0x7E) are allowed',
    )
  })

  it('a session ID of 1025 characters from the server fails connect with protocol as an invalid one does, and nothing of it is stored', async () => {
    useMock({sessionIds: ['s'.repeat(1025)]})
    const store = new RecordingStore()
    const error = await failure(connect({store}))
    expect(isTransportError(error, 'protocol')).toBe(true)
    expect((error as Error).message).toBe(
      `The server sent an invalid session ID "${'s'.repeat(200)}…": only 1 to 1024 visible ASCII characters (0x21-0x7E) are allowed`,
    )
    expect(store.writes).toEqual([])
  })

  it('a session ID of 1024 characters from the server starts the session, and a next process resumes it from the store', async () => {
    const mock = useMock({sessionIds: ['s'.repeat(1024)]})
    const store = await storedSession()
    const {transport, client} = await connect({store})
    expect(transport.sessionId).toBe('s'.repeat(1024))
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    await client.close()
  })

  const initialized: JSONRPCMessage = {jsonrpc: '2.0', method: 'notifications/initialized'}
  it.each([
    [
      'on a session the app named, with no handshake in this process',
      async () => (await started({sessionId: 'session-1'})).transport,
    ],
    ['after the Client initialized', async () => (await connect()).transport],
    [
      'after a handshake answered from the store',
      async () => (await connect({store: await storedSession()})).transport,
    ],
  ])(
    "a notifications/initialized the app sends %s reaches the server: only the one of a replayed handshake is the server's already",
    async (_when, open) => {
      const mock = useMock()
      await storedSession()
      const transport = await open()
      const before = mock.requests('POST', 'notifications/initialized').length
      await transport.send(initialized)
      expect(mock.requests('POST', 'notifications/initialized').length - before).toBe(1)
      await transport.close()
    },
  )

  it('reserves request IDs a hundred at a time in the session record, and nothing in the record of the era without sessions', async () => {
    useMock()
    const store = new RecordingStore()
    const {client} = await connect({store})
    const before = store.writes.length
    for (let call = 0; call < 10; call++) await client.callTool({name: 'echo'})

    expect(store.writes.slice(before).filter((write) => write.key.endsWith('#session'))).toEqual([])
    expect(store.writes.filter((write) => write.key.endsWith('#wire-ids'))).toEqual([])
    await client.close()
  })
})
