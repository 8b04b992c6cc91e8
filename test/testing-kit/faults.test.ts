/**
 * Every fault of the reference server, armed at run time and proven over both adapters (msw and real sockets).
 */
import {describe, expect, it} from 'vitest'
import {backends, errorOf, messagesOf, rawClient, readEvents, serve} from '../fixtures/kit.ts'

describe.each(backends)('faults over %s', (backend) => {
  const setup = async () => {
    const served = await serve(backend)
    return {served, server: served.server, client: await rawClient(served)}
  }

  it('cutNext error: the connection drops after N events; the tool goes on and a resumption gets the rest', async () => {
    const {server, client} = await setup()
    server.faults.cutNext({after: 2, how: 'error'})
    const cut = await readEvents(await client.call('slow', {steps: 3, delayMs: 10}))
    expect(cut.ending).toBe('error')
    expect(cut.events).toHaveLength(2)
    expect(server.stream('p1')?.connected).toBe(false)
    const rest = await readEvents(await client.get(cut.events[1]!.id))
    expect(messagesOf(rest.events).at(-1)).toMatchObject({result: {content: [{text: 'done after 3 steps'}]}})
    expect(server.executions).toEqual({slow: 1})
  })

  it('cutNext close with retryMs: the server ends the response after N events, the last one carrying retry (polling)', async () => {
    const {server, client} = await setup()
    server.faults.cutNext({after: 1, how: 'close', retryMs: 1500})
    const {events, ending} = await readEvents(await client.call('slow', {steps: 2, delayMs: 10}))
    expect(ending).toBe('closed')
    expect(events).toEqual([{id: 'p1_1', data: '', retry: 1500}])
  })

  it('cutNext afterBytes: the connection breaks inside an event; the partial event is lost, a resumption brings it whole', async () => {
    const {server, client} = await setup()
    // The priming event (id: p1_1, empty data) is 18 bytes: 20 end inside the next event's ID.
    server.faults.cutNext({afterBytes: 20, how: 'error'})
    const cut = await readEvents(await client.call('slow', {steps: 2, delayMs: 10}))
    expect([cut.ending, cut.events.map((event) => event.id)]).toEqual(['error', ['p1_1']])
    const rest = await readEvents(await client.get('p1_1'))
    expect(messagesOf(rest.events).map((message) => message['method'] ?? 'result')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'result',
    ])
    expect(server.executions).toEqual({slow: 1})
  })

  it('cutNext on: only a connection of that method takes the fault', async () => {
    const {server, client} = await setup()
    server.faults.cutNext({after: 1, how: 'close', on: 'GET'})
    expect((await readEvents(await client.call('echo'))).events).toHaveLength(2)
    expect(server.faults.armed.cuts).toHaveLength(1)
    await client.call('ask')
    const {events, ending} = await readEvents(await client.get(), 5, 1000)
    expect([messagesOf(events).map((message) => message['id']), ending]).toEqual([['srv-1'], 'closed'])
    expect(server.faults.armed.cuts).toEqual([])
  })

  it('failNext: 404 on the next POST (of a JSON-RPC method, when given), 409 on the next GET; each taken once', async () => {
    const {server, client} = await setup()
    server.faults.failNext({method: 'POST', status: 404, rpcMethod: 'tools/call'})
    server.faults.failNext({method: 'GET', status: 409})
    expect((await client.post({jsonrpc: '2.0', id: 1, method: 'ping'})).status).toBe(200)
    const refused = await client.call('echo')
    expect([refused.status, await errorOf(refused)]).toEqual([404, {code: -32000, message: 'Injected fault: HTTP 404'}])
    expect((await client.get()).status).toBe(409)
    expect((await client.call('echo')).status).toBe(200)
    expect((await client.get()).status).toBe(200)
    expect(server.executions).toEqual({echo: 1})
  })

  it('delayNext: the next matching request is held for ms', async () => {
    const {server, client} = await setup()
    server.faults.delayNext({ms: 120, method: 'POST'})
    const started = Date.now()
    await client.post({jsonrpc: '2.0', id: 1, method: 'ping'})
    expect(Date.now() - started).toBeGreaterThanOrEqual(110)
    const again = Date.now()
    await client.post({jsonrpc: '2.0', id: 2, method: 'ping'})
    expect(Date.now() - again).toBeLessThan(100)
  })

  it("corruptNext 'sse': the answer is no SSE at all and the tool never ran; 'json': an event whose data is not JSON, then the real ones", async () => {
    const {server, client} = await setup()
    server.faults.corruptNext({kind: 'sse'})
    const broken = await client.call('increment')
    expect(broken.headers.get('content-type')).toBe('text/event-stream')
    expect(await readEvents(broken)).toEqual({events: [], ending: 'closed'})
    expect(server.executions).toEqual({})
    server.faults.corruptNext({kind: 'json'})
    const {events} = await readEvents(await client.call('increment'))
    expect(events.map((event) => event.data)).toEqual(['', '{not json', expect.stringContaining('count: 1')])
    expect(server.executions).toEqual({increment: 1})
  })

  it('expireSession: 404 from then on; its live streams end, or go on with closeConnections: false', async () => {
    const {server, client: ended, served} = await setup()
    const kept = await rawClient(served)
    const endedStream = await ended.get()
    const keptStream = await kept.call('slow', {steps: 2, delayMs: 60})
    server.faults.expireSession('session-1')
    server.faults.expireSession('session-2', {closeConnections: false})
    expect(await readEvents(endedStream)).toEqual({events: [], ending: 'closed'})
    expect(messagesOf((await readEvents(keptStream)).events).at(-1)).toMatchObject({result: {}})
    expect([(await ended.get()).status, (await kept.call('echo')).status]).toEqual([404, 404])
  })

  it('restart: every session is gone (404), live connections drop, IDs are not reused, executions are kept', async () => {
    const {server, client, served} = await setup()
    await readEvents(await client.call('echo'))
    const live = await client.get()
    server.faults.restart()
    expect((await readEvents(live)).ending).toBe('error')
    expect((await client.call('echo')).status).toBe(404)
    expect(server.sessions()).toEqual([])
    const again = await rawClient(served)
    expect(again.sessionId).toBe('session-2')
    expect((await readEvents(await again.call('echo'))).events[0]!.id).toBe('p3_1')
    expect(server.executions).toEqual({echo: 2})
  })

  it('disconnect: ends live connections now, as a drop (error) or a close', async () => {
    const {server, client} = await setup()
    const dropped = await client.get()
    const closed = await client.get()
    server.faults.disconnect({stream: 'g2', how: 'close'})
    server.faults.disconnect()
    expect([(await readEvents(closed)).ending, (await readEvents(dropped)).ending]).toEqual(['closed', 'error'])
    expect(server.session().streams.map((stream) => stream.connected)).toEqual([false, false])
  })

  it('clear disarms every one-shot fault; armed lists them in order', async () => {
    const {server, client} = await setup()
    server.faults.failNext({method: 'POST', status: 500})
    server.faults.delayNext({ms: 5000})
    server.faults.cutNext({after: 1, how: 'error'})
    server.faults.corruptNext({kind: 'sse'})
    expect(server.faults.armed).toEqual({
      cuts: [{after: 1, how: 'error'}],
      failures: [{method: 'POST', status: 500}],
      delays: [{ms: 5000}],
      corruptions: [{kind: 'sse'}],
    })
    server.faults.clear()
    expect((await readEvents(await client.call('echo'))).events).toHaveLength(2)
    expect(() => server.faults.cutNext({after: 0, how: 'error'})).toThrow(TypeError)
  })
})
