/**
 * A process that restarts on the same store picks its MCP session up where it left off. Each
 * "process" is a transport and an SDK Client on one shared store; the first one dies (is closed) mid-work.
 */
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {describe, expect, it} from 'vitest'
import {MemoryStore, type FetchLike, type JsonValue} from '../../src/index.ts'
import {createMockMcpServer} from '../../src/testing/index.ts'
import {connectTo} from '../fixtures/client.ts'
import {
  connect,
  dieMidCall,
  eventsOf,
  interceptGets,
  network,
  storedSession,
  until,
  url,
  useMock,
} from '../fixtures/harness.ts'
import {codeOf} from '../fixtures/wire.ts'

/** A fetch that records the JSON-RPC bodies it POSTs. */
function recordingFetch(): {fetch: FetchLike; posted: {id?: unknown; method?: string}[]} {
  const posted: {id?: unknown; method?: string}[] = []
  return {
    posted,
    fetch: async (input, init) => {
      if (typeof init?.body === 'string') posted.push(JSON.parse(init.body) as {id?: unknown; method?: string})
      return fetch(input, init)
    },
  }
}

describe('restart mid-call', () => {
  it('the new process replays only what it missed on the tool stream; the tool ran once, nothing twice', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const {sessionId} = (await dieMidCall(store, 2)).transport

    const {fetch, posted} = recordingFetch()
    const after = await connect({store, fetch})
    expect(after.transport.sessionId).toBe(sessionId)
    await until(() => after.transport.metrics.unmatchedResponses === 1)

    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    expect(mock.executions).toEqual({slow: 1})
    const resume = mock.requests('GET').find((entry) => entry.lastEventId?.startsWith('p') === true)!
    const [stream] = mock.session().streams.filter((candidate) => candidate.id.startsWith('p'))
    const missed = stream!.events.slice(stream!.events.findIndex((event) => event.id === resume.lastEventId) + 1)
    // Progress 3 to 6 and the response: exactly what the first process had not seen.
    expect(after.transport.metrics.replayedEvents).toBe(missed.length)
    expect(missed).toHaveLength(5)
    // What the app needs to recognise its earlier call: the request as it sent it, its progress, its result.
    const call = {method: 'tools/call', name: 'slow', clientId: 1}
    const progress = eventsOf(after.events, 'orphaned-notification').map((event) => [
      event.call,
      (event.message as {params?: {progress?: number}}).params?.progress,
    ])
    expect(progress).toEqual([3, 4, 5, 6].map((step) => [call, step]))
    expect(eventsOf(after.events, 'unmatched-response')).toMatchObject([
      {call, message: {result: {content: [{text: 'done after 6 steps'}]}}},
    ])
    expect(after.errors).toEqual([])
    // The restarted Client counts from 0 again; on the wire its IDs continue past every ID used before.
    await after.client.callTool({name: 'echo'})
    const wireIds = posted.map((body) => body.id).filter((id) => typeof id === 'number')
    expect(Math.min(...wireIds)).toBeGreaterThanOrEqual(100)
    await after.client.close()
  })

  it("keeps the trace context of a call's params._meta with its stream: the next process's reconnect and answer name it", async () => {
    useMock()
    const store = new MemoryStore()
    const before = await connect({store})
    const trace = {traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, tracestate: 'vendor=1'}
    let progress = 0
    const call = before.client
      .callTool({name: 'slow', arguments: {steps: 6, delayMs: 25}, _meta: trace}, undefined, {
        onprogress: () => {
          progress++
        },
      })
      .catch(() => 'process died')
    await until(() => progress === 2)
    await before.transport.close()
    await call

    const after = await connect({store})
    await until(() => after.transport.metrics.unmatchedResponses === 1)
    const record = {method: 'tools/call', name: 'slow', clientId: 1, ...trace}
    const reconnects = eventsOf(after.events, 'reconnect')
    expect(reconnects.find((event) => event.stream === 'request')?.call).toEqual(record)
    expect(reconnects.find((event) => event.stream === 'standalone')?.call).toBeUndefined()
    expect(eventsOf(after.events, 'unmatched-response').map((event) => event.call)).toEqual([record])
    await after.client.close()
  })

  it('re-attaches with the stored protocol version and initialize result', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const before = await connect({store})
    const initializeResult = before.transport.initializeResult
    expect(initializeResult).toMatchObject({serverInfo: {name: 'reference-server'}})
    await before.client.close()

    const after = await connect({store})
    expect(after.transport.initializeResult).toEqual(initializeResult)
    expect(after.transport.protocolVersion).toBe('2025-11-25')
    await after.client.callTool({name: 'echo'})
    expect(mock.requests('POST', 'tools/call')[0]).toMatchObject({
      sessionId: 'session-1',
      protocolVersion: '2025-11-25',
    })
    await after.client.close()
  })
})

describe('restart with a lost cursor', () => {
  it('session resumption: the re-emitted request is answered once, the one answered before gets its kept answer, sent again at start', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    // The first process answers question 1 but dies before that answer reaches the server, and before it
    // could answer question 2.
    const before = await connect({
      store,
      fetch: (input, init) =>
        typeof init?.body === 'string' && init.body.includes('"result"')
          ? Promise.reject(new TypeError('process died'))
          : fetch(input, init),
    })
    let asked = 0
    before.client.setRequestHandler(CreateMessageRequestSchema, () =>
      ++asked === 1
        ? {model: 'm', role: 'assistant', content: {type: 'text', text: 'first answer'}}
        : new Promise<never>(() => {}),
    )
    const call = before.client.callTool({name: 'ask', arguments: {count: 2}}).catch(() => 'process died')
    await until(() => asked === 2)
    await before.transport.close()
    await call
    // Lose the cursors, keep the session and the answers.
    for (const key of await store.list(`mcp-resumable-http:${url}#stream:`)) await store.delete(key)

    const after = await connect({store})
    await until(() => mock.answers.size === 2)

    // Question 2 was kept unanswered: the new Client handles it once; its re-emission is a duplicate.
    expect(after.sampled).toEqual(['question 2'])
    expect(eventsOf(after.events, 'request-restored')).toEqual([{type: 'request-restored', requestId: 'srv-2'}])
    expect(mock.answers.get('srv-1')).toEqual([
      expect.objectContaining({result: expect.objectContaining({content: {type: 'text', text: 'first answer'}})}),
    ])
    // The server may re-emit question 2 before the answer reaches it: the same answer may then go twice.
    const second = mock.answers.get('srv-2')!.map((answer) => JSON.stringify(answer))
    expect(new Set(second).size).toBe(1)
    expect(after.transport.metrics.sessionResumptions).toBe(1)
    // The kept answer goes at start, before the server could ask again: a re-emission finds it on its way.
    expect(eventsOf(after.events, 'cached-answer-resent')).toEqual([])
    expect(mock.executions).toEqual({ask: 1})
    await after.client.close()
  })
})

describe('restart with a server request received and not answered', () => {
  it('the new process handles it once, though no stream brings it again (a server that never re-emits)', async () => {
    const mock = useMock({mode: 'cursor-per-session'})
    const store = new MemoryStore()
    const before = await connect({store})
    let asked = false
    before.client.setRequestHandler(CreateMessageRequestSchema, () => {
      asked = true
      return new Promise<never>(() => {})
    })
    const call = before.client.callTool({name: 'ask'}).catch(() => 'process died')
    await until(() => asked)
    await before.transport.close()
    await call

    const after = await connect({store})
    await until(() => after.transport.metrics.unmatchedResponses === 1)
    expect(after.sampled).toEqual(['question 1'])
    expect(eventsOf(after.events, 'request-restored')).toEqual([{type: 'request-restored', requestId: 'srv-1'}])
    expect(mock.answers.get('srv-1')).toHaveLength(1)
    const [answered] = eventsOf(after.events, 'unmatched-response')
    expect(answered?.message).toMatchObject({result: {content: [{type: 'text', text: 'answer 1'}]}})
    expect(mock.executions).toEqual({ask: 1})
    await after.client.close()
  })
})

describe('restart after the session expired', () => {
  it('404 on the resume: cursors cleared, no duplicate tools/call; the app re-initializes a new session', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    await dieMidCall(store, 1)
    mock.faults.expireSession('session-1')

    const after = await connect({store})
    await until(() => after.transport.sessionId === undefined)
    expect(await store.list(`mcp-resumable-http:${url}#stream:`)).toEqual([])
    expect(await store.get(`mcp-resumable-http:${url}#session`)).toBeUndefined()
    expect(codeOf(after.errors.find((error) => codeOf(error) === 'session-expired'))).toBe('session-expired')

    await after.client.close()
    await after.client.connect(after.transport)
    expect(after.transport.sessionId).toBe('session-2')
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    expect(mock.executions).toEqual({slow: 1})
    await after.client.close()
  })
})

describe('the first request after re-attaching gets 404', () => {
  it('the session is expired, the request is not sent again, and the app can initialize anew', async () => {
    const mock = useMock()
    // No standalone stream (405): its GET cannot find the session gone first, so the POST's 404 must.
    const gets = interceptGets(mock, () => new Response(null, {status: 405}))
    const {client, transport} = await connect({sessionId: 'gone-while-we-slept'})
    await until(() => gets.length === 1)
    expect(transport.sessionId).toBe('gone-while-we-slept')
    const error = await client.callTool({name: 'increment'}).catch((caught: unknown) => caught)

    expect(codeOf(error)).toBe('session-expired')
    expect((error as Error).message).toMatch(/tools\/call was not sent again/)
    expect(gets).toEqual([{sessionId: 'gone-while-we-slept', lastEventId: undefined}])
    expect(mock.requests('POST', 'tools/call')).toEqual([
      expect.objectContaining({sessionId: 'gone-while-we-slept', status: 404}),
    ])
    expect(transport.sessionId).toBeUndefined()
    expect(mock.executions).toEqual({})
    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-1')
    await client.close()
  })
})

describe('one store, many servers and users', () => {
  it('two servers and two storeKeys keep four sessions apart, each found again after a restart', async () => {
    const store = new MemoryStore()
    const other = 'http://other.test/mcp'
    const second = createMockMcpServer({url: other, sessionIds: ['other-1', 'other-2']})
    network.use(...second.handlers)
    const mocks = {[url]: useMock(), [other]: second.server}
    const combinations = [url, other].flatMap((server) => ['alice', 'bob'].map((storeKey) => ({server, storeKey})))
    const sessions: (string | undefined)[] = []
    for (const {server, storeKey} of combinations) {
      const here = await connectTo(server, {store, storeKey})
      sessions.push(here.transport.sessionId)
      await here.client.close()
    }
    for (const [index, {server, storeKey}] of combinations.entries()) {
      const again = await connectTo(server, {store, storeKey})
      expect(again.transport.sessionId).toBe(sessions[index])
      await again.client.callTool({name: 'echo'})
      await again.client.close()
    }
    expect(sessions).toEqual(['session-1', 'session-2', 'other-1', 'other-2'])
    for (const mock of Object.values(mocks)) {
      expect(mock.requests('POST', 'initialize')).toHaveLength(2)
      expect(mock.requests('POST', 'tools/call').map((entry) => entry.sessionId)).toEqual(
        sessions.filter((id) => mock.sessions().some((session) => session.id === id)),
      )
    }
  })
})

describe('a corrupt store', () => {
  it.each<[string, JsonValue]>([
    ['a session record that is not an object', 'garbage'],
    ['a session ID that is not a string', {sessionId: 42}],
  ])('%s: reported, discarded, and a new session starts', async (_what, record) => {
    const mock = useMock()
    const store = new MemoryStore()
    await store.set(`mcp-resumable-http:${url}#session`, record)
    const {transport, events, client} = await connect({store})
    expect(eventsOf(events, 'record-discarded')).toHaveLength(1)
    expect(eventsOf(events, 'store-error')).toHaveLength(0)
    expect(transport.sessionId).toBe('session-1')
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    await client.close()
  })

  it('a cursor record that cannot be read whole is discarded: no cursor is ever sent from it', async () => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(`mcp-resumable-http:${url}#stream:standalone`, {sessionId: 'session-1', lastEventId: 7})
    const after = await connect({store})
    await until(() => mock.requests('GET').length >= 2)
    expect(mock.requests('GET').every((entry) => entry.lastEventId === undefined)).toBe(true)
    expect(eventsOf(after.events, 'record-discarded')).toHaveLength(1)
    await after.client.close()
  })

  it('a store that fails is reported and the connection goes on', async () => {
    useMock()
    const failing = {
      get: () => Promise.reject(new Error('disk gone')),
      set: () => Promise.reject(new Error('disk gone')),
      delete: () => Promise.reject(new Error('disk gone')),
      list: () => Promise.reject(new Error('disk gone')),
    }
    const {client, events} = await connect({store: failing})
    await client.callTool({name: 'slow', arguments: {steps: 2}})
    expect(eventsOf(events, 'store-error').length).toBeGreaterThan(0)
    await client.close()
  })
})

describe('a Client that re-attaches from the store', () => {
  it("knows the server's capabilities, version and instructions as if it had initialized, with no initialize sent", async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const before = await connect({store})
    const known = {
      capabilities: before.client.getServerCapabilities(),
      version: before.client.getServerVersion(),
      instructions: before.client.getInstructions(),
    }
    await before.client.close()

    const after = await connect({store})
    expect(after.transport.sessionId).toBe('session-1')
    expect({
      capabilities: after.client.getServerCapabilities(),
      version: after.client.getServerVersion(),
      instructions: after.client.getInstructions(),
    }).toEqual(known)
    expect(known.capabilities).toBeDefined()
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    expect(mock.requests('POST', 'notifications/initialized')).toHaveLength(1)
    await after.client.callTool({name: 'echo', arguments: {text: 'x'}})
    expect(mock.executions).toEqual({echo: 1})
    await after.client.close()
  })
})
