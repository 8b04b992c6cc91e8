/**
 * The reference server of `mcp-resumable-http/testing`, spoken to by hand over both adapters (msw and real
 * sockets): sessions, versions, streams, the resumption boundary (docs/design.md#what-a-server-must-do), tools,
 * instrumentation.
 */
import {describe, expect, it} from 'vitest'
import {createReferenceServer, refusals} from '../../src/testing/index.ts'
import {backends, errorOf, messagesOf, rawClient, readEvents, RawClient, serve} from '../fixtures/kit.ts'

const progressOf = (messages: Record<string, unknown>[]): unknown[] =>
  messages
    .filter((message) => message['method'] === 'notifications/progress')
    .map((message) => (message['params'] as {progress: unknown}).progress)

describe.each(backends)('reference server over %s', (backend) => {
  describe('sessions and versions', () => {
    it('initialize: JSON answer with Mcp-Session-Id and the client version when supported, else the latest', async () => {
      const served = await serve(backend)
      const older = new RawClient(served.url)
      const response = await older.initialize('2025-06-18')
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect([older.sessionId, older.protocolVersion]).toEqual(['session-1', '2025-06-18'])
      const future = new RawClient(served.url)
      await future.initialize('2099-01-01')
      expect([future.sessionId, future.protocolVersion]).toEqual(['session-2', '2025-11-25'])
      expect(served.server.sessions().map((session) => [session.id, session.protocolVersion])).toEqual([
        ['session-1', '2025-06-18'],
        ['session-2', '2025-11-25'],
      ])
    })

    it('protocolVersion forces the negotiated version; sessionIds are handed out in order, then session-<n>', async () => {
      const served = await serve(backend, {protocolVersion: '2025-03-26', sessionIds: ['alpha']})
      const first = await rawClient(served)
      const second = await rawClient(served)
      expect([first.sessionId, first.protocolVersion, second.sessionId]).toEqual(['alpha', '2025-03-26', 'session-2'])
    })

    it('a missing session is 400, an unknown one 404 (-32001), an unsupported MCP-Protocol-Version 400; no version header is accepted', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const missing = await client.post({jsonrpc: '2.0', id: 1, method: 'tools/list'}, {session: false})
      expect([missing.status, (await errorOf(missing))?.code]).toEqual([
        refusals.sessionRequired.status,
        refusals.sessionRequired.code,
      ])
      const unknown = await client.post(
        {jsonrpc: '2.0', id: 2, method: 'tools/list'},
        {session: false, headers: {'mcp-session-id': 'nope'}},
      )
      expect([unknown.status, (await errorOf(unknown))?.code]).toEqual([404, -32001])
      const badVersion = await client.post(
        {jsonrpc: '2.0', id: 3, method: 'tools/list'},
        {headers: {'mcp-protocol-version': '1999-01-01'}},
      )
      expect([badVersion.status, (await errorOf(badVersion))?.message]).toEqual([
        400,
        'Bad Request: Unsupported protocol version: 1999-01-01',
      ])
      const noVersion = await client.post(
        {jsonrpc: '2.0', id: 4, method: 'tools/list'},
        {session: false, headers: {'mcp-session-id': 'session-1'}},
      )
      expect(noVersion.status).toBe(200)
      expect(served.server.log.map((entry) => entry.status)).toEqual([200, 400, 404, 400, 200])
    })

    it('DELETE ends the session: 200, then 404 for everything naming it', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      expect((await client.delete()).status).toBe(200)
      expect((await client.get()).status).toBe(404)
      expect(served.server.sessions()).toEqual([])
    })

    it('sessions: false mints no session and needs none; a Last-Event-ID is refused', async () => {
      const served = await serve(backend, {sessions: false})
      const client = await rawClient(served)
      expect(client.sessionId).toBeUndefined()
      expect(messagesOf((await readEvents(await client.call('echo', {n: 1}))).events).at(-1)).toMatchObject({
        result: {content: [{text: 'echo: {"n":1}'}]},
      })
      expect((await client.get('p1_1')).status).toBe(refusals.resumptionRefused.status)
      expect((await client.delete()).status).toBe(405)
    })

    it('a batch is served in 2025-03-26 (one stream, both answers) and refused in later versions', async () => {
      const served = await serve(backend)
      const batch = [
        {jsonrpc: '2.0', id: 10, method: 'tools/list'},
        {jsonrpc: '2.0', id: 11, method: 'tools/call', params: {name: 'echo', arguments: {}}},
        {jsonrpc: '2.0', method: 'notifications/roots/list_changed'},
      ]
      const old = await rawClient(served, '2025-03-26')
      const {events} = await readEvents(await old.post(batch))
      expect(
        messagesOf(events)
          .map((message) => message['id'])
          .sort(),
      ).toEqual([10, 11])
      const current = await rawClient(served)
      expect((await current.post(batch)).status).toBe(refusals.batchNotSupported.status)
    })

    it('a body that is not JSON-RPC is a parse error; an unknown method -32601; an unknown tool -32602 and no execution', async () => {
      const served = await serve(backend, {json: true})
      const client = await rawClient(served)
      expect((await errorOf(await client.post('{oops')))?.code).toBe(-32700)
      expect((await errorOf(await client.post({jsonrpc: '2.0', id: 1, method: 'resources/list'})))?.code).toBe(-32601)
      expect((await errorOf(await client.call('nope')))?.code).toBe(-32602)
      expect(served.server.executions).toEqual({})
    })
  })

  describe('answers and streams', () => {
    it('2025-11-25: a POST stream opens with a priming event carrying retry, then progress, then the result, and ends', async () => {
      const served = await serve(backend, {retryMs: 250})
      const client = await rawClient(served)
      const {events, ending} = await readEvents(await client.call('slow', {steps: 2}))
      expect(ending).toBe('closed')
      expect(events[0]).toEqual({id: 'p1_1', data: '', retry: 250})
      expect(events.map((event) => event.id)).toEqual(['p1_1', 'p1_2', 'p1_3', 'p1_4'])
      expect(progressOf(messagesOf(events))).toEqual([1, 2])
      expect(messagesOf(events).at(-1)).toMatchObject({result: {content: [{text: 'done after 2 steps'}]}})
    })

    it('2025-06-18 and 2025-03-26: no priming event; priming: true forces one', async () => {
      const served = await serve(backend)
      for (const version of ['2025-06-18', '2025-03-26']) {
        const {events} = await readEvents(await (await rawClient(served, version)).call('echo'))
        expect(events.map((event) => event.data === '')).toEqual([false])
      }
      const primed = await serve(backend, {priming: true})
      const {events} = await readEvents(await (await rawClient(primed, '2025-06-18')).call('echo'))
      expect(events.map((event) => event.data === '')).toEqual([true, false])
    })

    it('json: the answer is one JSON body; the server requests of a call go to the standalone stream', async () => {
      const served = await serve(backend, {json: true})
      const client = await rawClient(served)
      const standalone = await client.get()
      const call = client.call('ask')
      const {events} = await readEvents(standalone, 1)
      const [question] = messagesOf(events)
      expect(question).toMatchObject({id: 'srv-1', method: 'sampling/createMessage'})
      await client.answer('srv-1', 'yes')
      const answer = await call
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await answer.json()).toMatchObject({result: {content: [{type: 'text', text: 'yes'}]}})
    })

    it('a stream with nothing to send yet answers at once: a standalone GET has its headers before any event', async () => {
      const standalone = await (await rawClient(await serve(backend))).get()
      expect([standalone.status, standalone.headers.get('content-type')]).toEqual([200, 'text/event-stream'])
      expect(await readEvents(standalone, 1, 100)).toEqual({events: [], ending: 'timeout'})
    })

    it('standalone: false answers GET with 405', async () => {
      const served = await serve(backend, {standalone: false})
      expect((await (await rawClient(served)).get()).status).toBe(405)
    })

    it('notifications and answers are accepted with 202 and no body', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const accepted = await client.post({jsonrpc: '2.0', method: 'notifications/initialized'})
      expect([accepted.status, await accepted.text()]).toEqual([202, ''])
      expect((await client.answer('srv-9', 'unasked')).status).toBe(202)
      expect(served.server.counters.unmatchedAnswers).toBe(1)
    })
  })

  describe('the resumption boundary', () => {
    it('a Last-Event-ID replays the stream that emitted it, and only that one', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const first = await readEvents(await client.call('slow', {steps: 3}))
      await readEvents(await client.call('slow', {steps: 2}))
      const {events, ending} = await readEvents(await client.get(first.events[1]!.id))
      expect(ending).toBe('closed')
      expect(events.map((event) => event.id)).toEqual(first.events.slice(2).map((event) => event.id))
      expect(served.server.stream('p1')).toMatchObject({sent: 5, replayed: 3})
      expect(served.server.stream('p2')).toMatchObject({sent: 4, replayed: 0})
    })

    it('a live stream resumed from a cursor: the replay, then the events still to come, on the new connection', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      served.server.faults.cutNext({after: 2, how: 'error'})
      const cut = await readEvents(await client.call('slow', {steps: 4, delayMs: 20}))
      expect(cut).toMatchObject({ending: 'error'})
      expect(cut.events).toHaveLength(2)
      const resumed = await readEvents(await client.get(cut.events[1]!.id))
      expect(resumed.ending).toBe('closed')
      expect(progressOf(messagesOf([...cut.events, ...resumed.events]))).toEqual([1, 2, 3, 4])
      expect(served.server.executions).toEqual({slow: 1})
    })

    it('Last-Event-ID refused with 422 / -32010: without a session, from another session, unknown', async () => {
      const served = await serve(backend)
      const mine = await rawClient(served)
      const other = await rawClient(served)
      const {events} = await readEvents(await mine.call('echo'))
      const refused = [
        await mine.get(events[0]!.id, {session: false}),
        await other.get(events[0]!.id),
        await mine.get('p9_99'),
      ]
      for (const response of refused) {
        expect(response.status).toBe(422)
        expect((await errorOf(response))?.code).toBe(refusals.resumptionRefused.code)
      }
      expect(served.server.counters.refusedResumptions).toBe(3)
      expect((await mine.get(events[0]!.id)).status).toBe(200)
    })

    it('pending server requests live on the session: re-emitted on every plain GET, never on a resumption', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const call = await client.call('ask', {count: 2})
      const asked = await readEvents(call, 3)
      expect(messagesOf(asked.events).map((message) => message['id'])).toEqual(['srv-1', 'srv-2'])
      const resumption = await readEvents(await client.get(asked.events[0]!.id), 2, 300)
      expect(messagesOf(resumption.events).map((message) => message['id'])).toEqual(['srv-1', 'srv-2'])
      expect(served.server.counters.reemittedRequests).toBe(0)
      const attached = await readEvents(await client.get(), 2)
      expect(messagesOf(attached.events).map((message) => message['id'])).toEqual(['srv-1', 'srv-2'])
      expect(served.server.counters.reemittedRequests).toBe(2)
      expect(served.server.pendingRequests()).toMatchObject([
        {sessionId: 'session-1', id: 'srv-1', method: 'sampling/createMessage', streamId: 'p1'},
        {sessionId: 'session-1', id: 'srv-2', method: 'sampling/createMessage', streamId: 'p1'},
      ])
      await client.answer('srv-1', 'a')
      await client.answer('srv-2', 'b')
      const resumed = await readEvents(await client.get(asked.events[2]!.id))
      expect(messagesOf(resumed.events).at(-1)).toMatchObject({result: {content: [{text: 'a, b'}]}})
      expect(served.server.pendingRequests()).toEqual([])
    })

    it("pendingOnAttach: 'cancel' cancels each pending request on the new stream; the tool answers with an error", async () => {
      const served = await serve(backend, {pendingOnAttach: 'cancel'})
      const client = await rawClient(served)
      const asked = await readEvents(await client.call('ask'), 2)
      const attached = await readEvents(await client.get(), 1)
      expect(messagesOf(attached.events)).toEqual([
        {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: {requestId: 'srv-1', reason: 'the stream that carried it was lost'},
        },
      ])
      const result = await readEvents(await client.get(asked.events[1]!.id))
      expect(messagesOf(result.events).at(-1)).toMatchObject({
        result: {isError: true, content: [{text: 'error: Request cancelled: the stream that carried it was lost'}]},
      })
      expect(served.server.counters).toMatchObject({cancelledRequests: 1, reemittedRequests: 0})
    })

    it('sessions outlive streams: with its streams expired the session goes on, their cursors are refused, pending requests still come back', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const asked = await readEvents(await client.call('ask'), 2)
      served.server.faults.expireStreams()
      expect(served.server.session().streams).toEqual([])
      expect((await client.get(asked.events[0]!.id)).status).toBe(422)
      const attached = await readEvents(await client.get(), 1)
      expect(messagesOf(attached.events)).toMatchObject([{id: 'srv-1'}])
      expect((await client.post({jsonrpc: '2.0', id: 50, method: 'ping'})).status).toBe(200)
    })

    it('sessionIdleMs garbage-collects an idle session (404), and only that one', async () => {
      const served = await serve(backend, {sessionIdleMs: 80})
      const idle = await rawClient(served)
      const busy = await rawClient(served)
      for (let turn = 0; turn < 4; turn++) {
        await new Promise((resolve) => setTimeout(resolve, 30))
        expect((await busy.post({jsonrpc: '2.0', id: 100 + turn, method: 'ping'})).status).toBe(200)
      }
      expect((await idle.post({jsonrpc: '2.0', id: 1, method: 'ping'})).status).toBe(404)
      expect(served.server.sessions().map((session) => session.id)).toEqual([busy.sessionId])
    })
  })

  describe('tools', () => {
    it('increment: a side effect counted across sessions; executions per tool', async () => {
      const served = await serve(backend, {json: true})
      const texts: unknown[] = []
      for (const client of [await rawClient(served), await rawClient(served)]) {
        texts.push(
          ((await (await client.call('increment')).json()) as {result: {content: {text: string}[]}}).result.content[0]!
            .text,
        )
      }
      expect(texts).toEqual(['count: 1', 'count: 2'])
      expect(served.server.executions).toEqual({increment: 2})
    })

    it('slow: N progress notifications spread over time, then the result', async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const started = Date.now()
      const {events} = await readEvents(await client.call('slow', {steps: 3, delayMs: 40}))
      expect(Date.now() - started).toBeGreaterThanOrEqual(110)
      expect(progressOf(messagesOf(events))).toEqual([1, 2, 3])
    })

    it("ask kind 'elicitation' sends elicitation/create and returns the answer", async () => {
      const served = await serve(backend)
      const client = await rawClient(served)
      const call = await client.call('ask', {kind: 'elicitation'})
      const asked = await readEvents(call, 2)
      expect(messagesOf(asked.events)).toMatchObject([
        {id: 'srv-1', method: 'elicitation/create', params: {message: 'question 1'}},
      ])
      await client.post({jsonrpc: '2.0', id: 'srv-1', result: {action: 'accept', content: {answer: 'blue'}}})
      const rest = await readEvents(await client.get(asked.events[1]!.id))
      expect(messagesOf(rest.events).at(-1)).toMatchObject({result: {content: [{text: 'blue'}]}})
      expect(served.server.answers.get('srv-1')).toHaveLength(1)
    })

    it('tools/list names the four built-in tools', async () => {
      const served = await serve(backend, {json: true})
      const answer = (await (
        await (await rawClient(served)).post({jsonrpc: '2.0', id: 7, method: 'tools/list'})
      ).json()) as {result: {tools: {name: string}[]}}
      expect(answer.result.tools.map((tool) => tool.name)).toEqual(['echo', 'increment', 'slow', 'ask'])
    })
  })

  it('instrumentation: every request logged with both resumption headers and its status', async () => {
    const served = await serve(backend)
    const client = await rawClient(served)
    await client.get('p7_1')
    await client.post({jsonrpc: '2.0', method: 'notifications/initialized'})
    expect(served.server.log).toEqual([
      {
        method: 'POST',
        sessionId: undefined,
        lastEventId: undefined,
        protocolVersion: undefined,
        rpcMethod: 'initialize',
        status: 200,
      },
      {
        method: 'GET',
        sessionId: 'session-1',
        lastEventId: 'p7_1',
        protocolVersion: '2025-11-25',
        rpcMethod: undefined,
        status: 422,
      },
      {
        method: 'POST',
        sessionId: 'session-1',
        lastEventId: undefined,
        protocolVersion: '2025-11-25',
        rpcMethod: 'notifications/initialized',
        status: 202,
      },
    ])
    expect(served.server.requests('POST', 'initialize')).toHaveLength(1)
  })
})

describe('reference server options', () => {
  it.each([
    [{protocolVersion: '2024-11-05'}, 'options.protocolVersion'],
    [{retryMs: -1}, 'options.retryMs'],
    [{sessionIdleMs: 0}, 'options.sessionIdleMs'],
    [{mode: 'lenient' as never}, 'options.mode'],
  ])('%o is a TypeError naming the option', (options, name) => {
    expect(() => createReferenceServer(options)).toThrow(TypeError)
    expect(() => createReferenceServer(options)).toThrow(name)
  })
})
