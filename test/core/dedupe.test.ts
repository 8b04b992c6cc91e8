/**
 * De-duplication (docs/design.md#de-duplication): an event ID already delivered on its stream, a response already
 * delivered, and a server request already delivered never reach the Client twice; a server request that comes back
 * after it was answered gets the cached answer; the memory this takes is bounded.
 */
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema, type JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import fc from 'fast-check'
import {http} from 'msw'
import {describe, expect, it} from 'vitest'
import {MemoryStore, type ResumableHTTPClientTransportOptions} from '../../src/index.ts'
import type {ReferenceServer} from '../../src/testing/index.ts'
import {connect, dieMidCall, eventsOf, network, until, url, useMock} from '../fixtures/harness.ts'
import {answerToolCalls, encoder, frame, result, sse, tap} from '../fixtures/wire.ts'

/** A notification told apart by `n`. */
const note = (n: number): object => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: {level: 'info', data: `n${n}`},
})

const samplingRequest = (id: string): object => ({
  jsonrpc: '2.0',
  id,
  method: 'sampling/createMessage',
  params: {messages: [{role: 'user', content: {type: 'text', text: id}}], maxTokens: 10},
})

/** One GET connection the test writes to while it is open. */
interface Channel {
  push: (...frames: string[]) => void
  close: () => void
}

interface Gets {
  lastEventIds: (string | undefined)[]
  channels: Channel[]
}

/** Answers every GET with a fresh channel, except those `toMock` hands to the mock server. */
function serveGets(mock: ReferenceServer, toMock: (index: number) => boolean = () => false): Gets {
  const gets: Gets = {lastEventIds: [], channels: []}
  network.use(
    http.get(url, ({request}) => {
      gets.lastEventIds.push(request.headers.get('last-event-id') ?? undefined)
      if (toMock(gets.lastEventIds.length - 1)) return mock.handle(request)
      let controller!: ReadableStreamDefaultController<Uint8Array>
      const body = new ReadableStream<Uint8Array>({start: (c) => (controller = c)})
      gets.channels.push({
        push: (...frames) => controller.enqueue(encoder.encode(frames.join(''))),
        close: () => controller.close(),
      })
      return new Response(body, {headers: {'content-type': 'text/event-stream'}})
    }),
  )
  return gets
}

/** How many times notification `n` was delivered. */
const countOf = (delivered: JSONRPCMessage[], n: number): number =>
  delivered.filter((message) => JSON.stringify(message) === JSON.stringify(note(n))).length

/** Replaces the Client's sampling handler by one that waits for `release()`. */
function gatedSampling(client: Client): {calls: () => number; release: () => void} {
  let calls = 0
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    calls++
    await gate
    return {model: 'm', role: 'assistant', content: {type: 'text', text: `answer ${calls}`}}
  })
  return {calls: () => calls, release}
}

async function setup(toMock?: (index: number) => boolean, options: ResumableHTTPClientTransportOptions = {}) {
  const mock = useMock()
  const gets = serveGets(mock, toMock)
  const harness = await connect(options)
  await until(() => gets.lastEventIds.length === 1)
  return {...harness, mock, gets, delivered: tap(harness.transport)}
}

const answersTo = (mock: ReferenceServer, id: string): string[] =>
  (mock.answers.get(id) ?? []).map((answer) => JSON.stringify(answer))

describe('de-duplication', () => {
  it('an event ID already delivered on the stream is dropped, within a connection and across a resume', async () => {
    const s = await setup()
    s.gets.channels[0]!.push(frame('e1', note(1)), frame('e2', note(2)), frame('e1', note(1)))
    s.gets.channels[0]!.close()
    await until(() => s.gets.channels.length === 2)
    // The server replays from its start instead of after e2.
    s.gets.channels[1]!.push(frame('e1', note(1)), frame('e2', note(2)), frame('e3', note(3)))
    await until(() => countOf(s.delivered, 3) === 1)

    expect(s.gets.lastEventIds).toEqual([undefined, 'e2'])
    expect([1, 2, 3].map((n) => countOf(s.delivered, n))).toEqual([1, 1, 1])
    expect(eventsOf(s.events, 'duplicate-dropped')).toEqual(
      ['e1', 'e1', 'e2'].map((id) => ({type: 'duplicate-dropped', what: 'event', id})),
    )
    expect(s.transport.metrics.duplicatesDropped).toBe(3)
    await s.client.close()
  })

  it('a JSON-RPC response whose ID was already delivered is dropped, under a new event ID on another stream', async () => {
    const s = await setup()
    await s.client.callTool({name: 'echo', arguments: {}})
    const first = s.delivered.find((message) => 'result' in message)!
    // The next call's stream carries the first call's response again before its own.
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id: number; method: string}
        if (body.method !== 'tools/call') return undefined
        const own = {jsonrpc: '2.0', id: body.id, result: {content: [{type: 'text', text: 'own'}]}}
        return new Response(frame('b_1', first) + frame('b_2', own), {headers: {'content-type': 'text/event-stream'}})
      }),
    )
    const result = await s.client.callTool({name: 'echo', arguments: {}})

    expect(result.content).toEqual([{type: 'text', text: 'own'}])
    expect(s.delivered.filter((message) => JSON.stringify(message) === JSON.stringify(first))).toHaveLength(1)
    expect(eventsOf(s.events, 'duplicate-dropped')).toEqual([
      {type: 'duplicate-dropped', what: 'response', id: (first as {id: number}).id},
    ])
    // Delivered twice, the SDK Client would have reported a response for an unknown ID.
    expect(s.errors).toEqual([])
    await s.client.close()
  })

  it('a replayed server request is not handed over while its answer is pending; once the server took the answer, a replayed copy gets nothing', async () => {
    const s = await setup()
    const sampling = gatedSampling(s.client)
    s.gets.channels[0]!.push(frame('s1', samplingRequest('srv-1')))
    await until(() => sampling.calls() === 1)
    s.gets.channels[0]!.close()
    await until(() => s.gets.channels.length === 2)
    // The server sends it again under a new event ID while the Client is still answering.
    s.gets.channels[1]!.push(frame('s2', samplingRequest('srv-1')))
    await until(() => eventsOf(s.events, 'duplicate-dropped').length === 1)
    expect(answersTo(s.mock, 'srv-1')).toEqual([])

    sampling.release()
    await until(() => answersTo(s.mock, 'srv-1').length === 1)
    // On a stream resumed after the server took the answer (its 202 read): a replay brings only what the server
    // wrote before it took the answer.
    await new Promise((resolve) => setTimeout(resolve, 20))
    s.gets.channels[1]!.close()
    await until(() => s.gets.channels.length === 3)
    s.gets.channels[2]!.push(frame('s3', samplingRequest('srv-1')))
    await until(() => eventsOf(s.events, 'duplicate-dropped').length === 2)
    await new Promise((resolve) => setTimeout(resolve, 20))

    expect(sampling.calls()).toBe(1)
    expect(answersTo(s.mock, 'srv-1')).toHaveLength(1)
    expect(eventsOf(s.events, 'cached-answer-resent')).toEqual([])
    expect(s.gets.lastEventIds).toEqual([undefined, 's1', 's2'])
    await s.client.close()
  })

  it('a server request re-emitted on a stream attached without Last-Event-ID is not handed over again; once answered, the cached answer is re-sent', async () => {
    const s = await setup()
    const sampling = gatedSampling(s.client)
    const tool = s.client.callTool({name: 'ask', arguments: {count: 1}})
    await until(() => sampling.calls() === 1)
    // The stream breaks; on the fresh one the server re-emits the request it holds as pending (no event IDs here).
    const reemit = async (index: number): Promise<void> => {
      s.gets.channels[index - 1]!.close()
      await until(() => s.gets.channels.length > index)
      s.gets.channels[index]!.push(frame(undefined, samplingRequest('srv-1')))
    }
    s.gets.channels[0]!.push(frame(undefined, note(0)))
    await reemit(1)
    await until(() => eventsOf(s.events, 'duplicate-dropped').length === 1)
    expect(answersTo(s.mock, 'srv-1')).toEqual([])

    sampling.release()
    await expect(tool).resolves.toMatchObject({content: [{type: 'text', text: 'answer 1'}]})
    await reemit(2)
    await until(() => answersTo(s.mock, 'srv-1').length === 2)

    expect(sampling.calls()).toBe(1)
    expect(new Set(answersTo(s.mock, 'srv-1')).size).toBe(1)
    expect(s.gets.lastEventIds).toEqual([undefined, undefined, undefined])
    expect(s.transport.metrics).toMatchObject({reemittedRequests: 2, replayedEvents: 0, sessionResumptions: 2})
    expect(s.mock.executions).toEqual({ask: 1})
    await s.client.close()
  })

  it('reemittedRequests counts server requests re-emitted on a session resumption and moves independently of replayedEvents', async () => {
    // The standalone stream breaks without a cursor: the mock attaches a fresh stream and re-emits srv-1.
    const s = await setup((index) => index > 0)
    const sampling = gatedSampling(s.client)
    const asked = s.client.callTool({name: 'ask', arguments: {count: 1}})
    await until(() => sampling.calls() === 1)
    s.gets.channels[0]!.push(frame(undefined, note(0)))
    s.gets.channels[0]!.close()
    await until(() => s.transport.metrics.reemittedRequests === 1)
    sampling.release()
    await asked
    expect(s.transport.metrics).toMatchObject({reemittedRequests: 1, replayedEvents: 0})

    // A cut stream is resumed with its cursor and replays a new server request and the response:
    // replayed events move, re-emitted requests do not.
    s.mock.faults.cutNext({after: 1, how: 'error', on: 'POST'})
    await s.client.callTool({name: 'ask', arguments: {count: 1}})

    expect(s.transport.metrics).toMatchObject({reemittedRequests: 1, replayedEvents: 2, streamResumptions: 1})
    expect(sampling.calls()).toBe(2)
    expect([answersTo(s.mock, 'srv-1'), answersTo(s.mock, 'srv-2')].map((answers) => answers.length)).toEqual([1, 1])
    await s.client.close()
  })

  it('bounded memory: after 5,000 event IDs on one stream, a replay of the oldest is no longer recognised while a recent one is', async () => {
    // The bound, by design: a stream remembers its latest event IDs only (about a thousand), not all of them,
    // so memory stays flat on a stream of any length. A server replays from near the cursor, so an ID far
    // behind it coming back is a server fault this transport does not guard against.
    const s = await setup()
    const ids = Array.from({length: 5000}, (_, index) => index + 1)
    s.gets.channels[0]!.push(...ids.map((n) => frame(`e${n}`, note(n))))
    s.gets.channels[0]!.close()
    await until(() => s.gets.channels.length === 2, 10_000)
    s.gets.channels[1]!.push(frame('e1', note(1)), frame('e5000', note(5000)), frame('e5001', note(5001)))
    await until(() => countOf(s.delivered, 5001) === 1)

    expect(s.gets.lastEventIds).toEqual([undefined, 'e5000'])
    expect(countOf(s.delivered, 1)).toBe(2)
    expect(countOf(s.delivered, 5000)).toBe(1)
    expect(eventsOf(s.events, 'duplicate-dropped')).toEqual([{type: 'duplicate-dropped', what: 'event', id: 'e5000'}])
    await s.client.close()
  })

  it.each([
    [16, 'delivered again, the stream having forgotten it', 2],
    [1024, 'dropped', 1],
  ])(
    'bounded in characters: with limits.dedupeBytes %i, an event replayed after 60 characters of newer event IDs is %s',
    async (dedupeBytes, _what, deliveries) => {
      const s = await setup(undefined, {limits: {dedupeBytes}})
      const ids = Array.from({length: 21}, (_, n) => n)
      // e00 to e20, then e00 again: an ID out of order, looked up among those the stream remembers.
      s.gets.channels[0]!.push(
        ...ids.map((n) => frame(`e${String(n).padStart(2, '0')}`, note(n))),
        frame('e00', note(0)),
        frame('e21', note(21)),
      )
      await until(() => countOf(s.delivered, 21) === 1)

      expect(countOf(s.delivered, 0)).toBe(deliveries)
      expect(eventsOf(s.events, 'duplicate-dropped')).toEqual(
        deliveries === 1 ? [{type: 'duplicate-dropped', what: 'event', id: 'e00'}] : [],
      )
      expect(
        eventsOf(s.events, 'limit-exceeded').every(
          (event) => event.limit === 'dedupeBytes' && event.max === dedupeBytes,
        ),
      ).toBe(true)
      expect(eventsOf(s.events, 'limit-exceeded').length > 0).toBe(deliveries === 2)
      await s.client.close()
    },
  )

  it('for any sequence of delivered and replayed event IDs on a stream, no message reaches the Client twice', async () => {
    // Each connection of the standalone stream carries a run of event IDs (repeats and replays included);
    // event ID n always carries notification n. Every notification sent must arrive exactly once.
    const connections = fc.array(fc.array(fc.integer({min: 1, max: 12}), {minLength: 1, maxLength: 8}), {
      minLength: 1,
      maxLength: 5,
    })
    await fc.assert(
      fc.asyncProperty(connections, async (runs) => {
        network.resetHandlers()
        const s = await setup()
        for (const [index, run] of runs.entries()) {
          await until(() => s.gets.channels.length > index)
          s.gets.channels[index]!.push(...run.map((n) => frame(`e${n}`, note(n))))
          s.gets.channels[index]!.close()
        }
        // The connection after the last one opens once everything before it was delivered.
        await until(() => s.gets.channels.length > runs.length)
        await s.client.close()
        const sent = new Set(runs.flat())
        for (let n = 1; n <= 12; n++) expect(countOf(s.delivered, n)).toBe(sent.has(n) ? 1 : 0)
      }),
      {numRuns: 25},
    )
  })
})

describe('server request IDs across sessions', () => {
  it('a server request of a new session with the ID of one answered in the old session is handled again, not answered from the old', async () => {
    const mock = useMock()
    const {client, transport, events, sampled} = await connect()
    expect((await client.callTool({name: 'ask'})).content).toEqual([{type: 'text', text: 'answer 1'}])
    mock.faults.expireSession(transport.sessionId)
    await client.callTool({name: 'echo'}).catch(() => 'expired')
    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    expect((await client.callTool({name: 'ask'})).content).toEqual([{type: 'text', text: 'answer 2'}])
    expect(sampled).toEqual(['question 1', 'question 1'])
    expect(eventsOf(events, 'duplicate-dropped')).toEqual([])
    await client.close()
  })
})

describe('progress of a request already answered', () => {
  const progress = (token: unknown, n: number): object => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: {progressToken: token, progress: n},
  })

  it.each([
    ['its own request ID as the token: renamed on the wire, and late progress is dropped', 500, 500, true],
    ['a token of its own: sent as it is, and late progress is delivered', 501, 7, false],
  ])('a request with %s', async (_what, id, token, renamed) => {
    const {client, transport, gets, events, delivered} = await setup()
    let wire: {id: unknown; token: unknown} | undefined
    answerToolCalls((wireId, wireToken) => {
      wire = {id: wireId, token: wireToken}
      return sse([frame('p1', progress(wireToken, 1)), frame('r', result(wireId))])
    })
    await transport.send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {name: 'echo', _meta: {progressToken: token}},
    })
    await until(() => delivered.some((message) => 'id' in message && message.id === id))
    expect(wire!.id).not.toBe(id)
    expect(wire!.token).toBe(renamed ? wire!.id : token)
    gets.channels[0]!.push(frame(undefined, progress(wire!.token, 2)), frame(undefined, note(1)))
    await until(() => countOf(delivered, 1) === 1)
    const progressDelivered = delivered.filter(
      (message) => 'method' in message && message.method === 'notifications/progress',
    )
    expect(progressDelivered).toEqual(renamed ? [progress(token, 1)] : [progress(token, 1), progress(token, 2)])
    expect(eventsOf(events, 'duplicate-dropped')).toEqual(
      renamed ? [{type: 'duplicate-dropped', what: 'progress', id: wire!.id}] : [],
    )
    await client.close()
  })
})

describe('progress of a request still pending', () => {
  const progress = (token: unknown, n: number): object => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: {progressToken: token, progress: n},
  })

  it('progress replayed on another stream (a server that replays the whole session) is dropped: it must increase', async () => {
    const {client, transport, gets, events, delivered} = await setup()
    let token: unknown
    answerToolCalls((_wireId, wireToken) => {
      token = wireToken
      return sse([frame('p1', progress(wireToken, 1)), frame('p2', progress(wireToken, 2))], 'open')
    })
    void transport.send({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {name: 'echo', _meta: {progressToken: 7}},
    })
    const progressDelivered = (): unknown[] =>
      delivered.filter((message) => 'method' in message && message.method === 'notifications/progress')
    await until(() => progressDelivered().length === 2)
    // Other event IDs, on the standalone stream: only the progress values tell the replay apart.
    gets.channels[0]!.push(frame('s1', progress(token, 1)), frame('s2', progress(token, 3)), frame('s3', note(1)))
    await until(() => countOf(delivered, 1) === 1)
    expect(progressDelivered()).toEqual([progress(7, 1), progress(7, 2), progress(7, 3)])
    expect(eventsOf(events, 'duplicate-dropped')).toEqual([{type: 'duplicate-dropped', what: 'progress', id: token}])
    await client.close()
  })
})

describe('progress of a request whose POST failed', () => {
  it('replayed on another stream after a 500 (the tool may have run) is dropped, not handed to the Client', async () => {
    const {client, transport, gets, events, delivered} = await setup()
    let token: unknown
    answerToolCalls((_wireId, wireToken) => {
      token = wireToken
      return new Response('failed', {status: 500})
    })
    const sent = transport.send({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {name: 'echo', _meta: {progressToken: 7}},
    })
    await expect(sent).rejects.toThrow()
    // The standalone stream re-attaches, for the requests the tool may ask meanwhile.
    await until(() => gets.channels.length === 2)
    const progress = {jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken: token, progress: 1}}
    gets.channels[1]!.push(frame('s1', progress), frame('s2', note(1)))
    await until(() => countOf(delivered, 1) === 1)
    expect(delivered.filter((message) => 'method' in message && message.method === 'notifications/progress')).toEqual(
      [],
    )
    expect(eventsOf(events, 'duplicate-dropped')).toContainEqual({
      type: 'duplicate-dropped',
      what: 'progress',
      id: token,
    })
    await client.close()
  })
})

describe("progress of a previous process's request", () => {
  it('replayed on another stream of the next process is dropped, not handed to the Client under a token of its own', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    await dieMidCall(store, 2)
    // The next process: its standalone GET is a channel of the test's; the call's stream is resumed from the mock.
    const gets = serveGets(mock, (index) => gets.lastEventIds[index] !== undefined)
    const {client, transport, events} = await connect({store})
    const delivered = tap(transport)
    const resumed = () => eventsOf(events, 'reconnect').find((event) => event.stream === 'request')
    await until(() => gets.channels.length === 1 && resumed() !== undefined)
    const adopted = resumed()!.requestId!
    // Its progress notifications carry the previous process's wire ID as their token.
    const progress = {jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken: adopted, progress: 9}}
    gets.channels[0]!.push(frame('s1', progress), frame('s2', note(1)))
    await until(() => countOf(delivered, 1) === 1)
    expect(delivered.filter((message) => 'method' in message && message.method === 'notifications/progress')).toEqual(
      [],
    )
    expect(eventsOf(events, 'duplicate-dropped')).toContainEqual({
      type: 'duplicate-dropped',
      what: 'progress',
      id: adopted,
    })
    await client.close()
  })
})

describe('a server request re-emitted twice once answered', () => {
  it('gets the cached answer once while that answer is on its way', async () => {
    const s = await setup()
    // No event ID: the stream re-attaches without Last-Event-ID, where a server that lost the answer asks again.
    s.gets.channels[0]!.push(frame(undefined, samplingRequest('srv-1')))
    await until(() => answersTo(s.mock, 'srv-1').length === 1)
    // Asked again twice on a connection requested after the server took the answer (its 202 read).
    await new Promise((resolve) => setTimeout(resolve, 20))
    s.gets.channels[0]!.close()
    await until(() => s.gets.channels.length === 2)
    s.gets.channels[1]!.push(frame(undefined, samplingRequest('srv-1')), frame(undefined, samplingRequest('srv-1')))
    await until(() => eventsOf(s.events, 'duplicate-dropped').length === 2)
    await until(() => answersTo(s.mock, 'srv-1').length === 2)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(answersTo(s.mock, 'srv-1')).toHaveLength(2)
    expect(eventsOf(s.events, 'cached-answer-resent')).toEqual([{type: 'cached-answer-resent', requestId: 'srv-1'}])
    await s.client.close()
  })
})

describe("a server request re-emitted to the standalone stream before it comes on its call's stream", () => {
  it('is not answered again when its copy on the call stream comes after the server took the answer', async () => {
    const s = await setup()
    // The call's stream is written to by the test; the copy on the standalone stream comes first.
    let call!: ReadableStreamDefaultController<Uint8Array>
    const calls = answerToolCalls(
      () =>
        new Response(new ReadableStream<Uint8Array>({start: (c) => (call = c)}), {
          headers: {'content-type': 'text/event-stream'},
        }),
    )
    const tool = s.client.callTool({name: 'echo'})
    await until(() => calls.length === 1)
    s.gets.channels[0]!.push(frame('g1', samplingRequest('srv-1')))
    await until(() => answersTo(s.mock, 'srv-1').length === 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    // The server wrote the request on the call's stream before it took the answer; the client reads it only now.
    call.enqueue(encoder.encode(frame('c1', samplingRequest('srv-1')) + frame('c2', result(calls[0]!.id))))
    await expect(tool).resolves.toMatchObject({content: [{text: 'ok'}]})
    await new Promise((resolve) => setTimeout(resolve, 20))

    expect(answersTo(s.mock, 'srv-1')).toHaveLength(1)
    expect(eventsOf(s.events, 'cached-answer-resent')).toEqual([])
    await s.client.close()
  })
})

describe('a server request that comes again while the POST of its answer waits to retry', () => {
  it('is not answered again: the answer is on its way until its last attempt', async () => {
    const s = await setup(undefined, {reconnect: {minDelayMs: 100, maxDelayMs: 100}})
    // The server takes the first attempt, but its answer is lost on the way back: the POST retries after 100 ms.
    let lost = false
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {result?: unknown}
        if (body.result === undefined || lost) return undefined
        lost = true
        await s.mock.handle(request)
        return Response.error()
      }),
    )
    s.gets.channels[0]!.push(frame('s1', samplingRequest('srv-1')))
    await until(() => lost)
    s.gets.channels[0]!.push(frame('s2', samplingRequest('srv-1')))
    await until(() => eventsOf(s.events, 'duplicate-dropped').length === 1)
    await until(() => answersTo(s.mock, 'srv-1').length === 2)
    await new Promise((resolve) => setTimeout(resolve, 20))

    // The lost attempt and its retry; no cached answer sent beside them.
    expect(answersTo(s.mock, 'srv-1')).toHaveLength(2)
    expect(eventsOf(s.events, 'cached-answer-resent')).toEqual([])
    await s.client.close()
  })
})

describe('the streams of a terminated session', () => {
  it('deliver nothing more: a notification the server still writes on the old standalone stream is not handed over', async () => {
    const s = await setup()
    s.gets.channels[0]!.push(frame('n1', note(1)))
    await until(() => countOf(s.delivered, 1) === 1)
    await s.transport.terminateSession()
    try {
      s.gets.channels[0]!.push(frame('n2', note(2)))
    } catch {
      // The transport cancelled the body already.
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(countOf(s.delivered, 2)).toBe(0)
    await s.client.close()
  })
})
