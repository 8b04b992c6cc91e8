/**
 * Server requests a tool is still waiting on, which the server re-emits only to a stream attached without
 * `Last-Event-ID` (docs/design.md#what-a-server-must-do): those of a call whose answer can no longer arrive (the
 * standalone stream re-attaches that way at once, even from a healthy connection), and those a killed process
 * left (its answers sent again by the next one, and the streams it never recorded covered by a re-attach without
 * cursor once the replay is read). Each is the fault the soak's trace found, placed exactly (docs/failures.md).
 */
import {http} from 'msw'
import {describe, expect, it} from 'vitest'
import {MemoryStore} from '../../src/index.ts'
import {connect, eventsOf, interceptGets, network, until, url, useMock} from '../fixtures/harness.ts'
import {frame, sse} from '../fixtures/wire.ts'

describe('server requests of a call whose stream was given up', () => {
  it('are re-emitted to the standalone stream, which re-attaches without cursor at once though its connection was healthy, and answered once', async () => {
    const server = useMock()
    const s = await connect()
    await until(
      () => server.sessions()[0]?.streams.some((stream) => stream.kind === 'standalone' && stream.connected) === true,
    )
    // The call's POST is cut before its first event ID: nothing can resume it, and its tool asks meanwhile.
    server.faults.cutNext({afterBytes: 1, how: 'error', on: 'POST'})
    const call = s.client.callTool({name: 'ask', arguments: {count: 2, kind: 'sampling'}})
    await expect(call).rejects.toMatchObject({data: {code: 'outcome-unknown'}})

    await until(() => server.pendingRequests().length === 0)
    expect(s.sampled.sort()).toEqual(['question 1', 'question 2'])
    expect([...server.answers.values()].map((answers) => answers.length)).toEqual([1, 1])
    expect(eventsOf(s.events, 'reconnect')).toMatchObject([
      {stream: 'standalone', branch: 'session-resumption', headers: {'last-event-id': undefined}},
    ])
    expect(server.requests('GET').at(-1)).toMatchObject({lastEventId: undefined, status: 200})
    expect(server.counters.reemittedRequests).toBe(2)
    expect(server.executions).toEqual({ask: 1})
    await s.client.close()
  })

  it('are re-emitted when the POST failed after the server took it, before its stream could be read', async () => {
    const server = useMock()
    const s = await connect()
    await until(
      () => server.sessions()[0]?.streams.some((stream) => stream.kind === 'standalone' && stream.connected) === true,
    )
    // The server takes the call and its tool runs, but the answer never reaches the client (a reset connection).
    network.use(
      http.post(url, async ({request}) => {
        if (!(await request.clone().text()).includes('"tools/call"')) return undefined
        void server.handle(request)
        return Response.error()
      }),
    )
    const call = s.client.callTool({name: 'ask', arguments: {count: 2, kind: 'sampling'}})
    await expect(call).rejects.toMatchObject({code: 'outcome-unknown'})

    await until(() => server.pendingRequests().length === 0)
    expect(s.sampled.sort()).toEqual(['question 1', 'question 2'])
    expect(server.counters.reemittedRequests).toBe(2)
    expect(eventsOf(s.events, 'reconnect')).toMatchObject([
      {stream: 'standalone', branch: 'session-resumption', headers: {'last-event-id': undefined}},
    ])
    expect(server.executions).toEqual({ask: 1})
    await s.client.close()
  })
})

describe('an answer to a server request that the server never took', () => {
  it('is sent again by the next process, from the store, without handing the request to its Client again', async () => {
    const server = useMock()
    const store = new MemoryStore()
    // The standalone stream holds a cursor, so the next process resumes it: nothing is re-emitted there.
    const gets = interceptGets(server, (get, index) => {
      if (index === 0) return sse([frame('g1', {jsonrpc: '2.0', method: 'notifications/tools/list_changed'})], 'open')
      return get.lastEventId === 'g1' ? sse([], 'open') : undefined
    })
    // The answer's POST never arrives: the process dies while it is on its way.
    let answerPosted = (): void => {}
    const posted = new Promise<void>((resolve) => (answerPosted = resolve))
    let died = false
    network.use(
      http.post(url, async ({request}) => {
        if (died || !(await request.clone().text()).includes('"answer 1"')) return undefined
        answerPosted()
        return new Promise<never>(() => {})
      }),
    )
    const before = await connect({store})
    const call = before.client
      .callTool({name: 'ask', arguments: {count: 1, kind: 'sampling'}})
      .catch((error: unknown) => error)
    await posted
    died = true
    await before.transport.close()
    await call
    expect(server.answers.size).toBe(0)

    const after = await connect({store})
    await until(() => server.pendingRequests().length === 0)
    // No stream was attached without Last-Event-ID after the first: the server re-emitted nothing.
    expect(gets.filter((get) => get.lastEventId === undefined)).toHaveLength(1)
    expect(server.counters.reemittedRequests).toBe(0)
    expect(before.sampled).toEqual(['question 1'])
    expect(after.sampled).toEqual([])
    expect([...server.answers.values()].map((answers) => answers.map((answer) => answer['result']))).toMatchObject([
      [{content: {text: 'answer 1'}}],
    ])
    expect(server.executions).toEqual({ask: 1})
    // Taken by the server: kept, marked taken, only to recognise a replayed copy.
    await after.client.close()
    const kept = (await store.list('')).filter((key) => key.includes('#request:'))
    expect(await Promise.all(kept.map((key) => store.get(key)))).toMatchObject([{taken: true}])
  })
})

describe('a server request the previous process answered', () => {
  it('is neither handed to the next Client nor answered again when a resumed stream replays a copy of it', async () => {
    const server = useMock()
    const store = new MemoryStore()
    const ask = {jsonrpc: '2.0', id: 'srv-1', method: 'sampling/createMessage', params: {messages: [], maxTokens: 1}}
    // The standalone stream brings the request; after the cursor the next process resumes from, a copy of it that
    // the server wrote on that stream before it took the answer.
    const gets = interceptGets(server, (get) =>
      get.lastEventId === undefined ? sse([frame('g1', ask)], 'open') : sse([frame('g2', ask)], 'open'),
    )
    const answers: unknown[] = []
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: unknown; result?: unknown}
        if (body.result === undefined) return undefined
        answers.push(body.id)
        return new Response(null, {status: 202})
      }),
    )
    const before = await connect({store})
    await until(() => answers.length === 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await before.transport.close()

    const after = await connect({store})
    await until(() => gets.some((get) => get.lastEventId === 'g1'))
    await until(() => eventsOf(after.events, 'duplicate-dropped').length === 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(before.sampled).toHaveLength(1)
    expect(after.sampled).toEqual([])
    expect(answers).toEqual(['srv-1'])
    expect(eventsOf(after.events, 'cached-answer-resent')).toEqual([])
    await after.client.close()
  })
})

describe('a response stream a killed process never recorded', () => {
  it('leaves no server request behind: the next process resumes the standalone stream from its cursor, then re-attaches it without', async () => {
    const server = useMock()
    const store = new MemoryStore()
    const gets = interceptGets(server, (get, index) => {
      if (index === 0) return sse([frame('g1', {jsonrpc: '2.0', method: 'notifications/tools/list_changed'})], 'open')
      return get.lastEventId === 'g1' ? sse([], 'open') : undefined
    })
    // The server takes the call and its tool asks; the process dies before its stream brought even the priming event.
    let died = false
    network.use(
      http.post(url, async ({request}) => {
        if (died || !(await request.clone().text()).includes('"tools/call"')) return undefined
        void server.handle(request)
        return sse([], 'open')
      }),
    )
    const before = await connect({store})
    const call = before.client
      .callTool({name: 'ask', arguments: {count: 1, kind: 'sampling'}})
      .catch((error: unknown) => error)
    await until(() => server.pendingRequests().length === 1)
    died = true
    await before.transport.close()
    await call

    const after = await connect({store})
    await until(() => server.pendingRequests().length === 0)
    expect(before.sampled).toEqual([])
    expect(after.sampled).toEqual(['question 1'])
    expect(gets.map((get) => get.lastEventId)).toEqual([undefined, 'g1', undefined])
    expect(eventsOf(after.events, 'reconnect').map((event) => [event.stream, event.branch])).toEqual([
      ['standalone', 'stream-resumption'],
      ['standalone', 'session-resumption'],
    ])
    expect(server.executions).toEqual({ask: 1})
    await after.client.close()
  })
})
