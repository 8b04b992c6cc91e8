/**
 * The server requests kept for a restart (src/delivery/kept-requests.ts): their bounds by count and by weight, an
 * answer that replaces its request, and what a new session or a forgotten ID does to them.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {isTransportError, ResumableHTTPClientTransport, type JsonValue, type TransportEvent} from '../../src/index.ts'
import {connect, eventsOf, interceptGets, network, storedSession, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {answerToolCalls, frame, holdAnswers, result, sse, tap} from '../fixtures/wire.ts'

const records = `mcp-resumable-http:${url}#request:`

/** A sampling request `id` of a fixed JSON length: `size` characters of text and the frame around them. */
function sampling(id: string, size: number): object {
  return {
    jsonrpc: '2.0',
    id,
    method: 'sampling/createMessage',
    params: {messages: [{role: 'user', content: {type: 'text', text: ''.padEnd(size, '.')}}], maxTokens: 10},
  }
}

const chars = (message: object): number => JSON.stringify(message).length

describe('server requests kept for a restart, by count', () => {
  const requests = Array.from({length: 1025}, (_, n) => sampling(`s${String(n).padStart(4, '0')}`, 10))
  const each = chars(requests[0]!)
  it.each([
    ['past the count, the 1025th drops the oldest, silently: its weight is no cause', 32 * 1024 * 1024, ['s0000'], []],
    ['a weight of exactly the bound is no excess: only the count drops', 1024 * each, ['s0000'], []],
    [
      'past the weight, with exactly 1024 kept, the oldest go, reported with the weight that dropped them',
      1024 * each - 1,
      ['s0000', 's0001'],
      ['s0000', 's0001'],
    ],
  ])(
    '%s',
    async (_bound, keptRequestBytes, dropped, reported) => {
      const mock = useMock()
      interceptGets(mock, () => sse([requests.map((request, n) => frame(`r${n}`, request)).join('')], 'open'))
      const store = new RecordingStore()
      let count = 0
      const {client, events} = await connect({store, limits: {keptRequestBytes, maxConcurrentAnswers: 200}})
      client.setRequestHandler(CreateMessageRequestSchema, () => {
        count++
        return new Promise(() => {})
      })
      await until(() => count === requests.length, 5000)

      const kept = (await store.list(records)).map((key) => JSON.parse(key.slice(records.length)) as string).sort()
      expect(kept).toEqual(
        requests.map((request) => (request as {id: string}).id).filter((id) => !dropped.includes(id)),
      )
      const reports = eventsOf(events, 'limit-exceeded').filter((event) => event.limit === 'keptRequestBytes')
      expect(reports.map((event) => [event.requestId, event.size])).toEqual(reported.map((id) => [id, 1024 * each]))
      await client.close()
    },
    10_000,
  )
})

describe("the Client's answer kept for a restart", () => {
  it.each([
    [
      'room for both the answer and the next request: nothing goes',
      {request: 20_000, answer: 2, next: 20_000},
      30_000,
      [],
    ],
    [
      'room for the next request only: the answer goes, reported once, its record deleted once',
      {request: 20_000, answer: 2, next: 20_000},
      20_200,
      ['r0'],
    ],
    [
      'an answer heavier than the bound, alone: it stays, marked taken once the server took it',
      {request: 100, answer: 2000, next: undefined},
      1000,
      [],
    ],
  ] as const)('%s', async (_what, sizes, keptRequestBytes, reported) => {
    const mock = useMock()
    const store = new RecordingStore()
    const {posted, taken, release} = holdAnswers()
    interceptGets(mock, () => sse([frame('g0', sampling('r0', sizes.request))], 'open'))
    const {client, events} = await connect({store, limits: {keptRequestBytes}})
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: 'm',
      role: 'assistant',
      content: {type: 'text', text: ''.padEnd(sizes.answer, '.')},
    }))
    await until(() => posted.includes('r0'))
    if (sizes.next !== undefined) {
      // The next request comes once the answer is kept (on a call's stream), and is answered in turn.
      answerToolCalls((id) => sse([frame('c0', sampling('r1', sizes.next)), frame('c1', result(id))]))
      await client.callTool({name: 'echo'})
    }
    const reports = eventsOf(events, 'limit-exceeded').filter((event) => event.limit === 'keptRequestBytes')
    expect(reports.map((event) => event.requestId)).toEqual(reported)
    const r0 = `${records}"r0"`
    expect(store.writes.filter((write) => write.key === r0).map((write) => write.op)).toEqual([
      'set',
      'set',
      ...(reported.length > 0 ? ['delete'] : []),
    ])
    release()
    await until(() => taken() === posted.length)
    // Taken, the answer stays kept, marked so: a next process must know a replayed copy of r0. Dropped, it is gone.
    const markedTaken = (): boolean =>
      store.writes.some((write) => write.key === r0 && (write.value as {taken?: boolean} | undefined)?.taken === true)
    if (reported.length === 0) await until(markedTaken)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(store.keys.has(r0)).toBe(reported.length === 0)
    expect(markedTaken()).toBe(reported.length === 0)
    await client.close()
  })
})

describe('a kept server request that comes again', () => {
  /** Every sampling request the Client is handed, by ID, held unanswered. */
  function held(client: Awaited<ReturnType<typeof connect>>['client']): unknown[] {
    const delivered: unknown[] = []
    client.setRequestHandler(CreateMessageRequestSchema, (_request, extra) => {
      delivered.push(extra.requestId)
      return new Promise(() => {})
    })
    return delivered
  }

  it('once de-duplication forgot its ID is delivered again, as any replay from that far back, but not stored again', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const ids = ['r0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'r0']
    interceptGets(mock, () => sse([ids.map((id, n) => frame(`e${n}`, sampling(id, 10))).join('')], 'open'))
    const {client} = await connect({store, limits: {dedupeBytes: 4}})
    const delivered = held(client)
    await until(() => delivered.length === ids.length)
    expect(store.writes.filter((write) => write.key === `${records}"r0"`)).toHaveLength(1)
    await client.close()
  })

  it('in a new session is kept for a restart, though the old session kept one of the same ID', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    interceptGets(mock, () => sse([frame('g0', sampling('r0', 10))], 'open'))
    const {client, transport} = await connect({store})
    const delivered = held(client)
    await until(() => delivered.length === 1)
    expect(store.keys).toContain(`${records}"r0"`)
    await transport.terminateSession()
    expect(store.keys).not.toContain(`${records}"r0"`)
    await client.close()
    await client.connect(transport)
    await until(() => delivered.length === 2)
    expect(transport.sessionId).toBe('session-2')
    expect(store.keys).toContain(`${records}"r0"`)
    await client.close()
  })
})

describe('server requests a previous process left unanswered', () => {
  async function restart(kept: [string, object][]) {
    const mock = useMock()
    interceptGets(mock, () => sse([], 'open'))
    const store = await storedSession()
    for (const [id, message] of kept)
      await store.set(`${records}${JSON.stringify(id)}`, {sessionId: 'session-1', message} as JsonValue)
    return connect({store})
  }

  it('are handed to the Client once it connected, but a record whose message has another ID is skipped', async () => {
    const {client, sampled, events} = await restart([
      ['s1', sampling('s1', 3)],
      ['s2', sampling('other', 4)],
    ])
    await until(() => eventsOf(events, 'request-restored').length === 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(eventsOf(events, 'request-restored')).toEqual([{type: 'request-restored', requestId: 's1'}])
    expect(sampled).toEqual(['...'])
    await client.close()
  })

  it('close() while they are handed over stops at once: none is handed over after it', async () => {
    const mock = useMock()
    interceptGets(mock, () => sse([], 'open'))
    const store = await storedSession()
    for (const id of ['s1', 's2'])
      await store.set(`${records}${JSON.stringify(id)}`, {
        sessionId: 'session-1',
        message: sampling(id, 1),
      } as JsonValue)
    const restored: unknown[] = []
    const transport = new ResumableHTTPClientTransport(new URL(url), {
      store,
      onEvent: (event) => {
        if (event.type !== 'request-restored') return
        restored.push(event.requestId)
        void transport.close()
      },
    })
    const delivered = tap(transport)
    await transport.start()
    await until(() => restored.length > 0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(restored).toEqual(['s1'])
    expect(delivered.map((message) => ('id' in message ? message.id : undefined))).toEqual(['s1'])
  })
})

describe('one server request against keptRequestBytes', () => {
  const request = sampling('r0', 100)
  it.each([
    ['of exactly the bound is kept, with no report', chars(request), true],
    ['one character past the bound is delivered, not kept, and reported with its size', chars(request) - 1, false],
  ])('%s', async (_what, keptRequestBytes, kept) => {
    const mock = useMock()
    interceptGets(mock, () => sse([frame('g0', request)], 'open'))
    const store = new RecordingStore()
    let handed = 0
    const {client, events} = await connect({store, limits: {keptRequestBytes}})
    client.setRequestHandler(CreateMessageRequestSchema, () => {
      handed++
      return new Promise(() => {})
    })
    await until(() => handed === 1)
    expect(store.keys.has(`${records}"r0"`)).toBe(kept)
    const reports = eventsOf(events, 'limit-exceeded').filter((event) => event.limit === 'keptRequestBytes')
    expect(reports.map((event) => [event.requestId, event.size])).toEqual(kept ? [] : [['r0', chars(request)]])
    await client.close()
  })
})

describe('server requests a previous process left unanswered, against the bounds', () => {
  it('weigh on keptRequestBytes as soon as they are restored: a new request past the bound drops the oldest of them', async () => {
    const mock = useMock()
    const [s1, s2, r3] = [sampling('s1', 100), sampling('s2', 100), sampling('r3', 100)]
    const store = new RecordingStore()
    await storedSession(store)
    for (const message of [s1, s2])
      await store.set(`${records}${JSON.stringify((message as {id: string}).id)}`, {
        sessionId: 'session-1',
        message,
      } as JsonValue)
    // The new request comes once both restored ones were handed over, all three held unanswered.
    let handed = 0
    interceptGets(mock, async () => {
      await until(() => handed === 2)
      return sse([frame('g0', r3)], 'open')
    })
    const events: TransportEvent[] = []
    const transport = new ResumableHTTPClientTransport(new URL(url), {
      store,
      limits: {keptRequestBytes: 2 * chars(r3)},
      onEvent: (event) => events.push(event),
    })
    const client = new Client({name: 'test', version: '1.0.0'}, {capabilities: {sampling: {}}})
    client.setRequestHandler(CreateMessageRequestSchema, () => {
      handed++
      return new Promise(() => {})
    })
    await client.connect(transport)
    await until(() => handed === 3)
    await until(() => !store.keys.has(`${records}"s1"`))
    expect([...store.keys].filter((key) => key.startsWith(records)).sort()).toEqual([
      `${records}"r3"`,
      `${records}"s2"`,
    ])
    const reports = eventsOf(events, 'limit-exceeded').filter((event) => event.limit === 'keptRequestBytes')
    expect(reports.map((event) => [event.requestId, event.size])).toEqual([['s1', 3 * chars(r3)]])
    await client.close()
  })
})

describe("a previous process's answer sent again at start", () => {
  const answer = {
    jsonrpc: '2.0' as const,
    id: 's1',
    result: {model: 'm', role: 'assistant', content: {type: 'text', text: 'kept'}},
  }

  /** A next process on a store that holds `answer`, its re-send POST answered by `respond`. */
  async function restartWith(respond: () => Response | Promise<Response>) {
    useMock()
    let resent = 0
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: unknown; method?: unknown}
        if (body.id !== 's1' || body.method !== undefined) return undefined
        resent++
        return respond()
      }),
    )
    const store = await storedSession()
    await store.set(`${records}"s1"`, {sessionId: 'session-1', message: answer})
    const harness = await connect({store})
    await until(() => resent > 0)
    return harness
  }

  it('that fails is reported once through onerror', async () => {
    const {client, errors} = await restartWith(() => new HttpResponse(null, {status: 500}))
    await until(() => errors.length > 0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(errors).toHaveLength(1)
    expect(isTransportError(errors[0])).toBe(true)
    await client.close()
  })

  it('cut short by close() is not reported: closing is no failure', async () => {
    const {client, errors} = await restartWith(() => new Promise<Response>(() => {}))
    await client.close()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(errors).toEqual([])
  })
})
