/**
 * Polling a task a previous process left (docs/design.md#the-call-journal, the Tasks extension): a stored task call
 * is polled with `tasks/get` from `start()`, answer by answer, against msw; how each answer settles the call, what
 * each status tells the app, and when each poll goes (fake clock).
 */
import {http, HttpResponse} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {
  MemoryStore,
  ResumableHTTPClientTransport,
  type JournaledCall,
  type JsonValue,
  type ResumableHTTPClientTransportOptions,
  type TransportEvent,
} from '../../src/index.ts'
import {eventsOf, network, until, url} from '../fixtures/harness.ts'
import {msUntil} from '../fixtures/timing.ts'
import {encoder, frame, sse} from '../fixtures/wire.ts'

const namespace = 'mcp-resumable-http:http://mcp.test/mcp'
const envelope = {'io.modelcontextprotocol/protocolVersion': '2026-07-28'}

/** What the server answers to the `index`th `tasks/get`, whose request ID is `id`. */
type Answer = (id: number, index: number) => Response

interface Polled {
  transport: ResumableHTTPClientTransport
  events: TransportEvent[]
  errors: Error[]
  /** Each `tasks/get` as it came: its request ID, params, whole body and headers. */
  polls: {id: number; params: unknown; body: unknown; headers: Headers}[]
}

/** A transport started on a store that holds the task call `c1` (task `t1`) of a previous process; `answer` answers its polls. */
async function polling(
  answer: Answer,
  options: ResumableHTTPClientTransportOptions = {},
  task: JsonValue = {taskId: 't1', status: 'working', pollIntervalMs: 1},
): Promise<Polled> {
  const store = new MemoryStore()
  const record = {
    callId: 'c1',
    method: 'tools/call',
    name: 'render',
    argumentsDigest: 'd',
    clientId: 1,
    wireId: 1,
    era: 'modern',
    state: 'task',
    startedAt: 1,
    inherited: false,
    task,
    envelope,
  }
  await store.set(`${namespace}#call:c1`, record)
  const polls: Polled['polls'] = []
  network.use(
    http.post(url, async ({request}) => {
      const body = (await request.json()) as {id: number; method: string; params: unknown}
      polls.push({id: body.id, params: body.params, body, headers: request.headers})
      return answer(body.id, polls.length - 1)
    }),
  )
  const events: TransportEvent[] = []
  const errors: Error[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    store,
    callJournal: true,
    reconnect: {minDelayMs: 1, maxDelayMs: 2, maxAttempts: 1},
    ...options,
    onEvent: (event) => events.push(event),
  })
  transport.onerror = (error) => errors.push(error)
  await transport.start()
  return {transport, events, errors, polls}
}

const json = (message: object, status = 200): Response => HttpResponse.json(message, {status})
const taskState = (id: number, state: object): Response => json({jsonrpc: '2.0', id, result: {taskId: 't1', ...state}})

/** How the call `c1` settled. */
async function settled({transport, errors}: Polled): Promise<Partial<JournaledCall>> {
  const call = await transport.calls.wait('c1', AbortSignal.timeout(2000))
  await transport.close()
  expect(errors).toEqual([])
  return {state: call.state, result: call.result, error: call.error, reason: call.reason}
}

describe('a task a previous process left', () => {
  const content = {content: [{type: 'text', text: 'rendered'}]}
  it.each<[string, Answer, Partial<JournaledCall>]>([
    [
      'completed: its result',
      (id) => taskState(id, {status: 'completed', result: content}),
      {state: 'completed', result: content},
    ],
    [
      'failed: its error',
      (id) => taskState(id, {status: 'failed', error: {code: -1, message: 'out of ink'}}),
      {state: 'failed', error: {code: -1, message: 'out of ink'}},
    ],
    [
      'cancelled: its status message as the reason',
      (id) => taskState(id, {status: 'cancelled', statusMessage: 'stopped by an operator'}),
      {state: 'cancelled', reason: 'stopped by an operator'},
    ],
    [
      'cancelled with a status message that is no string: no reason',
      (id) => taskState(id, {status: 'cancelled', statusMessage: 7}),
      {state: 'cancelled'},
    ],
    [
      'a JSON-RPC error: outcome-unknown, with the error',
      (id) => json({jsonrpc: '2.0', id, error: {code: -32602, message: 'unknown task'}}),
      {state: 'outcome-unknown', reason: 'tasks/get t1 failed: {"code":-32602,"message":"unknown task"}'},
    ],
    [
      'an answer without its response: outcome-unknown, once the attempts ran out',
      (id) => json({jsonrpc: '2.0', id: id + 1, result: {}}),
      {state: 'outcome-unknown', reason: 'The answer to tasks/get t1 did not contain its response'},
    ],
    [
      'an answer whose response comes after a notification in a batch: the response',
      (id) =>
        json([
          {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'x'}},
          {jsonrpc: '2.0', id, result: {taskId: 't1', status: 'completed', result: content}},
        ]),
      {state: 'completed', result: content},
    ],
    [
      'an SSE answer: the response, read past a priming event and a notification that came in chunks of their own',
      (id) =>
        sse([
          frame('0'),
          frame('1', {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'x'}}),
          frame('2', {jsonrpc: '2.0', id, result: {taskId: 't1', status: 'completed', result: content}}),
        ]),
      {state: 'completed', result: content},
    ],
    [
      'an SSE answer that ends without its response: outcome-unknown',
      () =>
        sse([
          frame('0'),
          frame('1', {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'x'}}),
        ]),
      {state: 'outcome-unknown', reason: 'The answer to tasks/get t1 did not contain its response'},
    ],
  ])('is polled until it settles; %s', async (_, answer, outcome) => {
    expect(await settled(await polling(answer))).toEqual({
      result: undefined,
      error: undefined,
      reason: undefined,
      ...outcome,
    })
  })

  it.each([503, 429, 408])(
    'is polled again after a transient failure (HTTP %i), and settles with the next answer',
    async (status) => {
      const answer: Answer = (id, index) =>
        index === 0 ? new HttpResponse('busy', {status}) : taskState(id, {status: 'completed', result: {}})
      const polled = await polling(answer, {reconnect: {minDelayMs: 1, maxDelayMs: 2, maxAttempts: 3}})
      expect(await settled(polled)).toEqual({state: 'completed', result: {}, error: undefined, reason: undefined})
      expect(polled.polls).toHaveLength(2)
    },
  )

  it('is not asked again once refused (404): outcome-unknown, with the refusal', async () => {
    const polled = await polling(
      (id, index) =>
        index === 0 ? new HttpResponse('gone', {status: 404}) : taskState(id, {status: 'completed', result: {}}),
      {reconnect: {minDelayMs: 1, maxDelayMs: 2, maxAttempts: 3}},
    )
    expect(await settled(polled)).toEqual({
      state: 'outcome-unknown',
      result: undefined,
      error: undefined,
      reason: 'POST tasks/get t1 failed with HTTP 404: "gone"',
    })
    expect(polled.polls).toHaveLength(1)
  })

  it('asks with tasks/get for its task, with the envelope and the headers of the era its call went with', async () => {
    const polled = await polling((id) => taskState(id, {status: 'completed', result: {}}))
    await settled(polled)
    const [poll] = polled.polls
    expect(poll!.body).toEqual({
      jsonrpc: '2.0',
      id: poll!.id,
      method: 'tasks/get',
      params: {taskId: 't1', _meta: envelope},
    })
    expect([
      poll!.params,
      poll!.headers.get('mcp-method'),
      poll!.headers.get('mcp-name'),
      poll!.headers.get('mcp-protocol-version'),
    ]).toEqual([{taskId: 't1', _meta: envelope}, 'tasks/get', 't1', '2026-07-28'])
  })

  it('asks each time under a request ID of its own', async () => {
    const polled = await polling((id, index) =>
      taskState(id, index < 2 ? {status: 'working', pollIntervalMs: 1} : {status: 'completed', result: {}}),
    )
    await settled(polled)
    const ids = polled.polls.map((poll) => poll.id)
    expect([ids.length, new Set(ids).size, ids.every(Number.isSafeInteger)]).toEqual([3, 3, true])
  })

  it('shows the app its call without what only the transport needs: the envelope it polls with', async () => {
    const polled = await polling((id) => taskState(id, {status: 'working', pollIntervalMs: 60_000}))
    await until(() => polled.polls.length === 1)
    expect(Object.keys(polled.transport.calls.list()[0]!)).not.toContain('envelope')
    await polled.transport.close()
  })

  it('tells the app each status on the way: its message and interval when they are what they should be, none otherwise', async () => {
    const answers = [
      {status: 'working', statusMessage: 'rendering', pollIntervalMs: 2},
      {statusMessage: 7, pollIntervalMs: '1'},
      {status: 'input_required'},
      {status: 'completed', result: {}},
    ]
    const polled = await polling((id, index) => taskState(id, answers[index]!))
    expect(await settled(polled)).toMatchObject({state: 'completed'})
    const tasks = eventsOf(polled.events, 'call-changed').map((event) => event.call.task)
    expect(tasks.slice(1, 4)).toEqual([
      {taskId: 't1', status: 'working', statusMessage: 'rendering', pollIntervalMs: 2},
      {taskId: 't1', status: 'working', statusMessage: undefined, pollIntervalMs: undefined},
      {taskId: 't1', status: 'input_required', statusMessage: undefined, pollIntervalMs: undefined},
    ])
  })

  it('lets go of an SSE answer that stays open once its response came: its body is cancelled', async () => {
    let cancelled = false
    // The app's fetch hands the transport the response as the server made it (msw would stand between).
    const fetch = (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const {id} = JSON.parse(init!.body as string) as {id: number}
      const body = new ReadableStream<Uint8Array>({
        start: (controller) =>
          controller.enqueue(
            encoder.encode(frame('1', {jsonrpc: '2.0', id, result: {taskId: 't1', status: 'completed', result: {}}})),
          ),
        cancel: () => void (cancelled = true),
      })
      return Promise.resolve(new Response(body, {headers: {'content-type': 'text/event-stream'}}))
    }
    const {transport} = await polling(() => json({}), {fetch})
    expect(await transport.calls.wait('c1', AbortSignal.timeout(2000))).toMatchObject({state: 'completed'})
    // Before close(), which would cancel it anyway.
    await until(() => cancelled, 1000)
    await transport.close()
  })
})

describe('when a task is polled (fake clock)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** The fake ms between the start and each of the first `count` polls. */
  async function pollTimes(
    task: JsonValue,
    answers: object[],
    count: number,
    limits: ResumableHTTPClientTransportOptions['limits'] = {},
  ): Promise<number[]> {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    const polled = await polling(
      (id, index) => taskState(id, answers[index] ?? {status: 'working'}),
      {reconnect: {minDelayMs: 100, maxDelayMs: 300, factor: 2, maxAttempts: 1}, limits},
      task,
    )
    const times: number[] = []
    let elapsed = 0
    for (let poll = 1; poll <= count; poll++) {
      elapsed += await msUntil(() => polled.polls.length >= poll, 1000)
      times.push(elapsed)
    }
    await polled.transport.close()
    return times
  }

  it('without an interval from the server: after minDelayMs, then a wait that grows by the factor up to maxDelayMs', async () => {
    expect(await pollTimes({taskId: 't1', status: 'working'}, [], 4)).toEqual([100, 300, 600, 900])
  })

  it('with the interval its handle named, then with the one the latest answer named', async () => {
    expect(
      await pollTimes(
        {taskId: 't1', status: 'working', pollIntervalMs: 30},
        [{status: 'working', pollIntervalMs: 50}, {status: 'working'}],
        3,
      ),
    ).toEqual([30, 80, 180])
  })

  it("waits a server's pollIntervalMs no longer than limits.maxRetryMs: a task that asks to be polled every ten minutes is polled every maxRetryMs, not stalled", async () => {
    const tenMinutes = {status: 'working', pollIntervalMs: 600_000}
    expect(await pollTimes({taskId: 't1', ...tenMinutes}, [tenMinutes, tenMinutes], 3, {maxRetryMs: 250})).toEqual([
      250, 500, 750,
    ])
  })

  it.each([
    [250, [250, 500, 750]],
    [500, [400, 800, 1200]],
  ])(
    'with a pollIntervalMs of 400 ms and limits.maxRetryMs %i, polls at %j: the cap alone decides the wait',
    async (maxRetryMs, times) => {
      const working = {status: 'working', pollIntervalMs: 400}
      expect(await pollTimes({taskId: 't1', ...working}, [working, working], 3, {maxRetryMs})).toEqual(times)
    },
  )
})
