/**
 * When a stream's cursor is written to the store, and when not (src/streams/open-streams.ts,
 * docs/design.md#what-is-persisted): before what they cover is delivered, put off when nothing is, flushed when a
 * connection ends, kept by close().
 */
import {describe, expect, it} from 'vitest'
import {connect, interceptGets, storedSession, until, url, useMock, warningsDuring} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {quiet} from '../fixtures/timing.ts'
import {answerToolCalls, encoder, frame, result, sse, tap} from '../fixtures/wire.ts'

const note = (n: number): object => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: {level: 'info', data: n},
})
const progress = (token: unknown, n: number): object => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: {progressToken: token, progress: n},
})

/** An SSE response the test writes to, event by event, and may end. */
function pushable(): {response: Response; push: (text: string) => void; end: () => void} {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({start: (opened) => void (controller = opened)})
  return {
    response: new Response(body, {headers: {'content-type': 'text/event-stream'}}),
    push: (text) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
  }
}

/** The cursors written for `stream` ('standalone', or 'request:' for any call's), in order. */
function cursorsWritten(store: RecordingStore, stream: string): (string | undefined)[] {
  return store.writes
    .filter((write) => write.key.includes(`#stream:${stream}`))
    .map((write) => (write.op === 'delete' ? undefined : (write.value as {lastEventId: string}).lastEventId))
}

describe('what is never written', () => {
  it('a server without sessions: a call whose stream has event IDs writes nothing of it to the store', async () => {
    useMock({sessions: false})
    const store = new RecordingStore()
    const {client} = await connect({store})
    await client.callTool({name: 'slow', arguments: {steps: 2}}, undefined, {onprogress: () => {}})
    await client.close()
    expect(store.writes.filter((write) => write.key.includes('#stream:'))).toEqual([])
  })

  it('an event ID too long to send back: neither a cursor nor the deletion of one is written', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    interceptGets(mock, () => sse([frame('x'.repeat(5000), note(1))], 'open'))
    const {client, transport} = await connect({store})
    const delivered = tap(transport)
    await until(() => delivered.length === 1)
    await quiet(300)
    expect(cursorsWritten(store, 'standalone')).toEqual([])
    await client.close()
  })
})

describe('a connection that ends', () => {
  it('with no write put off writes nothing more: its cursor is in the store already', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const gets = interceptGets(mock, (get) =>
      get.lastEventId === undefined ? sse([frame('e1', note(1))]) : sse([], 'open'),
    )
    const {client} = await connect({store})
    await until(() => gets.length === 2)
    await quiet(300)
    expect(cursorsWritten(store, 'standalone')).toEqual(['e1'])
    await client.close()
  })

  it('with a write put off writes it at once, and a write put off on the next connection comes in its time', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const first = pushable()
    const second = pushable()
    interceptGets(mock, (get) => (get.lastEventId === undefined ? first.response : second.response))
    const {client} = await connect({store})
    first.push(frame('e1', note(1)))
    await until(() => cursorsWritten(store, 'standalone').length === 1)
    // An ID-only event delivers nothing: its write is put off.
    first.push(frame('e2'))
    await quiet(20)
    expect(cursorsWritten(store, 'standalone')).toEqual(['e1'])
    first.end()
    await until(() => cursorsWritten(store, 'standalone').length === 2)
    second.push(frame('e3'))
    await until(() => cursorsWritten(store, 'standalone').length === 3, 1000)
    expect(cursorsWritten(store, 'standalone')).toEqual(['e1', 'e2', 'e3'])
    await client.close()
  })
})

describe('writes put off on two streams', () => {
  it("the end of one stream leaves the other's write to come in its time", async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const standalone = pushable()
    const call = pushable()
    interceptGets(mock, () => standalone.response)
    let id: unknown
    let token: unknown
    answerToolCalls((callId, progressToken) => {
      ;[id, token] = [callId, progressToken]
      return call.response
    })
    const {client} = await connect({store})
    const seen: number[] = []
    const answered = client.callTool({name: 'echo'}, undefined, {onprogress: ({progress: n}) => seen.push(n)})
    await until(() => token !== undefined)
    standalone.push(frame('e1', note(1)))
    call.push(frame('p1', progress(token, 1)))
    await until(
      () => cursorsWritten(store, 'standalone').length === 1 && cursorsWritten(store, 'request:').length === 1,
    )
    // ID-only events deliver nothing: their writes are put off.
    standalone.push(frame('e2'))
    call.push(frame('p2'))
    await quiet(20)
    // The call is answered before the writes put off are due: its own goes (the answer leaves nothing to resume).
    call.push(frame('p3', result(id as string)))
    await answered
    await until(() => cursorsWritten(store, 'standalone').length === 2, 1000)
    expect(cursorsWritten(store, 'standalone')).toEqual(['e1', 'e2'])
    await client.close()
  })
})

describe('close()', () => {
  it('writes nothing more for a stream whose cursor is stored already, and calls no onRequestStreamEnd', async () => {
    useMock()
    const store = new RecordingStore()
    let token: unknown
    answerToolCalls((_id, progressToken) => {
      token = progressToken
      return sse([frame('p1', progress(progressToken, 1))], 'open')
    })
    const {transport} = await connect({store})
    let ended = 0
    const seen = tap(transport)
    await transport.send(
      {jsonrpc: '2.0', id: 'call', method: 'tools/call', params: {name: 'echo', _meta: {progressToken: 'call'}}},
      {onRequestStreamEnd: () => ended++},
    )
    await until(() => token !== undefined && seen.length > 0)
    expect(cursorsWritten(store, 'request:')).toEqual(['p1'])
    await transport.close()
    expect(cursorsWritten(store, 'request:')).toEqual(['p1'])
    expect(ended).toBe(0)
  })
})

describe('calls whose streams are over', () => {
  it.each([
    ['an event stream', (id: string) => sse([frame('p1', result(id))])],
    ['JSON', (id: string) => Response.json(result(id))],
  ])(
    'answered with %s, keep no listener on the requestSignal they shared: a dozen raise no MaxListenersExceededWarning',
    async (_how, answer) => {
      const warnings = await warningsDuring(async () => {
        useMock()
        answerToolCalls((id) => answer(id as string))
        const {transport} = await connect()
        const seen = tap(transport)
        const shared = new AbortController()
        for (let call = 0; call < 12; call++) {
          await transport.send(
            {jsonrpc: '2.0', id: `call-${call}`, method: 'tools/call', params: {name: 'echo'}},
            {requestSignal: shared.signal},
          )
          await until(() => seen.length === call + 1)
        }
        await transport.close()
      })
      expect(warnings).toEqual([])
    },
  )
})

describe('a new session', () => {
  it("stores its standalone stream's cursor before the first delivery, though the old session's stream was stored", async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const second = pushable()
    const gets = interceptGets(mock, (_get, index) =>
      index === 0 ? sse([frame('a1', note(1))], 'open') : second.response,
    )
    const {client, transport} = await connect({store})
    await until(() => cursorsWritten(store, 'standalone').length === 1)
    await transport.terminateSession()
    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    const atDelivery: (string | undefined)[][] = []
    const deliver = transport.onmessage
    transport.onmessage = (message, extra) => {
      atDelivery.push(cursorsWritten(store, 'standalone'))
      deliver?.(message, extra)
    }
    await until(() => gets.length === 2)
    second.push(frame('b1', note(2)))
    await until(() => atDelivery.length === 1)
    expect(atDelivery).toEqual([['a1', undefined, 'b1']])
    await client.close()
  })
})

describe('a stream a previous process stored', () => {
  it('has its record deleted when it ends without delivering anything: the server offers no stream to resume', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    await storedSession(store)
    const key = `mcp-resumable-http:${url}#stream:request:17`
    await store.set(key, {
      sessionId: 'session-1',
      lastEventId: 'kept-17',
      call: {method: 'tools/call', name: 'echo', clientId: 9},
    })
    const gets = interceptGets(mock, (get) =>
      get.lastEventId === 'kept-17' ? new Response(null, {status: 405}) : undefined,
    )
    const {client} = await connect({store})
    await until(() => gets.some((get) => get.lastEventId === 'kept-17'))
    await until(() => !store.keys.has(key), 1000)
    await client.close()
  })
})

describe('onRequestStreamEnd', () => {
  it('is called once when the server ends the stream of the call, not by close()', async () => {
    useMock()
    answerToolCalls((id) => sse([frame('p1', result(id))]))
    const {transport} = await connect()
    const seen = tap(transport)
    let ended = 0
    await transport.send(
      {jsonrpc: '2.0', id: 'call', method: 'tools/call', params: {name: 'echo'}},
      {onRequestStreamEnd: () => ended++},
    )
    await until(() => seen.length === 1)
    await until(() => ended === 1)
    await transport.close()
    expect(ended).toBe(1)
  })
})

describe('a standalone stream opened again in the same session', () => {
  it('starts with no record: an empty cursor of the new stream writes nothing, since the ended one took its record along', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const listChanged = {jsonrpc: '2.0', method: 'notifications/tools/list_changed'}
    const gets = interceptGets(mock, (get, index) => {
      // The first stream brings a cursor and closes; its resume is refused as over (204): that stream ends.
      if (index === 0) return sse([frame('g1', listChanged)])
      if (get.lastEventId === 'g1') return new Response(null, {status: 204})
      // The fresh one, attached for the session's server requests, sends an empty ID: not resumable.
      return sse([frame('', undefined)], 'open')
    })
    // A call whose stream breaks before any event ID: the standalone stream is attached again, without a cursor.
    answerToolCalls(() => sse([], 'error'))
    const {client} = await connect({store, reconnect: {minDelayMs: 1, maxDelayMs: 5}})
    await until(() => gets.length === 2)
    await until(() => cursorsWritten(store, 'standalone').length === 2)
    await client.callTool({name: 'echo'}).catch(() => 'outcome unknown')
    await until(() => gets.length === 3)
    await quiet(400)
    expect(cursorsWritten(store, 'standalone')).toEqual(['g1', undefined])
    await client.close()
  })
})
