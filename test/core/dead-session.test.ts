/**
 * A session the server no longer knows ends, whatever status the server chose for it
 * (docs/failures.md#a-session-the-server-no-longer-knows): servers built on the SDK's examples answer 400 where the
 * spec says 404, and a persistent store must not turn that into an outage of every later process. The app can also
 * drop a stored session itself (`forgetSession()`).
 */
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type ResumableHTTPClientTransportOptions,
} from '../../src/index.ts'
import type {ReferenceServer} from '../../src/testing/index.ts'
import {connectClient} from '../fixtures/client.ts'
import {
  connect,
  emptied,
  eventsOf,
  network,
  storedSession,
  until,
  untilGetsServed,
  url,
  useMock,
} from '../fixtures/harness.ts'
import {answerToolCalls, codeOf, failure} from '../fixtures/wire.ts'

/** What `@modelcontextprotocol/server-everything` answers a request naming a session it does not know. */
const noValidSession = {
  jsonrpc: '2.0',
  error: {code: -32000, message: 'Bad Request: No valid session ID provided'},
  id: null,
}

interface Refused {
  method: string
  rpcMethod: string | undefined
}

/**
 * Puts `mock` behind what servers built on the SDK's examples do with a session they do not know (lost in a restart):
 * 400, not 404. `as: 'server-everything'` answers every method with its JSON-RPC error `id: null`; `'sdk-example'`
 * answers a GET and a DELETE with the examples' plain text. Returns the requests so refused.
 */
function refuseUnknownSessions(mock: ReferenceServer, as: 'server-everything' | 'sdk-example'): Refused[] {
  const refused: Refused[] = []
  network.use(
    http.all(url, async ({request}) => {
      const sessionId = request.headers.get('mcp-session-id')
      if (sessionId === null || mock.sessions().some((session) => session.id === sessionId)) return undefined
      const body = request.method === 'POST' ? ((await request.clone().json()) as {method?: string}) : {}
      refused.push({method: request.method, rpcMethod: body.method})
      if (request.method === 'POST' || as === 'server-everything')
        return HttpResponse.json(noValidSession, {status: 400})
      return new HttpResponse('Invalid or missing session ID', {status: 400})
    }),
  )
  return refused
}

/** The keys of the session records (`#session`, `#stream:`, `#request:`) of the endpoint in `store`. */
async function sessionRecords(store: MemoryStore): Promise<string[]> {
  const keys = await store.list(`mcp-resumable-http:${url}#`)
  return keys.filter((key) => /#(session|stream:|request:)/.test(key))
}

describe('a stored session the restarted server answers 400', () => {
  it.each(['server-everything', 'sdk-example'] as const)(
    'as %s does, ends at its first GET: session-expired once, its records deleted, and a next transport on the store initializes without a failed round',
    async (as) => {
      const mock = useMock()
      const store = await storedSession()
      mock.faults.restart()
      const refused = refuseUnknownSessions(mock, as)

      const second = await connect({store})
      await until(() => eventsOf(second.events, 'session-expired').length === 1)
      expect(second.errors).toMatchObject([
        {code: 'session-expired', status: 400, message: 'Session session-1 has expired (HTTP 400 on GET)'},
      ])
      expect(second.transport.sessionId).toBeUndefined()
      expect(await emptied(() => sessionRecords(store))).toEqual([])
      await second.client.close()

      const third = await connect({store})
      expect(third.transport.sessionId).toBe('session-2')
      expect((await third.client.callTool({name: 'echo'})).content).toEqual([{type: 'text', text: 'echo: {}'}])
      expect(refused).toEqual([{method: 'GET', rpcMethod: undefined}])
      expect(mock.requests('POST', 'initialize')).toHaveLength(2)
      await third.client.close()
    },
  )

  it('of a session the app kept (sessionId option) ends the same way, and the Client connected again initializes', async () => {
    const mock = useMock()
    await (await connect()).client.close()
    mock.faults.restart()
    const refused = refuseUnknownSessions(mock, 'sdk-example')
    const {client, transport, events} = await connect({sessionId: 'session-1'})
    await until(() => eventsOf(events, 'session-expired').length === 1)
    expect(isTransportError(await failure(client.listTools()), 'session-expired')).toBe(true)

    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    await client.listTools()
    expect(refused).toEqual([{method: 'GET', rpcMethod: undefined}])
    await client.close()
  })
})

describe('a POST refused 400 in a session', () => {
  // The standalone stream, cut by the restart, waits its backoff: the call's POST meets the dead session first.
  const slowReconnects: ResumableHTTPClientTransportOptions = {reconnect: {minDelayMs: 10_000, maxDelayMs: 20_000}}

  it('with an id: null error, and its GET refused 400 too, rejects session-expired: the call is not sent again, and the Client connected again initializes', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const {client, transport, events} = await connect({...slowReconnects, store})
    await untilGetsServed()
    mock.faults.restart()
    const refused = refuseUnknownSessions(mock, 'server-everything')

    const error = await failure(client.callTool({name: 'echo'}))
    expect(error).toMatchObject({
      code: 'session-expired',
      status: 400,
      message:
        'Session session-1 has expired (HTTP 400, and 400 to a GET of the session); tools/call was not sent again',
    })
    expect(refused).toEqual([
      {method: 'POST', rpcMethod: 'tools/call'},
      {method: 'GET', rpcMethod: undefined},
    ])
    expect(eventsOf(events, 'session-expired')).toEqual([
      {type: 'session-expired', sessionId: 'session-1', settledRequests: 0},
    ])
    expect(mock.executions).toEqual({})
    expect(isTransportError(await failure(client.listTools()), 'session-expired')).toBe(true)
    expect(await emptied(() => sessionRecords(store))).toEqual([])

    await client.close()
    await client.connect(transport)
    await client.callTool({name: 'echo'})
    expect(transport.sessionId).toBe('session-2')
    expect(refused).toHaveLength(2)
    expect(mock.executions).toEqual({echo: 1})
    await client.close()
  })

  it("whose body is a JSON-RPC error answering the request is the request's refusal: http 400, no GET asked, the session kept", async () => {
    const mock = useMock()
    const {client, transport} = await connect(slowReconnects)
    await untilGetsServed()
    const gets = mock.requests('GET').length
    const calls = answerToolCalls((id) =>
      HttpResponse.json({jsonrpc: '2.0', id, error: {code: -32602, message: 'Unknown tool'}}, {status: 400}),
    )
    const error = await failure(client.callTool({name: 'nope'}))
    expect(isTransportError(error, 'http') && error.status === 400).toBe(true)
    expect(mock.requests('GET')).toHaveLength(gets)
    expect(transport.sessionId).toBe('session-1')
    await client.listTools()
    expect(calls).toHaveLength(1)
    await client.close()
  })

  it("whose GET opens a stream is the message's refusal: http 400, the session kept, and the standalone stream re-attaches without cursor, lest the server put something on that stream", async () => {
    const mock = useMock()
    const {client, transport, events} = await connect(slowReconnects)
    await untilGetsServed()
    const gets = mock.requests('GET').length
    mock.faults.failNext({method: 'POST', status: 400, rpcMethod: 'tools/call'})
    const error = await failure(client.callTool({name: 'echo'}))
    expect(isTransportError(error, 'http') && error.status === 400).toBe(true)
    await until(() => eventsOf(events, 'reconnect').length === 1)

    expect(eventsOf(events, 'reconnect')).toMatchObject([
      {
        stream: 'standalone',
        branch: 'session-resumption',
        headers: {'mcp-session-id': 'session-1', 'last-event-id': undefined},
      },
    ])
    expect(
      mock
        .requests('GET')
        .slice(gets)
        .map((get) => [get.sessionId, get.lastEventId]),
    ).toEqual([
      ['session-1', undefined],
      ['session-1', undefined],
    ])
    expect(transport.sessionId).toBe('session-1')
    expect(mock.executions).toEqual({})
    await client.callTool({name: 'echo'})
    await client.close()
  })

  it('whose GET cannot tell (405: the server offers none) stays http 400, and the session is kept for the app to drop', async () => {
    useMock({standalone: false})
    const {client, transport} = await connect(slowReconnects)
    answerToolCalls(() => HttpResponse.json(noValidSession, {status: 400}))
    const error = await failure(client.callTool({name: 'echo'}))
    expect(isTransportError(error, 'http') && error.status === 400).toBe(true)
    expect(transport.sessionId).toBe('session-1')
    await client.close()
  })
})

describe('forgetSession()', () => {
  it('before start() deletes the stored session, sends nothing, and the next connect initializes a new one', async () => {
    const mock = useMock()
    const store = await storedSession()
    const requests = mock.log.length
    const transport = new ResumableHTTPClientTransport(new URL(url), {store})
    await transport.forgetSession()
    expect(await sessionRecords(store)).toEqual([])
    expect(mock.log).toHaveLength(requests)

    const {client} = await connect({store})
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    expect(mock.requests('POST', 'initialize')).toHaveLength(2)
    expect(mock.log.slice(requests).filter((entry) => entry.sessionId === 'session-1')).toEqual([])
    await client.close()
  })

  it('drops the sessionId option too: the transport initializes instead of attaching', async () => {
    const mock = useMock()
    await storedSession()
    const requests = mock.log.length
    const transport = new ResumableHTTPClientTransport(new URL(url), {sessionId: 'session-1'})
    await transport.forgetSession()
    const {client} = await connectClient(transport)
    expect(transport.sessionId).toBe('session-2')
    expect(mock.requests('POST', 'initialize')).toHaveLength(2)
    expect(mock.log.slice(requests).filter((entry) => entry.sessionId === 'session-1')).toEqual([])
    await client.close()
  })

  it('while connected ends the session held without any request: a call in flight is settled aborted, the records go, and the next connect initializes', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const {client, transport} = await connect({store})
    const call = failure(
      client.callTool({name: 'slow', arguments: {steps: 20, delayMs: 20}}, undefined, {onprogress: () => {}}),
    )
    await until(() => mock.requests('POST', 'tools/call').length === 1)
    const requests = mock.log.length
    await transport.forgetSession()

    expect(codeOf(await call)).toBe('aborted')
    expect(((await call) as Error).message).toContain('Session session-1 was forgotten')
    expect(transport.sessionId).toBeUndefined()
    expect(await sessionRecords(store)).toEqual([])
    expect(mock.log.slice(requests).filter((entry) => entry.method === 'DELETE')).toEqual([])
    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    await client.close()
  })

  it('after close() forgets the session close() left in the store for a next process', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const {client, transport} = await connect({store})
    await untilGetsServed()
    await client.close()
    expect(await sessionRecords(store)).not.toEqual([])
    await transport.forgetSession()
    expect(await sessionRecords(store)).toEqual([])
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    expect(mock.requests('POST', 'initialize')).toHaveLength(2)
    await client.close()
  })

  it("never deletes a live owner's session: before start() it forgets the one start() would take, a slot of its own", async () => {
    useMock()
    const store = new MemoryStore()
    const owner = await connect({store})
    await untilGetsServed()
    const owned = `mcp-resumable-http:${url}#session`
    expect(await sessionRecords(store)).toContain(owned)

    await new ResumableHTTPClientTransport(new URL(url), {store}).forgetSession()
    expect(await sessionRecords(store)).toContain(owned)
    expect(owner.transport.sessionId).toBe('session-1')
    expect((await owner.client.callTool({name: 'echo'})).content).toEqual([{type: 'text', text: 'echo: {}'}])
    await owner.client.close()
  })
})
