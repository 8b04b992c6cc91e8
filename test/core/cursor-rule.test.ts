/**
 * The cursor rule as a restart sees it: what a stream leaves in the store, and which stored streams a new process
 * resumes. Also how the errors name the stream they are about.
 */
import {describe, expect, it, vi} from 'vitest'
import {connect, eventsOf, interceptGets, storedSession, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {flush, msUntil, quiet, realTurns} from '../fixtures/timing.ts'
import {answerToolCalls, codeOf, frame, result, sse, tap} from '../fixtures/wire.ts'

const listChanged = {jsonrpc: '2.0', method: 'notifications/tools/list_changed'}
const progress = (token: unknown, n: number): object => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: {progressToken: token, progress: n},
})
const namespace = `mcp-resumable-http:${url}`

describe('an empty event ID', () => {
  it('resets the cursor: the stored one is deleted and the stream is re-attached without Last-Event-ID', async () => {
    const mock = useMock()
    const store = new RecordingStore()
    const gets = interceptGets(mock, (_get, index) =>
      index === 0
        ? sse([frame('g_1', listChanged), frame('', listChanged)])
        : index === 1
          ? sse([], 'open')
          : undefined,
    )
    const {client, events} = await connect({store})
    await until(() => gets.length === 2)
    await quiet()

    expect(gets[1]).toEqual({sessionId: 'session-1', lastEventId: undefined})
    expect(eventsOf(events, 'reconnect')).toMatchObject([{stream: 'standalone', branch: 'session-resumption'}])
    expect(store.writes).toContainEqual(expect.objectContaining({op: 'set', key: `${namespace}#stream:standalone`}))
    expect(await store.get(`${namespace}#stream:standalone`)).toBeUndefined()
    await client.close()
  })

  it('resets it every time: events after two empty IDs are all delivered, and no empty token reaches the app', async () => {
    const mock = useMock()
    const {client} = await connect()
    await until(() => mock.requests('GET').length === 1)
    answerToolCalls((id, token) =>
      sse([
        frame('e1', progress(token, 1)),
        frame('', progress(token, 2)),
        frame('', progress(token, 3)),
        frame('e4', result(id)),
      ]),
    )
    const seen: number[] = []
    const tokens: string[] = []
    const answer = await client.callTool({name: 'echo'}, undefined, {
      onprogress: ({progress: n}) => seen.push(n),
      onresumptiontoken: (token) => tokens.push(token),
    })

    expect(answer.content).toEqual([{type: 'text', text: 'ok'}])
    expect(seen).toEqual([1, 2, 3])
    expect(tokens).toEqual(['e1', 'e4'])
    await client.close()
  })
})

describe('stored streams a new process resumes', () => {
  it("hand a previous process's stream's server requests to the Client, and are done with at its answer though the server leaves them open", async () => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(`${namespace}#stream:request:17`, {
      sessionId: 'session-1',
      lastEventId: 'kept-17',
      call: {method: 'tools/call', name: 'ask', clientId: 9},
    })
    const sampling = {
      jsonrpc: '2.0',
      id: 'srv-1',
      method: 'sampling/createMessage',
      params: {messages: [{role: 'user', content: {type: 'text', text: 'asked before'}}], maxTokens: 10},
    }
    interceptGets(mock, (get) =>
      get.lastEventId === 'kept-17'
        ? sse([frame('r1', sampling), frame('r2', listChanged), frame('r3', result(17, 'done'))], 'open')
        : undefined,
    )

    const after = await connect({store})
    await until(() => eventsOf(after.events, 'stream-closed').some((event) => event.stream === 'request'))
    expect(eventsOf(after.events, 'stream-closed').filter((event) => event.stream === 'request')).toMatchObject([
      {requestId: 17, reason: 'completed'},
    ])
    expect(after.sampled).toEqual(['asked before'])
    expect(eventsOf(after.events, 'orphaned-notification')).toMatchObject([
      {method: 'notifications/tools/list_changed', call: {name: 'ask', clientId: 9}},
    ])
    expect(eventsOf(after.events, 'unmatched-response')).toMatchObject([{id: 17}])
    await after.client.close()
  })

  it("wait the stored stream's retry before each attempt after the first, as the server asked the previous process", async () => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(`${namespace}#stream:standalone`, {sessionId: 'session-1', lastEventId: 'g1', retryMs: 3000})
    const gets = interceptGets(mock, (_get, index) =>
      index === 0 ? new Response(null, {status: 503}) : sse([], 'open'),
    )
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      const after = await connect({store, reconnect: {minDelayMs: 1, maxDelayMs: 5}})
      await realTurns(() => gets.length === 1)
      // Re-attaching goes at once; the attempt after its failure waits the stream's retry, not the backoff.
      await vi.advanceTimersByTimeAsync(2900)
      expect(gets).toEqual([{sessionId: 'session-1', lastEventId: 'g1'}])
      await vi.advanceTimersByTimeAsync(200)
      expect(gets).toEqual([
        {sessionId: 'session-1', lastEventId: 'g1'},
        {sessionId: 'session-1', lastEventId: 'g1'},
      ])
      await after.client.close()
    } finally {
      vi.useRealTimers()
    }
  })

  it('only records keyed by the standalone stream or a non-negative integer request ID', async () => {
    const mock = useMock()
    const store = await storedSession()
    const record = (lastEventId: string) => ({
      sessionId: 'session-1',
      lastEventId,
      call: {method: 'tools/call', name: 'echo', clientId: 9},
    })
    for (const [key, cursor] of [
      ['request:17', 'kept-17'],
      ['old-request:9', 'other-name'],
      ['request:-1', 'negative'],
      ['request:1.5', 'fraction'],
      ['request:99999999999999999999', 'past-safe-integers'],
      ['request:', 'empty'],
      ['requests:8', 'other-prefix'],
      ['other:9', 'other-kind'],
    ]) {
      await store.set(`${namespace}#stream:${key}`, record(cursor!))
    }

    const gets = interceptGets(mock, (get) =>
      get.lastEventId === undefined ? undefined : new Response(null, {status: 405}),
    )
    const after = await connect({store})
    await until(() => gets.some((get) => get.lastEventId === 'kept-17'))
    await quiet()
    expect(gets.map((get) => get.lastEventId).filter((cursor) => cursor !== undefined)).toEqual(['kept-17'])
    await after.client.close()
  })
})

describe('errors name their stream', () => {
  it('the standalone stream given up, and a request whose stream cannot be resumed', async () => {
    const mock = useMock()
    interceptGets(mock, (_get, index) =>
      index === 0 ? sse([frame(undefined, listChanged)]) : new Response(null, {status: 403}),
    )
    const {client, errors} = await connect()
    await until(() => errors.length === 1)
    expect(errors[0]!.message).toMatch(/^GET the standalone GET stream/)

    mock.faults.cutNext({after: 1, how: 'error', on: 'POST'})
    const failure = await client
      .callTool({name: 'slow', arguments: {steps: 2}})
      .catch((error: unknown) => error as Error)
    expect(codeOf(failure)).toBe('outcome-unknown')
    expect((failure as Error).message).toMatch(/: the response stream of request \d+/)
    await client.close()
  })
})

describe('why a call was settled outcome-unknown', () => {
  const held = (): Response => sse([], 'open')
  it.each([
    [
      'its stream broke before any event ID',
      [] as string[],
      held,
      /the response stream of request (\d+): the stream broke before any event ID; the request was not sent again$/,
      [],
    ],
    [
      'the server refused its cursor',
      [frame('p1')],
      () => new Response(null, {status: 400}),
      /the response stream of request (\d+): The server refused Last-Event-ID "p1" of the response stream of request \1 \(HTTP 400\); the request was not sent again$/,
      [],
    ],
    [
      'every resumption closed before any new event',
      [frame('p1')],
      () => sse([]),
      /the response stream of request (\d+) could not be resumed: the response stream of request \1 closed before any new event; the request was not sent again$/,
      ['network', 'network'],
    ],
    [
      'every resumption stayed silent',
      [frame('p1')],
      held,
      /the response stream of request (\d+): 4 resumptions in a row brought nothing new within 50 ms, the last from Last-Event-ID "p1"; the request was not sent again$/,
      [],
    ],
    [
      'every resumption brought nothing but a retry',
      [frame('p1')],
      () => sse(['retry: 10\n\n'], 'open'),
      /the response stream of request (\d+): 4 resumptions in a row brought nothing new within 50 ms, the last from Last-Event-ID "p1"; the request was not sent again$/,
      [],
    ],
  ] as const)(
    '%s: the message says so, names the stream and the cursor, and nothing reaches onerror',
    async (_what, chunks, resumption, message, failedAttempts) => {
      const mock = useMock()
      interceptGets(mock, (get) => (get.lastEventId === undefined ? held() : resumption()))
      // maxDelayMs is also how long a connection must live to count as healthy: far above what a loaded machine takes.
      const {client, errors, events} = await connect({
        reconnect: {maxAttempts: 2, minDelayMs: 1, maxDelayMs: 1000},
        resumeTimeoutMs: 50,
      })
      answerToolCalls(() => sse([...chunks], 'error'))
      const failure = await client.callTool({name: 'echo'}).catch((error: unknown) => error as Error)
      expect(codeOf(failure)).toBe('outcome-unknown')
      expect(failure.message).toMatch(message)
      expect(errors).toEqual([])
      const attempts = eventsOf(events, 'reconnect-failed').filter(
        (event) => event.stream === 'request' && event.attempt > 0,
      )
      expect(attempts.map((event) => codeOf(event.error))).toEqual(failedAttempts)
      // The POST's connection broke: said once, as it came, at attempt 0.
      const drops = eventsOf(events, 'reconnect-failed').filter(
        (event) => event.stream === 'request' && event.attempt === 0,
      )
      expect(drops.map((event) => event.error.message)).toEqual(['terminated'])
      await client.close()
    },
  )

  it('a refused cursor of the standalone stream reaches onerror with its status, the stream named', async () => {
    const mock = useMock()
    interceptGets(mock, (_get, index) =>
      index === 0
        ? sse([frame('g_1', listChanged)])
        : index === 1
          ? new Response(null, {status: 400})
          : sse([], 'open'),
    )
    const {client, errors} = await connect()
    await until(() => errors.length === 1)
    expect(errors[0]).toMatchObject({
      code: 'resumption-rejected',
      status: 400,
      message: 'The server refused Last-Event-ID "g_1" of the standalone GET stream (HTTP 400)',
    })
    await client.close()
  })
})

describe('the deadline of a resumed response stream', () => {
  /** A call whose POST stream breaks after `p1`, resumed into a stream that stays silent; the transport's messages. */
  async function silentResumption(resumeTimeoutMs: number) {
    const mock = useMock()
    const gets = interceptGets(mock, () => sse([], 'open'))
    const {client, transport} = await connect({reconnect: {minDelayMs: 1, maxDelayMs: 2}, resumeTimeoutMs})
    const messages = tap(transport)
    answerToolCalls(() => sse([frame('p1')], 'error'))
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    // Sent by hand: the SDK Client's own request timeout would run on the fake clock too.
    await transport.send({jsonrpc: '2.0', id: 'call', method: 'tools/call', params: {name: 'echo'}})
    await msUntil(() => gets.some((get) => get.lastEventId === 'p1'))
    await flush()
    const settled = (): boolean => messages.some((message) => 'id' in message && message.id === 'call')
    const resumes = (): number => gets.filter((get) => get.lastEventId === 'p1').length
    return {client, settled, resumes}
  }

  it.each([
    [2 ** 31 - 1, 'is resumed again', true],
    // Past 2^31 - 1 ms a timer fires at once: no deadline at all.
    [2 ** 31, 'is never resumed again', false],
  ])('with resumeTimeoutMs %s, a resumed stream that stays silent that long %s', async (limit, _outcome, cut) => {
    try {
      const {client, settled, resumes} = await silentResumption(limit)
      await vi.advanceTimersByTimeAsync(2 ** 31 - 2)
      await flush()
      expect(resumes()).toBe(1)
      await vi.advanceTimersByTimeAsync(2)
      await flush()
      // The backoff before the next resumption (minDelayMs 1, maxDelayMs 2).
      await vi.advanceTimersByTimeAsync(3)
      await flush()
      expect(resumes()).toBe(cut ? 2 : 1)
      expect(settled()).toBe(false)
      await client.close()
    } finally {
      vi.useRealTimers()
    }
  })

  it('close() while the resumed stream is silent leaves no deadline running', async () => {
    try {
      const {client} = await silentResumption(60_000)
      expect(vi.getTimerCount()).toBe(1)
      await client.close()
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe("a stored request stream's retry", () => {
  it('is waited before a next process resumes that stream, while the standalone stream re-attaches at once', async () => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(`${namespace}#stream:request:17`, {
      sessionId: 'session-1',
      lastEventId: 'kept-17',
      retryMs: 3000,
      call: {method: 'tools/call', name: 'ask', clientId: 9},
    })
    const gets = interceptGets(mock, (get) =>
      get.lastEventId === 'kept-17' ? sse([frame('r1', result(17, 'done'))], 'open') : sse([], 'open'),
    )
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      const after = await connect({store})
      await realTurns(() => gets.length === 1)
      await vi.advanceTimersByTimeAsync(2900)
      expect(gets).toEqual([{sessionId: 'session-1', lastEventId: undefined}])
      await vi.advanceTimersByTimeAsync(200)
      await realTurns(() => gets.length === 2)
      expect(gets).toEqual([
        {sessionId: 'session-1', lastEventId: undefined},
        {sessionId: 'session-1', lastEventId: 'kept-17'},
      ])
      await after.client.close()
    } finally {
      vi.useRealTimers()
    }
  })
})

describe("a next process's standalone stream", () => {
  it('resumes from its stored cursor, then, once it has read its replay, re-attaches without it: server requests of unrecorded streams come back', async () => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(`${namespace}#stream:standalone`, {sessionId: 'session-1', lastEventId: 'g1'})
    const gets = interceptGets(mock, () => sse([], 'open'))
    const after = await connect({store})
    await until(() => gets.length === 2, 1000)
    expect(gets).toEqual([
      {sessionId: 'session-1', lastEventId: 'g1'},
      {sessionId: 'session-1', lastEventId: undefined},
    ])
    await after.client.close()
  })
})
