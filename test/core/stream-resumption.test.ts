/**
 * Stream resumption and the cursor/session boundary (docs/design.md#cursor):
 * a broken stream is resumed with GET + Last-Event-ID from its own cursor, inside the session that produced it.
 */
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {http} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type JsonValue,
  type ResumableHTTPClientTransportOptions,
  type ResumptionStore,
} from '../../src/index.ts'
import type {Cut, ReferenceServer, ReferenceServerOptions} from '../../src/testing/index.ts'
import {
  connect,
  eventsOf,
  interceptGets,
  network,
  until,
  url,
  useMock,
  type GetAnswer,
  type Harness,
  type SeenGet,
} from '../fixtures/harness.ts'
import {advance, quiet, realTurns} from '../fixtures/timing.ts'
import {codeOf, frame, sse, tap} from '../fixtures/wire.ts'

const passThrough: GetAnswer = () => undefined
/** Resume GETs (with a cursor) get `status`; the rest goes to the mock. */
const resumeAnswered =
  (status: number): GetAnswer =>
  (get) =>
    get.lastEventId === undefined ? undefined : new Response(null, {status})

interface Setup extends Harness {
  mock: ReferenceServer
  gets: SeenGet[]
}

/** Mock + GET interception + SDK Client; resolves once the standalone GET went out. */
async function setup(
  answer: GetAnswer = passThrough,
  mockOptions?: ReferenceServerOptions,
  options?: ResumableHTTPClientTransportOptions,
): Promise<Setup> {
  const mock = useMock(mockOptions)
  const gets = interceptGets(mock, answer)
  const harness = await connect(options)
  await until(() => gets.length >= 1)
  return {...harness, mock, gets}
}

/** The event IDs of the `index`-th POST stream of the mock's session. */
function postEventIds(mock: ReferenceServer, index = 0): string[] {
  const streams = mock.session().streams.filter((stream) => stream.id.startsWith('p'))
  return streams[index]?.events.map((event) => event.id) ?? []
}

/** Its rejection or its value, captured at once so that no rejection goes unhandled. */
function outcome(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => value,
    (error: unknown) => error,
  )
}

/** Asks for progress, so that `slow` writes one event per step. */
const withProgress = {onprogress: () => {}}

/**
 * Calls `slow` with its POST stream cut after `cut.after` events; resolves with the call's outcome and the cursor
 * the transport holds (the last event ID written before the cut).
 */
async function interruptedCall(
  s: Setup,
  cut: Cut,
  args: object = {steps: 5},
): Promise<{result: Promise<unknown>; cursor: string}> {
  const before = s.mock.requests('POST', 'tools/call').length
  s.mock.faults.cutNext(cut)
  const result = outcome(s.client.callTool({name: 'slow', arguments: {...args}}, undefined, withProgress))
  await until(() => s.mock.requests('POST', 'tools/call').length > before)
  const cursor = postEventIds(s.mock, before)[cut.after - 1]!
  return {result, cursor}
}

const resumeGets = (s: Setup): SeenGet[] => s.gets.filter((get) => get.lastEventId !== undefined)

/** A store whose contents the test can read, and freeze so that what it holds stays there. */
class InspectableStore implements ResumptionStore {
  readonly entries = new Map<string, JsonValue>()
  frozen = false
  get(key: string): Promise<JsonValue | undefined> {
    return Promise.resolve(this.entries.get(key))
  }
  set(key: string, value: JsonValue): Promise<void> {
    if (!this.frozen) this.entries.set(key, value)
    return Promise.resolve()
  }
  delete(key: string): Promise<void> {
    if (!this.frozen) this.entries.delete(key)
    return Promise.resolve()
  }
  list(prefix: string): Promise<string[]> {
    return Promise.resolve([...this.entries.keys()].filter((key) => key.startsWith(prefix)))
  }
  mentions(text: string): boolean {
    return JSON.stringify([...this.entries]).includes(text)
  }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('stream resumption', () => {
  it('the resume GET replays after the cursor, then the response; each event once, the original request resolves', async () => {
    const s = await setup()
    const progress: number[] = []
    s.mock.faults.cutNext({after: 3, how: 'error'})
    const result = await s.client.callTool({name: 'slow', arguments: {steps: 5}}, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })

    expect(result.content).toEqual([{type: 'text', text: 'done after 5 steps'}])
    expect(progress).toEqual([1, 2, 3, 4, 5])
    expect(s.mock.executions).toEqual({slow: 1})
    expect(s.mock.requests('POST', 'tools/call')).toHaveLength(1)
    const cursor = postEventIds(s.mock)[2]
    expect(resumeGets(s)).toEqual([{sessionId: 'session-1', lastEventId: cursor}])
    expect(eventsOf(s.events, 'reconnect')).toMatchObject([
      {
        stream: 'request',
        branch: 'stream-resumption',
        headers: {'mcp-session-id': 'session-1', 'last-event-id': cursor},
      },
    ])
    // Progress 3, 4, 5 and the response came after the cursor.
    expect(s.transport.metrics).toMatchObject({
      replayedEvents: 4,
      streamResumptions: 1,
      duplicatesDropped: 0,
      reemittedRequests: 0,
    })
    await s.client.close()
  })

  it('drops replayed events already delivered (a server that replays from too far back)', async () => {
    // The server ignores the cursor and replays from the priming event: progress 1 and 2 come again.
    const s = await setup((get) => {
      if (get.lastEventId === undefined) return undefined
      const headers = {'mcp-session-id': get.sessionId!, 'last-event-id': postEventIds(mock)[0]!}
      return mock.handle(new Request(url, {headers}))
    })
    const {mock} = s
    const progress: number[] = []
    s.mock.faults.cutNext({after: 3, how: 'error'})
    await s.client.callTool({name: 'slow', arguments: {steps: 4}}, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })

    expect(progress).toEqual([1, 2, 3, 4])
    const [, first, second] = postEventIds(s.mock)
    expect(eventsOf(s.events, 'duplicate-dropped')).toEqual([
      {type: 'duplicate-dropped', what: 'event', id: first},
      {type: 'duplicate-dropped', what: 'event', id: second},
    ])
    expect(s.transport.metrics.duplicatesDropped).toBe(2)
    expect(s.errors).toEqual([])
    await s.client.close()
  })

  it('ignores a second response for a completed request replayed on a resumed stream', async () => {
    // The standalone stream closes after g_1; its resume replays a response the Client already has.
    let replay!: (message: object) => void
    const replayed = new Promise<object>((resolve) => (replay = resolve))
    const s = await setup(async (get) =>
      get.lastEventId === undefined
        ? sse([frame('g_1', {jsonrpc: '2.0', method: 'notifications/tools/list_changed'})])
        : sse([frame('g_2', await replayed)], 'open'),
    )
    const delivered = tap(s.transport)
    await s.client.callTool({name: 'echo', arguments: {}})
    const response = delivered.find((message) => 'result' in message) as unknown as {id: number}
    replay(response)
    await until(() => s.transport.metrics.duplicatesDropped === 1)

    expect(s.gets[1]).toEqual({sessionId: 'session-1', lastEventId: 'g_1'})
    expect(eventsOf(s.events, 'duplicate-dropped')).toEqual([
      {type: 'duplicate-dropped', what: 'response', id: response.id},
    ])
    expect(delivered.filter((message) => JSON.stringify(message) === JSON.stringify(response))).toHaveLength(1)
    // The SDK Client would report a response for an unknown ID had it been delivered.
    expect(s.errors).toEqual([])
    await s.client.close()
  })

  it('a resume GET that drops before any new event is followed by one with the same Last-Event-ID, never an empty one', async () => {
    const s = await setup((get) =>
      get.lastEventId !== undefined && resumeGets(s).length === 1 ? sse([': keep-alive\n\n'], 'error') : undefined,
    )
    const {result, cursor} = await interruptedCall(s, {after: 2, how: 'error'}, {steps: 3})

    expect(await result).toMatchObject({content: [{type: 'text', text: 'done after 3 steps'}]})
    expect(resumeGets(s)).toEqual([
      {sessionId: 'session-1', lastEventId: cursor},
      {sessionId: 'session-1', lastEventId: cursor},
    ])
    expect(s.gets.some((get) => get.lastEventId === '')).toBe(false)
    expect(s.mock.executions).toEqual({slow: 1})
    await s.client.close()
  })

  it.each([
    [17, 405, 'not-offered'],
    [22, 204, 'ended-by-server'],
  ] as const)(
    'C%i: resume GET %i settles the request as outcome-unknown: no re-POST, no further resume GET; the standalone stream re-attaches without its cursor',
    async (_, status, reason) => {
      const s = await setup(resumeAnswered(status))
      const {result, cursor} = await interruptedCall(s, {after: 2, how: 'error'})

      expect(codeOf(await result)).toBe('outcome-unknown')
      await quiet()
      expect(resumeGets(s)).toEqual([{sessionId: 'session-1', lastEventId: cursor}])
      expect(s.gets).toEqual([
        {sessionId: 'session-1', lastEventId: undefined},
        {sessionId: 'session-1', lastEventId: cursor},
        {sessionId: 'session-1', lastEventId: undefined},
      ])
      expect(s.mock.requests('POST', 'tools/call')).toHaveLength(1)
      expect(eventsOf(s.events, 'stream-closed').filter((event) => event.stream === 'request')).toMatchObject([
        {reason},
      ])
      expect(s.errors).toEqual([])
      await s.client.close()
    },
  )

  it('resume GET 404 with the session: session expired, every pending request settled, nothing re-sent, onerror once', async () => {
    const store = new InspectableStore()
    // The 404 waits for a second call to be in flight.
    const s = await setup(
      async (get) => {
        if (get.lastEventId === undefined) return undefined
        await until(() => s.mock.requests('POST', 'tools/call').length === 2)
        return new Response(null, {status: 404})
      },
      undefined,
      {store},
    )
    const first = await interruptedCall(s, {after: 2, how: 'error'})
    await until(() => store.mentions(first.cursor))
    expect(store.mentions('session-1')).toBe(true)
    const second = outcome(s.client.callTool({name: 'slow', arguments: {steps: 2, delayMs: 100}}))

    expect(codeOf(await first.result)).toBe('session-expired')
    expect(codeOf(await second)).toBe('session-expired')
    expect(s.transport.sessionId).toBeUndefined()
    // The records go once the session ended: their deletes follow any write of them under way.
    await until(() => store.entries.size === 0)
    expect(eventsOf(s.events, 'session-expired')).toEqual([
      {type: 'session-expired', sessionId: 'session-1', settledRequests: 2},
    ])
    await quiet()
    // The session's end accounts for its streams: none of them says it closed.
    expect(eventsOf(s.events, 'stream-closed')).toEqual([])
    expect(resumeGets(s)).toEqual([{sessionId: 'session-1', lastEventId: first.cursor}])
    expect(s.gets).toHaveLength(2)
    expect(s.mock.requests('POST', 'tools/call')).toHaveLength(2)
    expect(s.mock.executions).toEqual({slow: 2})
    expect(s.errors.filter((error) => isTransportError(error))).toMatchObject([{code: 'session-expired', status: 404}])
    await s.client.close()
  })

  it.each([
    [19, 400],
    [20, 410],
  ] as const)(
    'C%i: resume GET %i rejects the cursor: dropped, never retried, request outcome-unknown, then a session-resumption GET',
    async (_, status) => {
      // The standalone stream has ended (204), so none is live when the cursor is refused.
      const s = await setup((get, index) =>
        index === 0 ? new Response(null, {status: 204}) : resumeAnswered(status)(get, index),
      )
      const {result, cursor} = await interruptedCall(s, {after: 2, how: 'error'})

      expect(codeOf(await result)).toBe('outcome-unknown')
      await until(() => s.gets.length === 3)
      await quiet()
      expect(s.gets).toEqual([
        {sessionId: 'session-1', lastEventId: undefined},
        {sessionId: 'session-1', lastEventId: cursor},
        {sessionId: 'session-1', lastEventId: undefined},
      ])
      expect(eventsOf(s.events, 'cursor-rejected')).toMatchObject([{stream: 'request', lastEventId: cursor, status}])
      expect(eventsOf(s.events, 'reconnect')).toMatchObject([
        {
          stream: 'request',
          branch: 'stream-resumption',
          headers: {'mcp-session-id': 'session-1', 'last-event-id': cursor},
        },
        {
          stream: 'standalone',
          branch: 'session-resumption',
          headers: {'mcp-session-id': 'session-1', 'last-event-id': undefined},
        },
      ])
      expect(s.transport.metrics).toMatchObject({streamResumptions: 1, sessionResumptions: 1})
      expect(s.mock.requests('POST', 'tools/call')).toHaveLength(1)
      await s.client.close()
    },
  )

  it('a refused cursor replaces the live standalone connection by one attached without its cursor, never a second stream beside it', async () => {
    const s = await setup(resumeAnswered(400))
    const {result} = await interruptedCall(s, {after: 2, how: 'error'})

    expect(codeOf(await result)).toBe('outcome-unknown')
    await quiet()
    expect(s.gets).toHaveLength(3)
    expect(s.transport.metrics.sessionResumptions).toBe(1)
    // One standalone stream, opened once and re-attached once.
    expect(eventsOf(s.events, 'stream-opened').filter((event) => event.stream === 'standalone')).toHaveLength(1)
    expect(eventsOf(s.events, 'reconnect').filter((event) => event.stream === 'standalone')).toMatchObject([
      {branch: 'session-resumption', headers: {'last-event-id': undefined}},
    ])
    await s.client.close()
  })

  it('409 to the standalone GET without a cursor is retried after a backoff', async () => {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    const gets = interceptGets(useMock(), (_, index) =>
      index < 2 ? new Response(null, {status: 409}) : sse([], 'open'),
    )
    const {client, events, errors} = await connect({reconnect: {minDelayMs: 1000, maxDelayMs: 1500, factor: 1}})
    await realTurns(() => gets.length === 1)
    await realTurns(() => eventsOf(events, 'reconnect-failed').length === 1)
    // Each backoff is 1000 to 1500 ms: the first retry by 1500 ms, the second not before 2000 ms.
    await advance(998)
    expect(gets).toHaveLength(1)
    await advance(502)
    expect(gets).toHaveLength(2)
    await advance(1500)
    expect(gets).toHaveLength(3)
    expect(gets.every((get) => get.lastEventId === undefined && get.sessionId === 'session-1')).toBe(true)
    expect(
      eventsOf(events, 'reconnect-failed').map((event) => isTransportError(event.error) && event.error.status),
    ).toEqual([409, 409])
    expect(errors).toEqual([])
    await client.close()
  })

  it('an empty id resets the cursor: the stream is not resumable, the request outcome-unknown, no Last-Event-ID sent', async () => {
    const s = await setup()
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {method?: string}
        if (body.method !== 'tools/call') return undefined
        return sse([frame('a_1'), frame('', {jsonrpc: '2.0', method: 'notifications/tools/list_changed'})], 'error')
      }),
    )
    const result = await outcome(s.client.callTool({name: 'echo', arguments: {}}))

    expect(codeOf(result)).toBe('outcome-unknown')
    await quiet()
    expect(resumeGets(s)).toEqual([])
    expect(eventsOf(s.events, 'reconnect').filter((event) => event.stream === 'request')).toEqual([])
    await s.client.close()
  })

  it("retry is per stream: stream A's retry does not delay stream B's reconnect", async () => {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    const mock = useMock()
    const {client} = await connect()
    await realTurns(() => mock.requests('GET').length === 1)
    /** A call whose POST stream closes after its priming event (with `retry: retryMs` when given). */
    const call = async (retryMs?: number): Promise<{done: () => boolean; result: Promise<unknown>; cursor: string}> => {
      const index = mock.requests('POST', 'tools/call').length
      mock.faults.cutNext(retryMs === undefined ? {after: 1, how: 'close'} : {after: 1, how: 'close', retryMs})
      let done = false
      const result = outcome(client.callTool({name: 'slow', arguments: {steps: 1}})).finally(() => (done = true))
      await realTurns(() => mock.requests('POST', 'tools/call').length > index)
      return {done: () => done, result, cursor: postEventIds(mock, index)[0]!}
    }
    const resumed = (cursor: string): boolean => mock.requests('GET').some((get) => get.lastEventId === cursor)
    const a = await call(5000)
    const b = await call()

    // B sent no retry: it backs off (a few ms here), it does not wait A's 5 s.
    await advance(50)
    expect(resumed(b.cursor)).toBe(true)
    expect(b.done()).toBe(true)
    expect(resumed(a.cursor)).toBe(false)
    await advance(4900)
    expect(resumed(a.cursor)).toBe(false)
    await advance(100)
    expect(resumed(a.cursor)).toBe(true)
    expect(await a.result).toMatchObject({content: [{type: 'text', text: 'done after 1 steps'}]})
    expect(mock.executions).toEqual({slow: 2})
    await client.close()
  })
})

describe('a cursor belongs to the session that produced it', () => {
  it('a stored cursor is sent with its own session only, never with another one', async () => {
    const store = new InspectableStore()
    const notification = {jsonrpc: '2.0', method: 'notifications/tools/list_changed'}
    const mock = useMock()
    const gets = interceptGets(mock, () => sse([frame('g1_1', notification)], 'open'))
    const first = await connect({store})
    await until(() => store.mentions('g1_1'))
    // From here the store is read-only: session-1's cursor stays in it while the next transports start.
    store.frozen = true
    await first.client.close()

    const resumed = await connect({store})
    await until(() => gets.length === 2)
    await resumed.client.close()
    const other = await connect({store, sessionId: 'session-9'})
    await until(() => gets.length === 3)
    await other.client.close()

    expect(gets).toEqual([
      {sessionId: 'session-1', lastEventId: undefined},
      {sessionId: 'session-1', lastEventId: 'g1_1'},
      {sessionId: 'session-9', lastEventId: undefined},
    ])
    expect(eventsOf(other.events, 'reconnect')).toMatchObject([
      {
        stream: 'standalone',
        branch: 'session-resumption',
        headers: {'mcp-session-id': 'session-9', 'last-event-id': undefined},
      },
    ])
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
  })

  it('after the session expired and the Client re-initialized, the old stream cursor is never sent', async () => {
    const s = await setup()
    const {result, cursor} = await interruptedCall(s, {after: 1, how: 'close', retryMs: 100})
    s.mock.faults.expireSession('session-1')
    await outcome(s.client.listTools())
    expect(codeOf(await result)).toBe('session-expired')
    await s.client.close()
    await s.client.connect(s.transport)
    expect(s.transport.sessionId).toBe('session-2')
    await quiet(250)

    expect(s.gets.filter((get) => get.lastEventId === cursor)).toEqual([])
    expect(s.gets.at(-1)).toEqual({sessionId: 'session-2', lastEventId: undefined})
    expect(s.gets.every((get) => get.lastEventId === undefined || get.sessionId !== undefined)).toBe(true)
    expect(s.mock.executions).toEqual({slow: 1})
    await s.client.close()
  })

  it('re-initializing on a live transport: the old stream cursor is never sent, neither with the new session nor alone', async () => {
    const mock = useMock()
    const gets = interceptGets(mock, passThrough)
    const transport = new ResumableHTTPClientTransport(new URL(url), {reconnect: {minDelayMs: 1, maxDelayMs: 5}})
    const received: JSONRPCMessage[] = []
    transport.onmessage = (message) => received.push(message)
    const initialize = async (id: number): Promise<void> => {
      const params = {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'raw', version: '1'}}
      await transport.send({jsonrpc: '2.0', id, method: 'initialize', params})
      transport.setProtocolVersion('2025-11-25')
      await transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})
    }
    await transport.start()
    await initialize(0)
    // The call's stream closes after its priming event and waits its retry before resuming.
    mock.faults.cutNext({after: 1, how: 'close', retryMs: 100, on: 'POST'})
    await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'slow', arguments: {steps: 1}}})
    const cursor = postEventIds(mock)[0]!
    await initialize(2)
    await quiet(250)

    expect(transport.sessionId).toBe('session-2')
    expect(gets.filter((get) => get.lastEventId === cursor)).toEqual([])
    expect(gets.filter((get) => get.sessionId !== 'session-1')).toEqual([
      {sessionId: 'session-2', lastEventId: undefined},
    ])
    expect(received.find((message) => 'id' in message && message.id === 1)).toMatchObject({
      error: {data: {code: 'aborted'}},
    })
    expect(mock.executions).toEqual({slow: 1})
    await transport.close()
  })

  it('without a session (a server that mints none) a cursor is never sent: the drop is outcome-unknown', async () => {
    const s = await setup(passThrough, {sessions: false})
    s.mock.faults.cutNext({after: 2, how: 'error'})
    const result = outcome(s.client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, withProgress))

    expect(codeOf(await result)).toBe('outcome-unknown')
    await quiet()
    expect(resumeGets(s)).toEqual([])
    expect(s.mock.requests('POST', 'tools/call')).toHaveLength(1)
    await s.client.close()
  })
})
