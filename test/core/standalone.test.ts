/**
 * The standalone GET stream: opened after `notifications/initialized`,
 * absent on 405, polled and re-attached while it keeps breaking, given up only after enough failures in a row.
 */
import {http} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {isTransportError, type JsonRpcId, type ResumableHTTPClientTransportOptions} from '../../src/index.ts'
import type {ReferenceServer} from '../../src/testing/index.ts'
import {connect, eventsOf, interceptGets, network, until, url, useMock, type Harness} from '../fixtures/harness.ts'
import {advance, quiet, realTurns} from '../fixtures/timing.ts'
import {answerToolCalls, codeOf, frame, result, sse} from '../fixtures/wire.ts'

const listChanged = {jsonrpc: '2.0', method: 'notifications/tools/list_changed'}

function sampling(id: string): object {
  return {
    jsonrpc: '2.0',
    id,
    method: 'sampling/createMessage',
    params: {messages: [{role: 'user', content: {type: 'text', text: id}}], maxTokens: 10},
  }
}

const status = (code: number) => (): Response => new Response(null, {status: code})
const held = (): Response => sse([], 'open')

interface SeenGet {
  sessionId: string | undefined
  lastEventId: string | undefined
}

/** Answers the n-th GET with `script[n]`, every later one with a stream held open; returns the GETs seen. */
function scriptGets(script: (() => Response | Promise<Response>)[]): SeenGet[] {
  const gets: SeenGet[] = []
  network.use(
    http.get(url, ({request}) => {
      gets.push({
        sessionId: request.headers.get('mcp-session-id') ?? undefined,
        lastEventId: request.headers.get('last-event-id') ?? undefined,
      })
      return (script[gets.length - 1] ?? held)()
    }),
  )
  return gets
}

/** The standalone stream was re-attached once, as a session resumption: with the session ID, without a cursor. */
function expectOneReattach({events, transport}: Pick<Harness, 'events' | 'transport'>): void {
  expect(eventsOf(events, 'reconnect')).toMatchObject([
    {
      stream: 'standalone',
      branch: 'session-resumption',
      headers: {'mcp-session-id': 'session-1', 'last-event-id': undefined},
    },
  ])
  expect(transport.metrics.sessionResumptions).toBe(1)
}

/** Connects under fake timers (setTimeout only: the network still runs) and waits for the GETs `seen` to be 1. */
async function connectFaked(options: ResumableHTTPClientTransportOptions, seen: SeenGet[]): Promise<Harness> {
  vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
  const harness = await connect(options)
  await realTurns(() => seen.length === 1)
  return harness
}

afterEach(() => {
  vi.useRealTimers()
})

describe('the standalone GET stream', () => {
  it('the GET opens after notifications/initialized, with the session and protocol version', async () => {
    const mock = useMock()
    const {client, events} = await connect()
    await until(() => mock.requests('GET').length === 1)

    expect(mock.log.map((entry) => [entry.method, entry.rpcMethod])).toEqual([
      ['POST', 'initialize'],
      ['POST', 'notifications/initialized'],
      ['GET', undefined],
    ])
    expect(mock.requests('GET')).toMatchObject([
      {sessionId: 'session-1', lastEventId: undefined, protocolVersion: '2025-11-25'},
    ])
    expect(eventsOf(events, 'stream-opened')).toEqual([
      {
        type: 'stream-opened',
        stream: 'standalone',
        requestId: undefined,
        headers: {'mcp-session-id': 'session-1', 'last-event-id': undefined},
      },
    ])
    await client.close()
  })

  it('405 means no standalone channel: not reported to onerror, never retried', async () => {
    const mock = useMock({standalone: false})
    const {client, events, errors, transport} = await connect()
    await until(() => mock.requests('GET').length === 1)
    await client.callTool({name: 'echo', arguments: {}})
    await quiet()

    expect(mock.requests('GET')).toHaveLength(1)
    expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'standalone')).toMatchObject([
      {reason: 'not-offered'},
    ])
    expect(eventsOf(events, 'reconnect')).toEqual([])
    expect(errors).toEqual([])
    expect(transport.metrics.sessionResumptions + transport.metrics.streamResumptions).toBe(0)
    await client.close()
  })

  it('a dropped connection is reported once as a failed reconnect of attempt 0, with its error, and resumed from its cursor', async () => {
    useMock()
    const gets = scriptGets([() => sse([frame('g1', listChanged)], 'error'), () => sse([], 'open')])
    const {client, events, errors} = await connect()
    await until(() => gets.length === 2)

    expect(gets.map((get) => get.lastEventId)).toEqual([undefined, 'g1'])
    expect(eventsOf(events, 'reconnect-failed')).toEqual([
      {
        type: 'reconnect-failed',
        stream: 'standalone',
        requestId: undefined,
        attempt: 0,
        error: expect.objectContaining({message: 'terminated'}),
      },
    ])
    // A background stream's drop is no failure of the app's: onerror stays quiet while it reconnects.
    expect(errors).toEqual([])
    await client.close()
  })

  it("a GET closed with a cursor is polled with Last-Event-ID after the stream's retry", async () => {
    useMock()
    const gets = scriptGets([() => sse([`retry: 3000\n${frame('g_1', listChanged)}`])])
    const {client, events, transport} = await connectFaked({}, gets)
    expect(gets).toHaveLength(1)
    await advance(2990)
    expect(gets).toHaveLength(1)
    await advance(20)

    expect(gets).toEqual([
      {sessionId: 'session-1', lastEventId: undefined},
      {sessionId: 'session-1', lastEventId: 'g_1'},
    ])
    expect(eventsOf(events, 'reconnect')).toMatchObject([
      {
        stream: 'standalone',
        branch: 'stream-resumption',
        headers: {'mcp-session-id': 'session-1', 'last-event-id': 'g_1'},
      },
    ])
    expect(transport.metrics.streamResumptions).toBe(1)
    await client.close()
  })

  it('a GET closed without a cursor (and no retry) is re-attached with a plain GET after a backoff', async () => {
    useMock()
    const gets = scriptGets([() => sse([frame(undefined, listChanged)])])
    const {client, events, transport} = await connectFaked({reconnect: {minDelayMs: 1000, maxDelayMs: 2000}}, gets)
    expect(gets).toHaveLength(1)
    await advance(990)
    // No `retry`: exponential backoff with jitter, so not at once.
    expect(gets).toHaveLength(1)
    await advance(1020)

    expect(gets).toEqual([
      {sessionId: 'session-1', lastEventId: undefined},
      {sessionId: 'session-1', lastEventId: undefined},
    ])
    expectOneReattach({events, transport})
    await client.close()
  })

  it('a GET that opened and closed before any event is re-attached as a session resumption', async () => {
    useMock()
    const gets = scriptGets([() => sse([])])
    const {client, events, transport} = await connect()
    await until(() => gets.length === 2)

    expect(gets[1]).toEqual({sessionId: 'session-1', lastEventId: undefined})
    expectOneReattach({events, transport})
    await client.close()
  })

  it('keeps retrying with capped backoff; after maxAttempts failures in a row it degrades, says so once, and goes on until the server answers', async () => {
    useMock()
    const progress = (): Response => sse([frame(undefined, listChanged)])
    // 2 failures, progress (the count starts again), 3 failures: degraded; 2 more slow failures, then it recovers.
    const script = [
      progress,
      status(503),
      status(503),
      progress,
      status(503),
      status(503),
      status(503),
      status(503),
      status(503),
    ]
    const gets = scriptGets(script)
    const {client, events, errors} = await connectFaked(
      {reconnect: {maxAttempts: 3, minDelayMs: 100, maxDelayMs: 300, factor: 10}},
      gets,
    )
    // Uncapped, the second backoff of each series alone would be 1000 ms or more.
    await advance(2000)
    expect(eventsOf(events, 'stream-degraded')).toMatchObject([{stream: 'standalone'}])
    await advance(60_000)

    // Held open once the server answered: no further GET, however long.
    expect(gets).toHaveLength(script.length + 1)
    expect(errors).toHaveLength(1)
    expect(isTransportError(errors[0], 'http') && errors[0].status).toBe(503)
    expect(eventsOf(events, 'stream-recovered')).toMatchObject([{stream: 'standalone'}])
    expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'standalone')).toEqual([])
    await client.close()
  })

  it('once degraded, tries at once when a request succeeds rather than waiting its slow cadence out', async () => {
    const mock = useMock()
    const script = [() => sse([frame(undefined, listChanged)]), status(503), status(503)]
    const gets = scriptGets(script)
    const {client, events} = await connectFaked(
      {reconnect: {maxAttempts: 2, minDelayMs: 10, maxDelayMs: 600_000}},
      gets,
    )
    await advance(1000)
    expect(eventsOf(events, 'stream-degraded')).toHaveLength(1)
    expect(gets).toHaveLength(3)

    await client.listTools()
    await realTurns(() => eventsOf(events, 'stream-recovered').length === 1)
    expect(gets).toHaveLength(4)
    expect(mock.requests('POST', 'tools/list')).toHaveLength(1)
    await client.close()
  })

  it("reconnectionOptions keep the SDK's meaning: maxRetries failures in a row degrade the stream, delays capped by maxReconnectionDelay", async () => {
    useMock()
    const script = [() => sse([frame(undefined, listChanged)]), status(503), status(503), status(503)]
    const gets = scriptGets(script)
    const reconnectionOptions = {
      maxRetries: 2,
      initialReconnectionDelay: 100,
      maxReconnectionDelay: 300,
      reconnectionDelayGrowFactor: 10,
    }
    const {client, events, errors} = await connectFaked({reconnect: undefined, reconnectionOptions}, gets)
    // Uncapped, the second backoff alone would be 1000 ms or more; the first slow attempt comes 300 ms later.
    await advance(500)
    expect(gets).toHaveLength(3)
    expect(eventsOf(events, 'stream-degraded')).toHaveLength(1)
    await advance(60_000)

    expect(gets).toHaveLength(5)
    expect(errors).toHaveLength(1)
    expect(eventsOf(events, 'stream-recovered')).toHaveLength(1)
    await client.close()
  })

  it('409 on a reconnect without a cursor is retried', async () => {
    useMock()
    const gets = scriptGets([() => sse([frame(undefined, listChanged)]), status(409), status(409)])
    const {client, events, errors} = await connect()
    await until(() => gets.length === 4)
    await quiet()

    expect(gets).toHaveLength(4)
    expect(gets.every((get) => get.sessionId === 'session-1' && get.lastEventId === undefined)).toBe(true)
    expect(
      eventsOf(events, 'reconnect-failed')
        .filter((event) => event.attempt > 0)
        .map((event) => isTransportError(event.error) && event.error.status),
    ).toEqual([409, 409])
    expect(eventsOf(events, 'cursor-rejected')).toEqual([])
    expect(errors).toEqual([])
    await client.close()
  })

  const json = (code: number) => (): Response =>
    new Response('{}', {status: code, headers: {'content-type': 'application/json'}})
  it.each([
    ['a 200 that is not an event stream', json(200), 'ended-by-server'],
    ['202', status(202), 'ended-by-server'],
    ['299', status(299), 'ended-by-server'],
    ['405', status(405), 'not-offered'],
    ['408', status(408), 'retried'],
    ['409', status(409), 'retried'],
    ['429', status(429), 'retried'],
    ['500', status(500), 'retried'],
    ['599', status(599), 'retried'],
    ['403', status(403), 'degraded'],
    ['422', status(422), 'degraded'],
    ['499', status(499), 'degraded'],
  ] as const)('a reconnect without a cursor answered %s is %s', async (_what, answer, outcome) => {
    useMock()
    // A stream without event IDs, the reconnect under test, then 405 to end what is retried.
    const gets = scriptGets([() => sse([frame(undefined, listChanged)]), answer, status(405)])
    const {client, events, errors} = await connect()
    await until(() => eventsOf(events, 'stream-closed').some((event) => event.stream === 'standalone'))

    // Retried, or degraded and tried again at its slow cadence: either way the next GET meets the 405.
    const triedAgain = outcome === 'retried' || outcome === 'degraded'
    expect(gets).toHaveLength(triedAgain ? 3 : 2)
    expect(gets.every((get) => get.lastEventId === undefined)).toBe(true)
    const reason = triedAgain ? 'not-offered' : outcome
    expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'standalone')).toMatchObject([{reason}])
    expect(eventsOf(events, 'stream-degraded')).toHaveLength(outcome === 'degraded' ? 1 : 0)
    expect(errors).toHaveLength(outcome === 'degraded' ? 1 : 0)
    await client.close()
  })

  // [docs/failures.md#a-session-the-server-no-longer-knows] such a GET carries the session and nothing else.
  it.each([404, 400, 410])(
    'a reconnect without a cursor answered %i ends the session: session-expired once, nothing sent with it again',
    async (code) => {
      const mock = useMock()
      const gets = scriptGets([() => sse([frame(undefined, listChanged)]), status(code)])
      const {client, transport, events, errors} = await connect()
      await until(() => eventsOf(events, 'session-expired').length === 1)

      expect(eventsOf(events, 'session-expired')).toEqual([
        {type: 'session-expired', sessionId: 'session-1', settledRequests: 0},
      ])
      expect(errors).toMatchObject([
        {code: 'session-expired', status: code, message: `Session session-1 has expired (HTTP ${code} on GET)`},
      ])
      expect(transport.sessionId).toBeUndefined()
      const failure = await client.listTools().catch((error: unknown) => error)
      expect(isTransportError(failure, 'session-expired')).toBe(true)
      expect(gets).toHaveLength(2)
      expect(mock.requests('POST', 'tools/list')).toEqual([])
      await client.close()
    },
  )

  it.each([
    ['400', 400, 'refused'],
    ['503', 503, 'kept'],
    ['405', 405, 'ended'],
    ['204', 204, 'ended'],
  ] as const)(
    'a reconnect with a cursor answered %s: the cursor is %s (refused by a 4xx that is not 404 or 405, kept through a 5xx)',
    async (_what, code, cursor) => {
      useMock()
      const gets = scriptGets([() => sse([frame('g_1', listChanged)]), status(code), status(405)])
      const {client, events} = await connect()
      await until(() => eventsOf(events, 'stream-closed').some((event) => event.stream === 'standalone'))

      expect(gets[1]).toEqual({sessionId: 'session-1', lastEventId: 'g_1'})
      const refused = cursor === 'refused'
      expect(eventsOf(events, 'cursor-rejected')).toEqual(
        refused ? [expect.objectContaining({stream: 'standalone', lastEventId: 'g_1', status: code})] : [],
      )
      // A refused cursor is never sent again: the next GET goes without it; one the server could not
      // serve now, with it.
      if (cursor === 'ended') expect(gets).toHaveLength(2)
      else expect(gets[2]).toEqual({sessionId: 'session-1', lastEventId: refused ? undefined : 'g_1'})
      await client.close()
    },
  )

  it('server requests arriving on the GET are handled once, de-duplicated by id across replays', async () => {
    const mock: ReferenceServer = useMock()
    const answered = (id: string): number => mock.answers.get(id)?.length ?? 0
    const gets = scriptGets([
      () => sse([frame('g_1', sampling('srv-7'))]),
      // The resume replays from the start: g_1 again, srv-7 again under a new event ID, then srv-8.
      async () => {
        await until(() => answered('srv-7') === 1)
        return sse(
          [frame('g_1', sampling('srv-7')) + frame('g_2', sampling('srv-7')) + frame('g_3', sampling('srv-8'))],
          'open',
        )
      },
    ])
    const {client, sampled, events} = await connect()
    await until(() => answered('srv-8') === 1)
    await quiet()

    expect(gets[1]).toEqual({sessionId: 'session-1', lastEventId: 'g_1'})
    expect(sampled).toHaveLength(2)
    expect(answered('srv-8')).toBe(1)
    // What reached the server for srv-7 is the one answer the Client gave, never a second run of the handler.
    const answers = mock.answers.get('srv-7') ?? []
    expect(answers.length).toBeGreaterThanOrEqual(1)
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1)
    expect(eventsOf(events, 'duplicate-dropped')).toEqual([
      {type: 'duplicate-dropped', what: 'event', id: 'g_1'},
      {type: 'duplicate-dropped', what: 'server-request', id: 'srv-7'},
    ])
    await client.close()
  })
})

describe('after a response stream ends without its answer', () => {
  it('the server ended the stream of a call: the healthy standalone stream re-attaches at once, without its cursor, and reports no failed reconnect', async () => {
    const mock = useMock()
    const gets = interceptGets(mock, (get, index) =>
      index === 0
        ? sse([frame('g1', listChanged)], 'open')
        : get.lastEventId === 'p1'
          ? new Response(null, {status: 204})
          : sse([], 'open'),
    )
    const {client, events} = await connect()
    await until(() => gets.length === 1)
    answerToolCalls(() => sse([frame('p1')], 'error'))
    expect(codeOf(await client.callTool({name: 'echo'}).catch((error: unknown) => error))).toBe('outcome-unknown')
    await until(() => gets.length === 3)

    expect(gets.map((get) => get.lastEventId)).toEqual([undefined, 'p1', undefined])
    expect(eventsOf(events, 'reconnect').at(-1)).toMatchObject({
      stream: 'standalone',
      branch: 'session-resumption',
      attempt: 1,
    })
    // Ended on purpose, its connection failed nothing.
    expect(eventsOf(events, 'reconnect-failed').filter((event) => event.stream === 'standalone')).toEqual([])
    await client.close()
  })

  it('the standalone stream reconnects without its cursor, so the server sends again the requests that call left', async () => {
    const mock = useMock()
    const gets: (string | undefined)[] = []
    let cut: (() => void) | undefined
    network.use(
      http.get(url, ({request}) => {
        gets.push(request.headers.get('last-event-id') ?? undefined)
        if (gets.length > 1) return sse([], 'open')
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(frame('g1', listChanged)))
            cut = () => controller.error(new TypeError('terminated'))
          },
        })
        return new Response(body, {headers: {'content-type': 'text/event-stream'}})
      }),
      // The call's stream breaks before any event ID: its answer cannot come back.
      http.post(url, async ({request}) =>
        ((await request.clone().json()) as {method?: string}).method === 'tools/call'
          ? sse([], 'error')
          : mock.handle(request),
      ),
    )
    const {client, events} = await connect({reconnect: {minDelayMs: 1, maxDelayMs: 2}})
    await until(() => cut !== undefined && eventsOf(events, 'stream-opened').length === 1)
    const failed = await client.callTool({name: 'echo'}).catch((error: unknown) => error)
    expect(codeOf(failed)).toBe('outcome-unknown')

    cut!()
    await until(() => gets.length === 2)
    // The standalone stream held g1, yet it is re-attached without it: a session resumption.
    expect(gets).toEqual([undefined, undefined])
    expect(eventsOf(events, 'reconnect').at(-1)).toMatchObject({stream: 'standalone', branch: 'session-resumption'})
    await client.close()
  })
})

describe("the answer to a request stream's resumption", () => {
  const cutPost = (chunks: string[]): void => {
    answerToolCalls(() => sse(chunks, 'error'))
  }
  it.each([
    [
      'the standalone stream ended by the server (204), the resumption answered 405',
      204,
      405,
      'not-offered',
      /the response stream of request \d+ cannot be resumed: the server offers no GET stream \(HTTP 405\)/,
      true,
    ],
    [
      'the standalone stream ended by the server (204), the resumption answered 204',
      204,
      204,
      'ended-by-server',
      /The server ended the response stream of request \d+ before answering \(HTTP 204\)/,
      true,
    ],
    [
      'no standalone stream offered (405), the resumption answered 204',
      405,
      204,
      'ended-by-server',
      /The server ended the response stream of request \d+ before answering \(HTTP 204\)/,
      false,
    ],
  ] as const)(
    '%s: the call is settled outcome-unknown with why, and a later call that broke re-attaches the standalone stream only where it is offered',
    async (_what, standalone, resumption, reason, message, offered) => {
      const mock = useMock()
      const gets = scriptGets([status(standalone), status(resumption)])
      const {client, events} = await connect()
      await until(() => eventsOf(events, 'stream-closed').some((event) => event.stream === 'standalone'))

      // The call's stream brings an event ID, then breaks: resumed with it, and the GET's answer ends it.
      cutPost([frame('p1')])
      const first = await client.callTool({name: 'echo'}).catch((error: unknown) => error as Error)
      expect(codeOf(first)).toBe('outcome-unknown')
      expect(first.message).toMatch(message)
      expect(gets[1]).toEqual({sessionId: 'session-1', lastEventId: 'p1'})
      expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'request')).toMatchObject([{reason}])

      // A call whose stream breaks before any event ID: its server requests come back only on a
      // fresh standalone stream.
      cutPost([])
      expect(codeOf(await client.callTool({name: 'echo'}).catch((error: unknown) => error))).toBe('outcome-unknown')
      if (offered) await until(() => gets.length === 3)
      else await quiet()
      expect(gets.slice(2)).toEqual(offered ? [{sessionId: 'session-1', lastEventId: undefined}] : [])
      expect(mock.requests('POST', 'tools/call')).toHaveLength(0)
      await client.close()
    },
  )
})

describe('without a session', () => {
  it('a 404 to the GET is no expired session: the server offers no GET stream', async () => {
    useMock({sessions: false})
    const gets = scriptGets([status(404)])
    const {client, events, errors} = await connect()
    await until(() => eventsOf(events, 'stream-closed').length === 1)
    await expect(client.listTools()).resolves.toMatchObject({tools: expect.any(Array)})

    expect(gets).toEqual([{sessionId: undefined, lastEventId: undefined}])
    expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'standalone')).toMatchObject([
      {reason: 'not-offered'},
    ])
    expect(eventsOf(events, 'session-expired')).toEqual([])
    expect(errors).toEqual([])
    await client.close()
  })

  it('a broken standalone stream is abandoned, and a call whose stream broke re-attaches nothing: no session to attach to', async () => {
    useMock({sessions: false})
    const gets = scriptGets([() => sse([frame(undefined, listChanged)])])
    const {client, events} = await connect()
    await until(() => eventsOf(events, 'stream-closed').some((event) => event.stream === 'standalone'))
    answerToolCalls(() => sse([], 'error'))
    expect(codeOf(await client.callTool({name: 'echo'}).catch((error: unknown) => error))).toBe('outcome-unknown')
    await quiet()

    expect(gets).toEqual([{sessionId: undefined, lastEventId: undefined}])
    expect(eventsOf(events, 'stream-closed')).toMatchObject([
      {stream: 'standalone', reason: 'abandoned'},
      {stream: 'request', reason: 'abandoned'},
    ])
    expect(eventsOf(events, 'reconnect')).toEqual([])
    await client.close()
  })
})

describe('degraded', () => {
  it('an authorization flow that failed on the GET reaches onerror once, as the stream degrades', async () => {
    useMock()
    const gets = scriptGets([status(401)])
    const denied = new Error('the user must log in')
    const authProvider = {token: () => Promise.resolve('token-1'), onUnauthorized: () => Promise.reject(denied)}
    const {client, events, errors} = await connect({authProvider})
    await until(() => eventsOf(events, 'stream-recovered').length === 1)

    expect(gets).toHaveLength(2)
    expect(eventsOf(events, 'stream-degraded')).toMatchObject([{stream: 'standalone', error: denied}])
    expect(errors).toEqual([denied])
    await client.close()
  })

  it('tries one GET every maxDelayMs, not a series of attempts', async () => {
    useMock()
    const gets = scriptGets([
      () => sse([frame(undefined, listChanged)]),
      ...Array.from({length: 20}, () => status(503)),
    ])
    const {client, events} = await connectFaked(
      {reconnect: {maxAttempts: 2, minDelayMs: 10, maxDelayMs: 1000, factor: 2}},
      gets,
    )
    await advance(200)
    expect(eventsOf(events, 'stream-degraded')).toHaveLength(1)
    expect(gets).toHaveLength(3)
    for (const expected of [4, 5, 6]) {
      await advance(1000)
      expect(gets).toHaveLength(expected)
    }
    await client.close()
  })

  it('says on recovery how long it was down: from its degradation to the GET that opened', async () => {
    useMock()
    const gets = scriptGets([
      () => sse([frame(undefined, listChanged)]),
      status(503),
      status(503),
      status(503),
      status(503),
    ])
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'Date']})
    const {client, events} = await connect({reconnect: {maxAttempts: 2, minDelayMs: 10, maxDelayMs: 1000, factor: 2}})
    await realTurns(() => gets.length === 1)
    for (let step = 0; step < 50 && eventsOf(events, 'stream-degraded').length === 0; step++) await advance(10)
    expect(gets).toHaveLength(3)
    // Two slow attempts fail, the third opens: three waits of maxDelayMs.
    await advance(3000)
    await realTurns(() => eventsOf(events, 'stream-recovered').length === 1)
    const [recovered] = eventsOf(events, 'stream-recovered')
    expect(gets).toHaveLength(6)
    expect(recovered!.downMs).toBeGreaterThanOrEqual(3000)
    expect(recovered!.downMs).toBeLessThan(3100)
    await client.close()
  })
})

describe('a call that failed while no standalone stream is offered', () => {
  it("leaves the next call's stream resumable from its cursor: only the standalone stream goes without one", async () => {
    const mock = useMock({standalone: false})
    let callId: JsonRpcId | undefined
    const gets = interceptGets(mock, (get) =>
      get.lastEventId === 'p1' ? sse([frame('p2', result(callId!))]) : undefined,
    )
    const {client, events} = await connect()
    await until(() => gets.length === 1)
    // The first call breaks before any event ID: its answer cannot come back, and re-emission is wanted.
    let calls = 0
    answerToolCalls((id) => {
      callId = id
      return ++calls === 1 ? sse([], 'error') : sse([frame('p1')], 'error')
    })
    expect(codeOf(await client.callTool({name: 'echo'}).catch((error: unknown) => error))).toBe('outcome-unknown')

    await expect(client.callTool({name: 'echo'})).resolves.toMatchObject({content: [{type: 'text', text: 'ok'}]})
    expect(gets.map((get) => get.lastEventId)).toEqual([undefined, 'p1'])
    expect(eventsOf(events, 'reconnect')).toMatchObject([{stream: 'request', branch: 'stream-resumption'}])
    await until(() => eventsOf(events, 'stream-closed').length === 3)
    expect(eventsOf(events, 'stream-closed').map((event) => [event.stream, event.reason])).toEqual([
      ['standalone', 'not-offered'],
      ['request', 'abandoned'],
      ['request', 'completed'],
    ])
    await client.close()
  })
})
