/**
 * Caps on what the server controls: each is reached by a server behaving badly, and each breach is a
 * `limit-exceeded` event, never a crash, a hang or unbounded memory.
 */
import {getEventListeners} from 'node:events'
import {http} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {CreateMessageRequestSchema, LoggingMessageNotificationSchema} from '@modelcontextprotocol/sdk/types.js'
import {defaultLimits, MemoryStore, type JsonRpcId, type ResumableHTTPClientTransportOptions} from '../../src/index.ts'
import {connect, eventsOf, interceptGets, network, until, url, useMock, warningsDuring} from '../fixtures/harness.ts'
import {flush, msUntil, quiet, realTurns} from '../fixtures/timing.ts'
import {
  answerToolCalls,
  chunkGapMs,
  codeOf,
  encoder,
  eventStream,
  frame,
  holdAnswers,
  result,
  sse,
  tap,
} from '../fixtures/wire.ts'

const progress = (token: unknown, n: number): object => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: {progressToken: token, progress: n},
})

afterEach(() => {
  vi.useRealTimers()
})

/**
 * Connected with `options`, once the standalone GET came; `tools/call` answered with `reply`; every GET from then on
 * recorded in `gets`, and a resume (one with `Last-Event-ID`) answered with event `resumeId` bringing the call's
 * result, or, with no `resumeId`, handed to the mock as any other GET.
 */
async function resumedCall(
  options: ResumableHTTPClientTransportOptions,
  reply: (id: JsonRpcId, token: unknown) => Response,
  resumeId?: string,
) {
  const mock = useMock()
  const harness = await connect(options)
  await until(() => mock.requests('GET').length === 1)
  const calls = answerToolCalls(reply)
  const gets = interceptGets(mock, (get) =>
    resumeId === undefined || get.lastEventId === undefined ? undefined : sse([frame(resumeId, result(calls[0]!.id))]),
  )
  return {...harness, mock, calls, gets}
}

describe('retry from the server', () => {
  it('a retry of 2147483647 ms is cut to limits.maxRetryMs: the stream resumes within a minute and the call completes', async () => {
    const {
      client,
      events,
      calls,
      gets: resumes,
    } = await resumedCall({}, () => sse(['retry: 2147483647\nid: e1\ndata: \n\n'], 'error'), 'e2')
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    const call = client.callTool({name: 'echo'}, undefined, {timeout: 10 * defaultLimits.maxRetryMs})
    // The cut comes 10 ms after the event (fake time), as sse() lets the client read what was sent before it breaks;
    // chunkGapMs more is margin. From then on, the stream waits its capped retry.
    await realTurns(() => eventsOf(events, 'limit-exceeded').length === 1)
    await vi.advanceTimersByTimeAsync(chunkGapMs + 10)
    await realTurns(() => eventsOf(events, 'reconnect-failed').length === 1)
    await flush()
    await vi.advanceTimersByTimeAsync(defaultLimits.maxRetryMs - 100)
    await flush()
    expect(resumes).toEqual([])
    await vi.advanceTimersByTimeAsync(100)
    await realTurns(() => resumes.length === 1)
    expect(resumes).toHaveLength(1)
    vi.useRealTimers()

    expect((await call).content).toEqual([{type: 'text', text: 'ok'}])
    expect(resumes).toEqual([{sessionId: 'session-1', lastEventId: 'e1'}])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {
        type: 'limit-exceeded',
        limit: 'maxRetryMs',
        size: 2147483647,
        max: 60_000,
        stream: 'request',
        requestId: calls[0]!.id,
      },
    ])
    await client.close()
  })

  it.each([
    [500, 'cut to it, and reported: the stream resumes 500 ms after its break', 500],
    [1000, 'taken as it is: the stream resumes 800 ms after its break', 800],
  ])('a retry of 800 ms with limits.maxRetryMs %i is %s', async (maxRetryMs, _what, waited) => {
    const reported = waited < 800
    const {
      client,
      events,
      calls,
      gets: resumes,
    } = await resumedCall({limits: {maxRetryMs}}, () => sse(['retry: 800\nid: e1\ndata: \n\n'], 'error'), 'e2')
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    const call = client.callTool({name: 'echo'})
    await msUntil(() => eventsOf(events, 'reconnect-failed').some((event) => event.stream === 'request'))
    expect(await msUntil(() => resumes.length === 1)).toBe(waited)
    vi.useRealTimers()

    expect((await call).content).toEqual([{type: 'text', text: 'ok'}])
    expect(eventsOf(events, 'limit-exceeded')).toEqual(
      reported
        ? [
            {
              type: 'limit-exceeded',
              limit: 'maxRetryMs',
              size: 800,
              max: maxRetryMs,
              stream: 'request',
              requestId: calls[0]!.id,
            },
          ]
        : [],
    )
    await client.close()
  })

  it('a retry of exactly limits.maxRetryMs is taken as it is, and not reported', async () => {
    const mock = useMock()
    const {client, events} = await connect({limits: {maxRetryMs: 5000}})
    await until(() => mock.requests('GET').length === 1)
    answerToolCalls((id) => sse(['retry: 5000\n\n', frame('e1', result(id))]))
    expect((await client.callTool({name: 'echo'})).content).toEqual([{type: 'text', text: 'ok'}])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([])
    await client.close()
  })
})

const huge = 'x'.repeat(defaultLimits.maxEventIdBytes + 1)

/** `tools/call` answered with e1, an event with ID `badId` (over the cap), the events of `more`, then a cut. */
function overlongId(more: (token: unknown) => string[], badId = huge): (id: JsonRpcId, token: unknown) => Response {
  return (_id, token) =>
    sse([frame('e1', progress(token, 1)), frame(badId, progress(token, 2)), ...more(token)], 'error')
}

describe('event IDs', () => {
  it('an event ID longer than limits.maxEventIdBytes is never sent back: cut right after it, the call is settled outcome-unknown', async () => {
    const {client, events, calls, gets} = await resumedCall(
      {},
      overlongId(() => []),
    )
    const seen: number[] = []
    const error = await client
      .callTool({name: 'echo'}, undefined, {onprogress: ({progress: n}) => seen.push(n)})
      .catch((failure: unknown) => failure)

    expect(codeOf(error)).toBe('outcome-unknown')
    expect(seen).toEqual([1, 2])
    expect(gets.filter((get) => get.lastEventId !== undefined)).toEqual([])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {
        type: 'limit-exceeded',
        limit: 'maxEventIdBytes',
        size: huge.length,
        max: defaultLimits.maxEventIdBytes,
        stream: 'request',
        requestId: calls[0]!.id,
      },
    ])
    await client.close()
  })

  it('after an event ID over the cap, the next valid ID makes the stream resumable again', async () => {
    const {client, events, gets} = await resumedCall(
      {},
      overlongId((token) => [frame('e3', progress(token, 3))]),
      'e4',
    )
    const answer = await client.callTool({name: 'echo'}, undefined, {onprogress: () => {}})

    expect(answer.content).toEqual([{type: 'text', text: 'ok'}])
    expect(gets.filter((get) => get.lastEventId !== undefined)).toEqual([{sessionId: 'session-1', lastEventId: 'e3'}])
    expect(eventsOf(events, 'limit-exceeded')).toHaveLength(1)
    await client.close()
  })

  it('an event ID that is no header value is never sent back, nor handed to the app as a resumption token', async () => {
    // U+20AC is past Latin-1: fetch would refuse it in a Last-Event-ID header.
    const badId = 'e\u20ac2'
    const {client, events, calls, gets} = await resumedCall(
      {},
      overlongId(() => [], badId),
    )
    const tokens: string[] = []
    const error = await client
      .callTool({name: 'echo'}, undefined, {onprogress: () => {}, onresumptiontoken: (token) => tokens.push(token)})
      .catch((failure: unknown) => failure)

    expect(codeOf(error)).toBe('outcome-unknown')
    expect(tokens).toEqual(['e1'])
    expect(gets.filter((get) => get.lastEventId !== undefined)).toEqual([])
    // Not even tried: fetch would refuse the header before any request left.
    expect(eventsOf(events, 'reconnect').filter((event) => event.stream === 'request')).toEqual([])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {
        type: 'limit-exceeded',
        limit: 'maxEventIdBytes',
        size: badId.length,
        max: defaultLimits.maxEventIdBytes,
        stream: 'request',
        requestId: calls[0]!.id,
      },
    ])
    await client.close()
  })

  it.each([
    ['exactly limits.maxEventIdBytes (8) characters is sent back', '12345678'],
    [
      'one character past limits.maxEventIdBytes (8) is never sent back: cut right after it, the call is settled outcome-unknown',
      '123456789',
    ],
  ])('an event ID of %s', async (_what, eventId) => {
    const {client, events, calls, gets} = await resumedCall(
      {limits: {maxEventIdBytes: 8}},
      (_id, token) => sse([frame(eventId, progress(token, 1))], 'error'),
      'e2',
    )
    const answer = await client
      .callTool({name: 'echo'}, undefined, {onprogress: () => {}})
      .catch((error: unknown) => error)

    const sent = eventId.length <= 8
    if (sent) expect(answer).toMatchObject({content: [{type: 'text', text: 'ok'}]})
    else expect(codeOf(answer)).toBe('outcome-unknown')
    expect(gets.filter((get) => get.lastEventId !== undefined)).toEqual(
      sent ? [{sessionId: 'session-1', lastEventId: eventId}] : [],
    )
    expect(eventsOf(events, 'limit-exceeded')).toEqual(
      sent
        ? []
        : [
            {
              type: 'limit-exceeded',
              limit: 'maxEventIdBytes',
              size: 9,
              max: 8,
              stream: 'request',
              requestId: calls[0]!.id,
            },
          ],
    )
    await client.close()
  })

  it('thousands of distinct large event IDs are forgotten by their size, not only by their count', async () => {
    const mock = useMock()
    const {client, events} = await connect()
    await until(() => mock.requests('GET').length === 1)
    // 1,500 IDs of 4,000 characters: 6 M characters, which the count alone (1,024 to 2,048) would all keep.
    const ids = Array.from({length: 1500}, (_, n) => `${n}:`.padEnd(4000, 'x'))
    // At once, as a flood comes: one chunk of 6 MB, not 1,501 paced ones.
    answerToolCalls((id, token) =>
      sse([[...ids.map((eventId, n) => frame(eventId, progress(token, n))), frame('last', result(id))].join('')]),
    )
    let progressed = 0
    await client.callTool({name: 'echo'}, undefined, {onprogress: () => progressed++})

    expect(progressed).toBe(1500)
    // Each report is a generation of remembered IDs dropped for its weight: at most dedupeBytes stay.
    const reports = eventsOf(events, 'limit-exceeded')
    expect(reports.length).toBeGreaterThanOrEqual(Math.floor((1500 * 4000) / defaultLimits.dedupeBytes))
    expect(reports.every((event) => event.limit === 'dedupeBytes' && event.max === defaultLimits.dedupeBytes)).toBe(
      true,
    )
    await client.close()
  })
})

describe('event size', () => {
  it('an event larger than limits.maxEventBytes fails its connection, reported; the stream resumes from the event before', async () => {
    // The large event never ends: without the cap it would be buffered for ever.
    const {client, events, calls, gets} = await resumedCall(
      {limits: {maxEventBytes: 64 * 1024}},
      (_id, token) =>
        sse([frame('e1', progress(token, 1)), `id: e2\ndata: ${'y'.repeat(32 * 1024)}`, 'y'.repeat(64 * 1024)], 'open'),
      'e3',
    )
    const answer = await client.callTool({name: 'echo'})

    expect(answer.content).toEqual([{type: 'text', text: 'ok'}])
    expect(gets.filter((get) => get.lastEventId !== undefined)).toEqual([{sessionId: 'session-1', lastEventId: 'e1'}])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {
        type: 'limit-exceeded',
        limit: 'maxEventBytes',
        size: undefined,
        max: 64 * 1024,
        stream: 'request',
        requestId: calls[0]!.id,
      },
    ])
    await client.close()
  })
})

describe('an event against limits.maxEventBytes', () => {
  const log = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'y'.repeat(7 * 1024)}}
  const thirds = (text: string): string[] =>
    [0, 1, 2].map((third) => text.slice((third * text.length) / 3, ((third + 1) * text.length) / 3))
  it.each([
    ['whole, in one chunk', 4 * 1024, 'fails its connection, which is resumed from the event before'],
    ['whole, in one chunk', 8 * 1024, 'is delivered'],
    ['in three chunks', 4 * 1024, 'fails its connection, which is resumed from the event before'],
    ['in three chunks', 8 * 1024, 'is delivered'],
  ])(
    'an event of 7 Ki characters that arrives %s, with maxEventBytes %i, %s',
    async (arrival, maxEventBytes, outcome) => {
      const {client, events, calls, gets} = await resumedCall(
        {limits: {maxEventBytes}},
        (id, token) => {
          const large = frame('e2', log)
          return sse([
            frame('e1', progress(token, 1)),
            ...(arrival === 'in three chunks' ? thirds(large) : [large]),
            frame('e3', result(id)),
          ])
        },
        'e4',
      )
      const logged: unknown[] = []
      client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (notification) => void logged.push(notification.params.data),
      )
      const answer = await client.callTool({name: 'echo'}, undefined, {onprogress: () => {}})

      expect(answer.content).toEqual([{type: 'text', text: 'ok'}])
      const fails = outcome.startsWith('fails')
      expect(gets.filter((get) => get.lastEventId !== undefined)).toEqual(
        fails ? [{sessionId: 'session-1', lastEventId: 'e1'}] : [],
      )
      expect(logged).toHaveLength(fails ? 0 : 1)
      expect(eventsOf(events, 'limit-exceeded')).toEqual(
        fails
          ? [
              {
                type: 'limit-exceeded',
                limit: 'maxEventBytes',
                size: undefined,
                max: maxEventBytes,
                stream: 'request',
                requestId: calls[0]!.id,
              },
            ]
          : [],
      )
      await client.close()
    },
  )
})

describe('a flood of server requests', () => {
  it('500 pings get every answer, never more than limits.maxConcurrentAnswers answer POSTs open at once, and the stream waits for the Client', async () => {
    const pings = 500
    const mock = useMock()
    let open = 0
    let most = 0
    let held = 0
    let delivered: unknown[] = []
    const answered = new Set<unknown>()
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: unknown; result?: unknown}
        if (body.result === undefined) return undefined
        open++
        most = Math.max(most, open)
        held = Math.max(held, delivered.length - answered.size)
        await new Promise((resolve) => setTimeout(resolve, 1))
        answered.add(body.id)
        open--
        return new Response(null, {status: 202})
      }),
    )
    // One chunk: the flood arrives at once (sse() spaces chunks chunkGapMs apart, time enough to answer each ping).
    interceptGets(mock, () =>
      sse(
        [
          Array.from({length: pings}, (_, n) => frame(`p${n}`, {jsonrpc: '2.0', id: `ping-${n}`, method: 'ping'})).join(
            '',
          ),
        ],
        'open',
      ),
    )
    const {client, events, transport} = await connect()
    delivered = tap(transport)
    await until(() => answered.size === pings, 20_000)

    expect(most).toBe(defaultLimits.maxConcurrentAnswers)
    // The server requests handed to the Client and not yet answered never passed the bound: the stream waited.
    expect(held).toBeLessThanOrEqual(defaultLimits.maxConcurrentAnswers * 8)
    // Both bounds were reached: the answers POSTed at once (8), and the server requests the Client holds
    // unanswered (8 per answer POST: the stream then waits before handing over the next).
    const reports = eventsOf(events, 'limit-exceeded')
    expect(reports.every((event) => event.limit === 'maxConcurrentAnswers')).toBe(true)
    expect(new Set(reports.map((event) => event.max))).toEqual(new Set([8, 64]))
    await client.close()
  }, 20_000)
})

describe('server requests kept for a restart', () => {
  it('are bounded by limits.keptRequestBytes, oldest first, one store record each; a larger one is delivered but not kept', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const keptRequestBytes = 50_000
    const sampling = (n: number, size: number): object => ({
      jsonrpc: '2.0',
      id: `s${n}`,
      method: 'sampling/createMessage',
      params: {messages: [{role: 'user', content: {type: 'text', text: `${n}`.padEnd(size, '.')}}], maxTokens: 10},
    })
    const requests = [...Array.from({length: 10}, (_, n) => sampling(n, 20_000)), sampling(10, 60_000)]
    interceptGets(mock, () =>
      sse(
        requests.map((request, n) => frame(`r${n}`, request)),
        'open',
      ),
    )
    const delivered: unknown[] = []
    const {client, transport, events} = await connect({store, limits: {keptRequestBytes}})
    // The Client holds every request unanswered, as one waiting for a human would.
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      delivered.push(request.params.messages[0]?.content)
      return new Promise(() => {})
    })
    await until(() => delivered.length === 11)
    await until(() => eventsOf(events, 'limit-exceeded').length === 9)

    const records = await store.list(`mcp-resumable-http:${url}#request:`)
    expect(records.sort()).toEqual(['"s8"', '"s9"'].map((id) => `mcp-resumable-http:${url}#request:${id}`))
    expect(eventsOf(events, 'limit-exceeded').map((event) => [event.limit, event.requestId])).toEqual([
      ...Array.from({length: 8}, (_, n) => ['keptRequestBytes', `s${n}`]),
      ['keptRequestBytes', 's10'],
    ])
    await transport.close()
  })
})

describe('options', () => {
  it.each([
    [{maxEventBytes: 0}, 'limits.maxEventBytes must be a whole number >= 1, got 0'],
    [{maxRetryMs: 1.5}, 'limits.maxRetryMs must be a whole number >= 1, got 1.5'],
    [{maxAnswers: 4}, 'Unknown field limits.maxAnswers'],
  ])('limits %j is refused with a TypeError', async (limits, message) => {
    await expect(connect({limits: limits as never})).rejects.toThrow(message)
  })
})

describe('answers waiting their turn', () => {
  /** `pings` server requests on the standalone stream; their answers' POSTs are held until `release`. */
  async function heldAnswers(pings: number) {
    const mock = useMock()
    const held = holdAnswers()
    interceptGets(mock, () =>
      sse(
        [
          Array.from({length: pings}, (_, n) => frame(`p${n}`, {jsonrpc: '2.0', id: `ping-${n}`, method: 'ping'})).join(
            '',
          ),
        ],
        'open',
      ),
    )
    const harness = await connect({limits: {maxConcurrentAnswers: 1}})
    return {...harness, ...held}
  }

  it('wait in order past limits.maxConcurrentAnswers, and the congestion is reported once, with the size it reached', async () => {
    const {client, events, posted, release} = await heldAnswers(4)
    await until(() => posted.length === 1)
    await until(() => eventsOf(events, 'limit-exceeded').length > 0)
    release()
    await until(() => posted.length === 4)
    expect(posted).toEqual(['ping-0', 'ping-1', 'ping-2', 'ping-3'])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {type: 'limit-exceeded', limit: 'maxConcurrentAnswers', size: 2, max: 1, stream: undefined, requestId: undefined},
    ])
    await client.close()
  })

  it('close() aborts the answer POST in flight, and the answers waiting behind it are never sent', async () => {
    const {transport, posted, aborted, release} = await heldAnswers(3)
    await until(() => posted.length === 1)
    const closed = transport.close()
    await until(() => aborted.length === 1, 1000)
    release()
    await closed
    await quiet()
    expect(posted).toEqual(['ping-0'])
    expect(aborted).toEqual(['ping-0'])
  })
})

describe('answers one after another', () => {
  it('leave no listener on the transport behind them: a dozen raise no MaxListenersExceededWarning', async () => {
    const warnings = await warningsDuring(async () => {
      const mock = useMock()
      interceptGets(mock, () =>
        sse(
          Array.from({length: 12}, (_, n) => frame(`p${n}`, {jsonrpc: '2.0', id: `ping-${n}`, method: 'ping'})),
          'open',
        ),
      )
      const {client} = await connect({limits: {maxConcurrentAnswers: 1}})
      await until(
        () => mock.log.filter((entry) => entry.method === 'POST' && entry.rpcMethod === undefined).length === 12,
      )
      await client.close()
    })
    expect(warnings).toEqual([])
  })
})

describe('server requests the Client holds unanswered', () => {
  const sampling = (n: number): object => ({
    jsonrpc: '2.0',
    id: `held-${n}`,
    method: 'sampling/createMessage',
    params: {messages: [{role: 'user', content: {type: 'text', text: `q${n}`}}], maxTokens: 10},
  })

  /** The IDs of the answers to `held-` requests, as the server takes them; `before` may hold one back first. */
  function takeAnswers(before: (id: unknown) => Promise<void> | undefined = () => undefined): unknown[] {
    const taken: unknown[] = []
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: unknown; result?: unknown}
        if (body.result === undefined || !String(body.id).startsWith('held-')) return undefined
        await before(body.id)
        taken.push(body.id)
        return new Response(null, {status: 202})
      }),
    )
    return taken
  }

  /**
   * maxConcurrentAnswers 1: the Client may hold 8; the GET brings `count` sampling requests at once, answered only
   * when the test says, then the messages of `after` (the data of log messages lands in `logged`).
   */
  async function flood(count: number, dedupeBytes?: number, after: object[] = []) {
    const mock = useMock()
    const taken = takeAnswers()
    const frames = [
      ...Array.from({length: count}, (_, n) => frame(`e${n}`, sampling(n))),
      ...after.map((message, n) => frame(`a${n}`, message)),
    ]
    interceptGets(mock, (_get, index) => (index === 0 ? sse(frames, 'open') : undefined))
    const harness = await connect({limits: {maxConcurrentAnswers: 1, dedupeBytes}})
    const gates: (() => void)[] = []
    harness.client.setRequestHandler(CreateMessageRequestSchema, async () => {
      await new Promise<void>((resolve) => gates.push(resolve))
      return {model: 'm', role: 'assistant', content: {type: 'text', text: 'a'}}
    })
    const logged: unknown[] = []
    harness.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (notification) => void logged.push(notification.params.data),
    )
    return {...harness, mock, gates, taken, logged}
  }

  it('are 8 per answer POST allowed; past that the stream waits until half of them are answered, then hands over the next', async () => {
    const {client, events, gates, taken} = await flood(12)
    await until(() => gates.length === 8)
    await quiet(20)
    expect(gates).toHaveLength(8)
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {type: 'limit-exceeded', limit: 'maxConcurrentAnswers', size: 8, max: 8, stream: undefined, requestId: undefined},
    ])
    const handed: number[] = []
    for (let answer = 0; answer < 4; answer++) {
      gates[answer]!()
      await until(() => taken.length === answer + 1)
      await quiet(10)
      handed.push(gates.length)
    }
    // Three answers leave 5 held, more than half of 8: the stream still waits; the fourth leaves 4, and it goes on.
    expect(handed).toEqual([8, 8, 8, 12])
    await client.close()
  })

  it('leave notifications free to pass: only a server request waits for room', async () => {
    const log = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'still here'}}
    const {client, events, gates, logged} = await flood(8, undefined, [log])
    await until(() => gates.length === 8 && logged.length === 1)
    expect(logged).toEqual(['still here'])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([])
    await client.close()
  })

  it("answered after their IDs were forgotten (dedupeBytes 8) still free the Client's room", async () => {
    const {client, gates, taken} = await flood(12, 8)
    await until(() => gates.length === 8)
    for (const gate of gates.slice(0, 4)) gate()
    await until(() => taken.length === 4)
    await until(() => gates.length === 12)
    await client.close()
  })

  it('an answer whose request was forgotten while its POST was on its way ends quietly, and the answers after it go on', async () => {
    const mock = useMock()
    let push: ((text: string) => void) | undefined
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => void (push = (text) => controller.enqueue(new TextEncoder().encode(text))),
    })
    interceptGets(mock, (_get, index) =>
      index === 0 ? new Response(body, {headers: {'content-type': 'text/event-stream'}}) : undefined,
    )
    const held: (() => void)[] = []
    const taken = takeAnswers((id) =>
      id === 'held-0' ? new Promise<void>((resolve) => held.push(resolve)) : undefined,
    )
    // dedupeBytes 8: a generation of IDs holds 4 characters, so each new ID of 6 pushes the one before it out.
    const {client, errors} = await connect({limits: {dedupeBytes: 8}})
    await until(() => push !== undefined)
    push!(frame('e0', sampling(0)))
    await until(() => held.length === 1)
    for (let n = 1; n <= 4; n++) push!(frame(`e${n}`, sampling(n)))
    await until(() => taken.length === 4)
    held[0]!()
    await until(() => taken.length === 5)
    await quiet(20)

    expect([...taken].sort()).toEqual(['held-0', 'held-1', 'held-2', 'held-3', 'held-4'])
    expect(taken.at(-1)).toBe('held-0')
    expect(errors).toEqual([])
    await client.close()
  })

  it('a stream waiting for the Client to answer ends at close() without waiting any more', async () => {
    const {client, transport, gates} = await flood(9)
    await until(() => gates.length === 8)
    let closed = false
    const closing = transport.close().then(() => (closed = true))
    await until(() => closed, 1000)
    await closing
    expect(gates).toHaveLength(8)
    await client.close()
  })

  it('a new session starts with none held: those the old session left unanswered leave the Client its room', async () => {
    const {client, transport, mock, gates, events} = await flood(8)
    await until(() => gates.length === 8)
    mock.faults.expireSession(transport.sessionId)
    await client.callTool({name: 'echo'}).catch(() => 'expired')
    await client.close()
    await client.connect(transport)
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: 'm',
      role: 'assistant',
      content: {type: 'text', text: 'new'},
    }))
    expect((await client.callTool({name: 'ask'})).content).toEqual([{type: 'text', text: 'new'}])
    expect(eventsOf(events, 'limit-exceeded').filter((event) => event.max === 8)).toEqual([])
    await client.close()
  })
})

describe('the weight of remembered server request IDs', () => {
  it.each([
    [
      'string IDs weigh their length: the generations dropped for their weight are reported',
      ['abcd', 'efgh', 'ijkl'],
      true,
    ],
    ['a number ID weighs nothing, and string IDs after it still weigh their length', [7, 'abcd', 'efgh', 'ijkl'], true],
    ['number IDs weigh nothing: nothing is dropped for its weight', [1, 2, 3, 4], false],
  ])('with dedupeBytes 8, %s', async (_what, ids, reported) => {
    const mock = useMock()
    const answered: unknown[] = []
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: unknown; result?: unknown}
        if (body.result === undefined) return undefined
        answered.push(body.id)
        return new Response(null, {status: 202})
      }),
    )
    interceptGets(mock, (_get, index) =>
      index === 0
        ? sse(
            ids.map((id) => frame(undefined, {jsonrpc: '2.0', id, method: 'ping'})),
            'open',
          )
        : undefined,
    )
    const {client, events} = await connect({limits: {dedupeBytes: 8}})
    await until(() => answered.length === ids.length)
    const reports = eventsOf(events, 'limit-exceeded')
    expect(reports.length > 0).toBe(reported)
    expect(new Set(reports.map((event) => JSON.stringify(event)))).toEqual(
      new Set(reported ? [JSON.stringify({type: 'limit-exceeded', limit: 'dedupeBytes', max: 8})] : []),
    )
    await client.close()
  })
})

describe('a stream that waited for room in the Client', () => {
  it('leaves no listener on its signal once it went on: a long-lived stream does not gather one per wait', async () => {
    const mock = useMock()
    const sampling = (n: number): object => ({
      jsonrpc: '2.0',
      id: `held-${n}`,
      method: 'sampling/createMessage',
      params: {messages: [{role: 'user', content: {type: 'text', text: `q${n}`}}], maxTokens: 10},
    })
    // Held until the test's handler is in place: the Client's own would answer them all at once, with no wait.
    let release: () => void = () => {}
    const ready = new Promise<void>((resolve) => (release = resolve))
    const held = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new Uint8Array(0))
        await ready
        controller.enqueue(encoder.encode(Array.from({length: 20}, (_, n) => frame(`e${n}`, sampling(n))).join('')))
      },
    })
    interceptGets(mock, (_get, index) => (index === 0 ? new Response(held, {headers: eventStream}) : undefined))
    // Every signal given an abort listener from now on: the standalone stream's own among them (fetch is given the
    // signal of one connection, not the stream's).
    const added = vi.spyOn(EventTarget.prototype, 'addEventListener')
    const {client, events} = await connect({limits: {maxConcurrentAnswers: 1}})
    const gates: (() => void)[] = []
    let answered = 0
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      await new Promise<void>((resolve) => gates.push(resolve))
      answered++
      return {model: 'm', role: 'assistant', content: {type: 'text', text: 'a'}}
    })
    release()
    // Answered a few at a time: the stream waits for room more than once.
    while (answered < 20) {
      await until(() => gates.length > 0)
      for (const open of gates.splice(0)) open()
      await quiet(5)
    }
    const signals = new Set(
      added.mock.contexts.filter(
        (target, call) => target instanceof AbortSignal && added.mock.calls[call]![0] === 'abort',
      ) as AbortSignal[],
    )
    const listeners = [...signals].map((signal) => getEventListeners(signal, 'abort').length)
    // A signal holds a few listeners for good (the transport's lifetime, a stream's, a
    // connection's): none one per wait.
    expect(
      eventsOf(events, 'limit-exceeded').filter((event) => event.limit === 'maxConcurrentAnswers').length,
    ).toBeGreaterThanOrEqual(2)
    // Some signal was seen: over none, the maximum below would be -Infinity, and pass.
    expect(signals.size).toBeGreaterThan(0)
    expect(Math.max(...listeners)).toBeLessThanOrEqual(3)
    await client.close()
  })
})
