/**
 * The call journal (docs/design.md#the-call-journal) driven message by message through the transport's own API
 * (`send`, `onmessage`, `transport.calls`) against hand-made answers: which calls are journaled, what their records
 * hold, how progress, tasks and `input_required` rounds move them, the limits, and what `calls.wait` and
 * `calls.forget` promise.
 */
import {getEventListeners} from 'node:events'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {http} from 'msw'
import {describe, expect, it} from 'vitest'
import {
  MemoryStore,
  ResumableHTTPClientTransport,
  type JournaledCall,
  type JsonRpcId,
  type JsonValue,
  type ResumableHTTPClientTransportOptions,
  type TransportEvent,
} from '../../src/index.ts'
import {digestArguments} from '../../src/journal.ts'
import {connect, dieMidCall, eventsOf, interceptGets, network, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {frame, sse} from '../fixtures/wire.ts'

const namespace = 'mcp-resumable-http:http://mcp.test/mcp'

type Answer = (request: {
  id: JsonRpcId
  method: string
  params: Record<string, unknown>
}) => Response | Promise<Response>

/** Every POST of a request goes to `answer`; a notification or an answer of the Client is taken with 202, a GET with 405. */
function serve(answer: Answer): {posted: {id: JsonRpcId; method: string; params: Record<string, unknown>}[]} {
  const posted: {id: JsonRpcId; method: string; params: Record<string, unknown>}[] = []
  network.use(
    http.post(url, async ({request}) => {
      const body = (await request.json()) as {id?: JsonRpcId; method?: string; params?: Record<string, unknown>}
      if (body.id === undefined || body.method === undefined) return new Response(null, {status: 202})
      const seen = {id: body.id, method: body.method, params: body.params ?? {}}
      posted.push(seen)
      return answer(seen)
    }),
    http.get(url, () => new Response(null, {status: 405})),
  )
  return {posted}
}

const json = (message: object): Response => Response.json(message)
const toolResult = (id: JsonRpcId, text = 'ok'): object => ({
  jsonrpc: '2.0',
  id,
  result: {content: [{type: 'text', text}]},
})

interface Opened {
  transport: ResumableHTTPClientTransport
  events: TransportEvent[]
  received: JSONRPCMessage[]
  errors: Error[]
}

/** A started transport with the journal on, no Client: what it delivers is collected. */
async function open(options: ResumableHTTPClientTransportOptions = {}): Promise<Opened> {
  const events: TransportEvent[] = []
  const received: JSONRPCMessage[] = []
  const errors: Error[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    reconnect: {minDelayMs: 1, maxDelayMs: 5, maxAttempts: 2},
    callJournal: true,
    ...options,
    onEvent: (event) => events.push(event),
  })
  transport.onmessage = (message) => received.push(message)
  transport.onerror = (error) => errors.push(error)
  await transport.start()
  return {transport, events, received, errors}
}

const call = (id: JsonRpcId, params: Record<string, unknown> = {name: 'echo', arguments: {}}): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params,
})
const changes = (events: TransportEvent[]): JournaledCall[] =>
  eventsOf(events, 'call-changed').map((event) => event.call)

/** The stored record of each journaled call, by call ID. */
async function records(store: MemoryStore): Promise<Map<string, Record<string, JsonValue>>> {
  const keys = await store.list(`${namespace}#call:`)
  return new Map(
    await Promise.all(
      keys.map(
        async (key) =>
          [key.slice(`${namespace}#call:`.length), (await store.get(key)) as Record<string, JsonValue>] as const,
      ),
    ),
  )
}

const progress = (token: unknown, value: unknown = 1, method = 'notifications/progress'): object => ({
  jsonrpc: '2.0',
  method,
  params: {progressToken: token, progress: value, total: 2, message: 'half'},
})

describe('the call journal, message by message', () => {
  it('journals only a tools/call request: a tools/call notification and other requests are not journaled', async () => {
    serve(({id}) => json(toolResult(id)))
    const {transport, events, received} = await open()
    await transport.send({jsonrpc: '2.0', method: 'tools/call', params: {name: 'echo'}})
    await transport.send({jsonrpc: '2.0', id: 'list', method: 'tools/list', params: {}})
    await until(() => received.length === 1)
    expect(changes(events)).toEqual([])
    await transport.close()
  })

  it('records the tool name it is given, and an empty name when the name is no string', async () => {
    const store = new MemoryStore()
    serve(() => sse([], 'open'))
    const {transport} = await open({store})
    await transport.send(call(1, {name: 'weather', arguments: {city: 'Oslo'}}))
    await transport.send(call(2, {name: 42}))
    expect(transport.calls.list().map((entry) => entry.name)).toEqual(['weather', ''])
    expect([...(await records(store)).values()].map((record) => record['name'])).toEqual(['weather', ''])
    await transport.close()
  })

  it.each([
    ['the Client request ID, renamed to the wire ID', 'c1', (wireId: number) => wireId, true],
    ['a string of its own', 'tok', () => 'tok', true],
    ['a number of its own', 777, () => 777, true],
    ['no string nor number (an object)', {}, () => undefined, false],
  ] as const)(
    'a progress token that is %s is stored and its progress recorded: %s',
    async (_what, token, stored, tracked) => {
      const store = new RecordingStore()
      serve(({id, params}) =>
        sse([
          frame(undefined, progress((params['_meta'] as {progressToken: unknown}).progressToken)),
          frame(undefined, toolResult(id)),
        ]),
      )
      const {transport, events, received} = await open({store})
      await transport.send(call('c1', {name: 'slow', _meta: {progressToken: token}}))
      await until(() => received.length === 2)
      const [first] = store.writes.filter((write) => write.key.includes('#call:'))
      expect((first!.value as Record<string, JsonValue>)['progressToken']).toEqual(stored(changes(events)[0]!.wireId))
      expect(changes(events).map((c) => c.progress)).toEqual(
        tracked
          ? [undefined, {progress: 1, total: 2, message: 'half'}, {progress: 1, total: 2, message: 'half'}]
          : [undefined, undefined],
      )
      await transport.close()
    },
  )

  it.each([
    ['another method', progress('tok', 1, 'notifications/message')],
    ['a progress that is no number', progress('tok', 'half')],
    ['a token no call has', progress('other')],
    ['a token of a string no call has', progress('1')],
  ])('a notification of %s is delivered and changes no call', async (_what, notification) => {
    serve(({id}) => sse([frame(undefined, notification), frame(undefined, toolResult(id))]))
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'slow', _meta: {progressToken: 'tok'}}))
    await until(() => received.length === 2)
    expect(received[0]).toEqual(notification)
    expect(changes(events).map((c) => [c.state, c.progress])).toEqual([
      ['sent', undefined],
      ['delivered', undefined],
    ])
    await transport.close()
  })
})

describe('the call journal: answers, tasks and rounds', () => {
  it.each([
    ['a JSON-RPC error', (id: JsonRpcId) => ({jsonrpc: '2.0', id, error: {code: -32000, message: 'no'}})],
    [
      'a result that names a taskId but is no task',
      (id: JsonRpcId) => ({jsonrpc: '2.0', id, result: {content: [], taskId: 't1'}}),
    ],
    [
      'a task result without its taskId',
      (id: JsonRpcId) => ({jsonrpc: '2.0', id, result: {content: [], resultType: 'task'}}),
    ],
  ])('an answer that is %s is delivered, and the call goes', async (_what, answer) => {
    const store = new MemoryStore()
    const {posted} = serve(({id}) => json(answer(id)))
    const {transport, events, received} = await open({store})
    await transport.send(call(1))
    await until(() => received.length === 1)
    expect(received[0]).toEqual(answer(1))
    expect(changes(events).map((c) => c.state)).toEqual(['sent', 'delivered'])
    await transport.close()
    expect([posted.map((request) => request.method), await records(store)]).toEqual([['tools/call'], new Map()])
  })

  it.each([
    ['as the server named it', {status: 'submitted'}, 'submitted'],
    ['working when the server named none', {}, 'working'],
  ])(
    'a task handle is stored with its status %s, polled with tasks/get until it completes, and kept until forgotten',
    async (_what, handle, status) => {
      const store = new MemoryStore()
      const polls: JsonValue[] = [
        {status: 'working', statusMessage: 'step 1', pollIntervalMs: 1},
        {status: 'completed', result: {content: [{type: 'text', text: 'done'}]}},
      ]
      const {posted} = serve(({id, method}) =>
        json({
          jsonrpc: '2.0',
          id,
          result:
            method === 'tools/call' ? {resultType: 'task', taskId: 't1', pollIntervalMs: 1, ...handle} : polls.shift(),
        }),
      )
      const {transport, events, received, errors} = await open({store})
      await transport.send(call(1))
      await until(() => received.length === 1)
      const [entry] = transport.calls.list()
      const done = await transport.calls.wait(entry!.callId, AbortSignal.timeout(3000))
      expect(done).toMatchObject({
        state: 'completed',
        result: {content: [{type: 'text', text: 'done'}]},
        task: {taskId: 't1', status: 'working', statusMessage: 'step 1', pollIntervalMs: 1},
      })
      expect(changes(events).map((c) => [c.state, c.task?.taskId, c.task?.status])).toEqual([
        ['sent', undefined, undefined],
        ['task', 't1', status],
        ['task', 't1', 'working'],
        ['completed', 't1', 'working'],
      ])
      expect(posted.map((request) => [request.method, request.params['taskId']])).toEqual([
        ['tools/call', undefined],
        ['tasks/get', 't1'],
        ['tasks/get', 't1'],
      ])
      await transport.close()
      const record = (await records(store)).get(entry!.callId)
      expect(record).toMatchObject({state: 'completed', task: {taskId: 't1'}})
      expect(record).not.toHaveProperty('inherited')
      expect(errors).toEqual([])
    },
  )

  it('stops polling a task the app forgets, with nothing reported, and wakes who waits on it with the call as it last was', async () => {
    const store = new MemoryStore()
    const {posted} = serve(({id, method}) =>
      json({
        jsonrpc: '2.0',
        id,
        result:
          method === 'tools/call'
            ? {resultType: 'task', taskId: 't1', status: 'working', pollIntervalMs: 1}
            : {status: 'working', pollIntervalMs: 1},
      }),
    )
    const {transport, received, errors} = await open({store})
    await transport.send(call(1))
    await until(() => received.length === 1 && posted.length >= 3)
    const [entry] = transport.calls.list()
    const waiting = transport.calls.wait(entry!.callId)
    await transport.calls.forget(entry!.callId)
    await expect(waiting).resolves.toMatchObject({callId: entry!.callId, state: 'task'})
    const polled = posted.length
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(posted.length).toBeLessThanOrEqual(polled + 1)
    await transport.close()
    expect([transport.calls.list(), await records(store), errors]).toEqual([[], new Map(), []])
  })

  it('polls its task again when the transport is started again after close(), and keeps its own view of the call', async () => {
    const store = new MemoryStore()
    let closed = false
    const {posted} = serve(({id, method}) =>
      json({
        jsonrpc: '2.0',
        id,
        result:
          method === 'tools/call'
            ? {resultType: 'task', taskId: 't1', status: 'working', pollIntervalMs: 1}
            : closed
              ? {status: 'completed', result: {content: []}}
              : {status: 'working', pollIntervalMs: 1},
      }),
    )
    const {transport, received, errors} = await open({store})
    await transport.send(call(1))
    await until(() => received.length === 1 && posted.length >= 2)
    const [entry] = transport.calls.list()
    await transport.close()
    closed = true
    await transport.start()
    expect(transport.calls.list()).toEqual([expect.objectContaining({callId: entry!.callId, inherited: false})])
    await expect(transport.calls.wait(entry!.callId, AbortSignal.timeout(3000))).resolves.toMatchObject({
      state: 'completed',
    })
    await transport.close()
    expect((await records(store)).get(entry!.callId)).toMatchObject({state: 'completed'})
    expect(errors).toEqual([])
  })
})

/**
 * A server that asks for input (`requestState` 'rs', or none when `state` is null) when a call brings no answers,
 * and answers a call that brings them; on SSE after a progress notification of the call's token, when it has one,
 * and one of the token `late` (a token of an earlier leg, sent late).
 */
function askOnce(state: unknown = 'rs', late?: string): void {
  serve(({id, params}) => {
    const token = (params['_meta'] as {progressToken?: unknown} | undefined)?.progressToken
    const answer =
      params['inputResponses'] === undefined
        ? {
            jsonrpc: '2.0',
            id,
            result: {
              resultType: 'input_required',
              inputRequests: {ok: {method: 'elicitation/create'}},
              ...(state === null ? {} : {requestState: state}),
            },
          }
        : toolResult(id)
    if (token === undefined) return json(answer)
    return sse([
      ...(late === undefined ? [] : [frame(undefined, progress(late, 5))]),
      frame(undefined, progress(token)),
      frame(undefined, answer),
    ])
  })
}

describe('the call journal: input_required rounds', () => {
  it('keeps one call over a round: its next leg, with the state echoed and the answers, continues it to its answer', async () => {
    const store = new MemoryStore()
    askOnce()
    const {transport, events, received} = await open({store})
    await transport.send(call(1, {name: 'deploy', arguments: {env: 'prod'}}))
    await until(() => received.length === 1)
    const [round] = transport.calls.list()
    expect(round).toMatchObject({
      state: 'input-required',
      resume: {requestState: 'rs'},
      inputRequests: {ok: {method: 'elicitation/create'}},
    })
    await transport.send(
      call(2, {name: 'deploy', arguments: {env: 'prod'}, requestState: 'rs', inputResponses: {ok: {action: 'accept'}}}),
    )
    await until(() => received.length === 2)
    expect(changes(events).map((c) => [c.callId, c.state, c.clientId])).toEqual([
      [round!.callId, 'sent', 1],
      [round!.callId, 'input-required', 1],
      [round!.callId, 'sent', 2],
      [round!.callId, 'delivered', 2],
    ])
    await transport.close()
  })

  it.each([
    ['another tool', 'rs', {name: 'other', arguments: {env: 'prod'}, requestState: 'rs', inputResponses: {}}],
    ['other arguments', 'rs', {name: 'deploy', arguments: {env: 'dev'}, requestState: 'rs', inputResponses: {}}],
    ['another requestState', 'rs', {name: 'deploy', arguments: {env: 'prod'}, requestState: 'rs2', inputResponses: {}}],
    ['neither requestState nor answers', 'rs', {name: 'deploy', arguments: {env: 'prod'}}],
    [
      'neither requestState nor answers, though the round named no state',
      null,
      {name: 'deploy', arguments: {env: 'prod'}},
    ],
  ])('a tools/call of %s is a call of its own, and the round waits on', async (_what, state, params) => {
    askOnce(state)
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'deploy', arguments: {env: 'prod'}}))
    await until(() => received.length === 1)
    const [round] = transport.calls.list()
    await transport.send(call(2, params))
    await until(() => received.length === 2)
    expect(transport.calls.list()[0]).toMatchObject({callId: round!.callId, state: 'input-required', clientId: 1})
    expect(new Set(changes(events).map((c) => c.callId)).size).toBe(2)
    await transport.close()
  })

  it.each([
    ['its requestState alone', 'rs', {requestState: 'rs'}, {requestState: 'rs'}],
    ['its answers alone, when it named no state', null, {inputResponses: {ok: {}}}, {}],
    ['its answers, when it named a state that is no string', 5, {inputResponses: {ok: {}}}, {}],
  ])('a tools/call with %s continues the round', async (_what, state, params, resume) => {
    askOnce(state)
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'deploy'}))
    await until(() => received.length === 1)
    expect(transport.calls.list()).toEqual([expect.objectContaining({state: 'input-required', resume})])
    await transport.send(call(2, {name: 'deploy', ...params}))
    await until(() => received.length === 2)
    expect(new Set(changes(events).map((c) => c.callId)).size).toBe(1)
    expect(changes(events).map((c) => c.clientId)).toContain(2)
    await transport.close()
  })

  it('keeps a round over close() and start() again: listed as it was, its record still stored', async () => {
    const store = new MemoryStore()
    askOnce()
    const {transport, received} = await open({store})
    await transport.send(call(1, {name: 'deploy'}))
    await until(() => received.length === 1)
    const [round] = transport.calls.list()
    await transport.close()
    await transport.start()
    await transport.close()
    expect(transport.calls.list()).toEqual([round])
    expect([...(await records(store)).keys()]).toEqual([round!.callId])
  })

  it("does not take an answer to a round's earlier leg for the call's answer", async () => {
    serve(({id, params}) =>
      params['inputResponses'] === undefined
        ? json({jsonrpc: '2.0', id, result: {resultType: 'input_required', requestState: 'rs'}})
        : sse([
            frame(undefined, {jsonrpc: '2.0', id: 0, result: {resultType: 'input_required', requestState: 'stale'}}),
            frame(undefined, toolResult(id)),
          ]),
    )
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'deploy'}))
    await until(() => received.length === 1)
    await transport.send(call(2, {name: 'deploy', requestState: 'rs', inputResponses: {}}))
    await until(() => changes(events).at(-1)?.state === 'delivered')
    expect(changes(events).map((c) => [c.state, c.wireId])).toEqual([
      ['sent', 0],
      ['input-required', 0],
      ['sent', 1],
      ['delivered', 1],
    ])
    await transport.close()
  })

  it("follows the progress token of the latest leg only: a late progress of the earlier leg's token changes nothing", async () => {
    askOnce('rs', 'first')
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'deploy', _meta: {progressToken: 'first'}}))
    await until(() => received.length === 3)
    await transport.send(
      call(2, {name: 'deploy', requestState: 'rs', inputResponses: {}, _meta: {progressToken: 'second'}}),
    )
    await until(() => received.length === 6)
    expect(changes(events).map((c) => [c.state, c.progress?.progress])).toEqual([
      ['sent', undefined],
      ['sent', 5],
      ['sent', 1],
      ['input-required', 1],
      ['sent', 1],
      ['sent', 1],
      ['delivered', 1],
    ])
    await transport.close()
  })
})

/** A call record as a previous process stored it: `callId` names it (and orders it: stores list keys in order). */
function stored(callId: string, fields: Record<string, JsonValue> = {}): Record<string, JsonValue> {
  return {
    callId,
    method: 'tools/call',
    name: 'echo',
    argumentsDigest: 'd',
    clientId: 1,
    wireId: Number(callId.slice(-1)),
    era: 'legacy',
    state: 'completed',
    startedAt: 1,
    ...fields,
  }
}

async function storeOf(...values: Record<string, JsonValue>[]): Promise<MemoryStore> {
  const store = new MemoryStore()
  for (const value of values) await store.set(`${namespace}#call:${value['callId'] as string}`, value)
  return store
}

const noStream = 'its process ended before the answer, and no stream of it was left to resume'
const chars = (value: object): number => JSON.stringify(value).length

describe("the call journal: a previous process's calls", () => {
  it('lists a settled call as it was, tells it in a call-changed event, and does not poll a completed task again', async () => {
    const {posted} = serve(({id}) => json(toolResult(id)))
    const store = await storeOf(
      stored('call-1', {state: 'completed', task: {taskId: 't1', status: 'working'}, result: {content: []}}),
      stored('call-2', {state: 'failed', error: {code: 1}}),
    )
    const {transport, events} = await open({store})
    expect(changes(events).map((c) => [c.callId, c.state, c.inherited])).toEqual([
      ['call-1', 'completed', true],
      ['call-2', 'failed', true],
    ])
    await expect(transport.calls.wait('call-1')).resolves.toMatchObject({state: 'completed', task: {taskId: 't1'}})
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(posted).toEqual([])
    await transport.close()
  })

  it.each([
    [
      'a 2026-07-28 call, whatever session it names',
      {era: 'modern', sessionId: 'session-1'},
      'its process ended before the answer, and a 2026-07-28 answer lives only on its own stream',
    ],
    ['a legacy call of another session', {sessionId: 'session-0'}, noStream],
  ])(
    'settles %s outcome-unknown when it loads, though a stream of its wire ID is resumed',
    async (_what, fields, reason) => {
      useMock()
      const store = new MemoryStore()
      const before = await dieMidCall(store, 2, {callJournal: true})
      const [call] = before.transport.calls.list()
      const key = `${namespace}#call:${call!.callId}`
      await store.set(key, {...((await store.get(key)) as Record<string, JsonValue>), ...fields})
      const after = await open({store})
      expect(changes(after.events)[0]).toMatchObject({callId: call!.callId, state: 'outcome-unknown', reason})
      await after.transport.close()
    },
  )

  it.each([
    ['a GET answered 204 ends it', 204, 'its stream ended (ended-by-server)'],
    ['a GET answered 404 ends its session', 404, 'its session expired'],
  ])('settles a call whose stream it resumes outcome-unknown when %s', async (_what, status, reason) => {
    const mock = useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    const [call] = before.transport.calls.list()
    interceptGets(mock, (get) => (get.lastEventId === undefined ? undefined : new Response(null, {status})))
    const after = await open({store})
    await expect(after.transport.calls.wait(call!.callId, AbortSignal.timeout(3000))).resolves.toMatchObject({
      state: 'outcome-unknown',
      reason,
    })
    await after.transport.close()
  })

  it('counts the records it loads in callBytes: past it, the oldest settled goes; at it, nothing goes', async () => {
    const first = stored('call-1', {result: {content: [{type: 'text', text: 'x'.repeat(200)}]}})
    const second = stored('call-2', {state: 'sent'})
    // The second, unanswered with no stream to resume, is settled when it loads: its record grows by the reason.
    const settled = chars({...second, state: 'outcome-unknown', reason: noStream})
    for (const callBytes of [chars(first) + settled, chars(first) + settled - 1]) {
      const store = await storeOf(first, second)
      // As many calls as maxCalls allows: the limit passed is callBytes.
      const {transport, events} = await open({store, limits: {callBytes, maxCalls: 2}})
      await transport.close()
      const evicted = callBytes < chars(first) + settled
      expect(eventsOf(events, 'limit-exceeded')).toEqual(
        evicted
          ? [
              {
                type: 'limit-exceeded',
                limit: 'callBytes',
                size: chars(first) + settled,
                max: callBytes,
                stream: undefined,
                requestId: 1,
              },
            ]
          : [],
      )
      expect([...(await records(store)).keys()]).toEqual(evicted ? ['call-2'] : ['call-1', 'call-2'])
    }
  })

  it('keeps a record larger than callBytes in memory only: it is listed, and gone from the store', async () => {
    const value = stored('call-1', {state: 'sent'})
    const settled = chars({...value, state: 'outcome-unknown', reason: noStream})
    for (const callBytes of [settled, settled - 1]) {
      const store = await storeOf(value)
      const {transport, events} = await open({store, limits: {callBytes}})
      await transport.close()
      const tooLarge = callBytes < settled
      expect(eventsOf(events, 'limit-exceeded')).toEqual(
        tooLarge
          ? [
              {
                type: 'limit-exceeded',
                limit: 'callBytes',
                size: settled,
                max: callBytes,
                stream: undefined,
                requestId: 1,
              },
            ]
          : [],
      )
      expect(transport.calls.list()).toEqual([expect.objectContaining({callId: 'call-1', state: 'outcome-unknown'})])
      expect([...(await records(store)).keys()]).toEqual(tooLarge ? [] : ['call-1'])
    }
  })
})

describe('the call journal: maxCalls', () => {
  it('evicts the oldest settled call first, never the call that changed, though an older one waits on', async () => {
    const {posted} = serve(({id}) => json({jsonrpc: '2.0', id, result: {status: 'completed', result: {content: []}}}))
    const store = await storeOf(
      stored('call-1', {state: 'input-required', resume: {requestState: 'rs'}}),
      stored('call-2', {state: 'task', task: {taskId: 't2', status: 'working', pollIntervalMs: 1}}),
      stored('call-3'),
    )
    const {transport, events} = await open({store, limits: {maxCalls: 2}})
    await expect(transport.calls.wait('call-2', AbortSignal.timeout(3000))).resolves.toMatchObject({state: 'completed'})
    expect(posted.map((request) => request.method)).toEqual(['tasks/get'])
    expect(transport.calls.list().map((c) => c.callId)).toEqual(['call-1', 'call-2'])
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {type: 'limit-exceeded', limit: 'maxCalls', size: 3, max: 2, stream: undefined, requestId: 3},
    ])
    await transport.close()
    expect([...(await records(store)).keys()]).toEqual(['call-1', 'call-2'])
  })

  it('evicts the oldest call when none is settled: who waits on it learns it was evicted', async () => {
    serve(() => sse([], 'open'))
    const store = await storeOf(stored('call-1', {state: 'input-required', resume: {requestState: 'rs'}}))
    const {transport, events} = await open({store, limits: {maxCalls: 1}})
    const waiting = transport.calls.wait('call-1')
    await transport.send(call(1))
    await expect(waiting).resolves.toMatchObject({
      callId: 'call-1',
      state: 'outcome-unknown',
      reason: 'evicted from the call journal (limits.maxCalls, limits.callBytes)',
    })
    expect(eventsOf(events, 'limit-exceeded')).toEqual([
      {type: 'limit-exceeded', limit: 'maxCalls', size: 2, max: 1, stream: undefined, requestId: 1},
    ])
    expect(transport.calls.list()).toEqual([expect.objectContaining({clientId: 1, state: 'sent'})])
    await transport.close()
  })
})

describe('the call journal: calls.wait and calls.forget', () => {
  it('wait() names the call it does not hold; forget() of it changes nothing', async () => {
    const store = await storeOf(stored('call-1'))
    const {transport} = await open({store})
    await expect(transport.calls.wait('nope')).rejects.toThrow(new TypeError('The call journal holds no call "nope"'))
    await expect(transport.calls.forget('nope')).resolves.toBeUndefined()
    expect(transport.calls.list().map((c) => c.callId)).toEqual(['call-1'])
    await transport.close()
  })

  it('wait() rejects at once for a signal already aborted, and leaves no listener on a signal once it settled or aborted', async () => {
    const store = await storeOf(
      stored('call-1', {state: 'input-required'}),
      stored('call-2', {state: 'input-required'}),
    )
    const {transport} = await open({store})
    const stopped = AbortSignal.abort(new Error('stop'))
    await expect(transport.calls.wait('call-1', stopped)).rejects.toMatchObject({
      code: 'aborted',
      cause: stopped.reason,
    })
    const settles = new AbortController()
    const aborts = new AbortController()
    const waiting = [
      transport.calls.wait('call-1', settles.signal),
      transport.calls.wait('call-1'),
      transport.calls.wait('call-2', aborts.signal),
    ]
    aborts.abort()
    await expect(waiting[2]).rejects.toMatchObject({code: 'aborted'})
    await transport.calls.forget('call-1')
    await expect(Promise.all(waiting.slice(0, 2))).resolves.toMatchObject([{callId: 'call-1'}, {callId: 'call-1'}])
    expect([getEventListeners(settles.signal, 'abort'), getEventListeners(aborts.signal, 'abort')]).toEqual([[], []])
    await transport.close()
  })
})

describe('the call journal: calls.wait never waits for ever', () => {
  it('settles a wait without a signal when the transport settles the call, and rejects one when the transport closes with its call still pending', async () => {
    serve(({params}) => (params['name'] === 'broken' ? sse([], 'error') : sse([], 'open')))
    const {transport} = await open()
    await transport.send(call(1, {name: 'broken'}))
    await transport.send(call(2, {name: 'endless'}))
    const [broken, endless] = transport.calls.list()
    const settled = transport.calls.wait(broken!.callId)
    const pending = transport.calls.wait(endless!.callId)
    // Its stream broke before any event ID: settled outcome-unknown for the Client, and its call delivered.
    await expect(settled).resolves.toMatchObject({callId: broken!.callId, state: 'delivered'})
    await transport.close()
    // Kept for the next process, which learns how it ended; this one can tell nothing more.
    await expect(pending).rejects.toMatchObject({code: 'aborted', message: 'The transport was closed'})
    await expect(transport.calls.wait(endless!.callId)).rejects.toMatchObject({
      code: 'aborted',
      message: 'The transport was closed',
    })
    expect(transport.calls.list()).toEqual([expect.objectContaining({callId: endless!.callId, state: 'sent'})])
  })
})

describe('the call journal: calls the transport settles', () => {
  it('lets a call go once the transport settled it for the Client: its stream broke before any event ID', async () => {
    const store = new MemoryStore()
    serve(() => sse([], 'error'))
    const {transport, events, received} = await open({store})
    await transport.send(call(1))
    await until(() => received.length === 1)
    expect(eventsOf(events, 'request-settled')).toEqual([
      expect.objectContaining({requestId: 1, code: 'outcome-unknown'}),
    ])
    await until(() => changes(events).length === 2)
    expect(changes(events).map((c) => c.state)).toEqual(['sent', 'delivered'])
    await transport.close()
    expect(await records(store)).toEqual(new Map())
  })

  it('keeps a call close() settles: the next process lists it', async () => {
    const store = new MemoryStore()
    serve(() => sse([], 'open'))
    const {transport} = await open({store})
    await transport.send(call(1))
    await transport.close()
    expect(transport.calls.list()).toEqual([expect.objectContaining({state: 'sent'})])
    expect([...(await records(store)).values()]).toEqual([expect.objectContaining({state: 'sent'})])
  })
})

describe('the call journal: cancellations', () => {
  const cancel = (requestId: JsonRpcId): JSONRPCMessage => ({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: {requestId},
  })

  it('lets a call go when the Client cancels it, and nothing else: a cancelled request it does not journal, a round already answered', async () => {
    askOnce()
    let listed = false
    network.use(
      http.post(url, async ({request}) => {
        if (((await request.clone().json()) as {method?: string}).method !== 'tools/list') return undefined
        listed = true
        return sse([], 'open')
      }),
    )
    const {transport, events, received} = await open()
    // No session: wire IDs count from 0, as these client IDs do.
    await transport.send(call(0, {name: 'deploy'}))
    await until(() => received.length === 1)
    const [round] = transport.calls.list()
    await transport.send(cancel(0))
    void transport.send({jsonrpc: '2.0', id: 1, method: 'tools/list', params: {}}).catch(() => {})
    await until(() => listed)
    await transport.send(cancel(1))
    network.use(http.post(url, () => sse([], 'open')))
    void transport.send(call(2, {name: 'slow'})).catch(() => {})
    await until(() => transport.calls.list().length === 2)
    await transport.send(cancel(2))
    await until(() => changes(events).at(-1)?.state === 'delivered')
    expect(transport.calls.list()).toEqual([round])
    await transport.close()
  })

  it("keeps a previous process's call when this Client cancels a request of the same wire ID", async () => {
    useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    const [inherited] = before.transport.calls.list()
    const {transport, events} = await open({store})
    await transport.send(cancel(inherited!.wireId))
    const settled = await transport.calls.wait(inherited!.callId, AbortSignal.timeout(3000))
    expect(settled.state).not.toBe('delivered')
    expect(changes(events).map((c) => c.state)).not.toContain('delivered')
    await transport.close()
  })
})

describe("the call journal: a previous process's call on its resumed stream", () => {
  it('records the error its resumed stream brings as its outcome: failed, with the error', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    const [call] = before.transport.calls.list()
    const error = {code: -32000, message: 'boom'}
    interceptGets(mock, (get) =>
      get.lastEventId === undefined ? undefined : sse([frame('e1', {jsonrpc: '2.0', id: call!.wireId, error})]),
    )
    const {transport} = await open({store})
    await expect(transport.calls.wait(call!.callId, AbortSignal.timeout(3000))).resolves.toMatchObject({
      state: 'failed',
      error,
    })
    await transport.close()
  })

  /** A previous process's call left mid-way, and a settled call of the same session beside it in the store. */
  async function leftWithASettledCall() {
    const mock = useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    const [call] = before.transport.calls.list()
    const sessionId = ((await store.get(`${namespace}#call:${call!.callId}`)) as {sessionId: string}).sessionId
    await store.set(`${namespace}#call:old`, stored('old', {sessionId, wireId: 987_654}))
    return {mock, store, call}
  }

  it('takes its answer on the resumed stream, and nothing else settles it: a standalone stream not offered, a settled call of the same session', async () => {
    const {mock, store, call} = await leftWithASettledCall()
    interceptGets(mock, (get) => (get.lastEventId === undefined ? new Response(null, {status: 405}) : undefined))
    const {transport, events} = await open({store})
    await expect(transport.calls.wait(call!.callId, AbortSignal.timeout(3000))).resolves.toMatchObject({
      state: 'completed',
    })
    expect(eventsOf(events, 'stream-closed')).toContainEqual(
      expect.objectContaining({stream: 'standalone', reason: 'not-offered'}),
    )
    // Its progress comes as it ran on: 'sent' until its answer, never outcome-unknown.
    expect(
      new Set(
        changes(events)
          .filter((c) => c.callId === call!.callId)
          .map((c) => c.state),
      ),
    ).toEqual(new Set(['sent', 'completed']))
    await transport.close()
  })

  it('when its session expires, leaves a settled call of that session as it was', async () => {
    const {mock, store, call} = await leftWithASettledCall()
    interceptGets(mock, (get) => (get.lastEventId === undefined ? undefined : new Response(null, {status: 404})))
    const {transport} = await open({store})
    await expect(transport.calls.wait(call!.callId, AbortSignal.timeout(3000))).resolves.toMatchObject({
      state: 'outcome-unknown',
      reason: 'its session expired',
    })
    expect(transport.calls.list().find((c) => c.callId === 'old')).toMatchObject({state: 'completed'})
    await transport.close()
  })
})

describe('the call journal: calls the transport settles for the Client', () => {
  it('lets go only the call it settled: not a round of the same client ID, not another call in flight', async () => {
    askOnce()
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'deploy'}))
    await until(() => received.length === 1)
    network.use(http.post(url, () => sse([], 'open')))
    void transport.send(call(3, {name: 'slow'})).catch(() => {})
    await until(() => transport.calls.list().length === 2)
    network.use(http.post(url, () => sse([], 'error')))
    await transport.send(call(1, {name: 'broken'}))
    await until(() => eventsOf(events, 'request-settled').length === 1 && changes(events).at(-1)?.state === 'delivered')
    expect(transport.calls.list().map((c) => [c.clientId, c.state])).toEqual([
      [1, 'input-required'],
      [3, 'sent'],
    ])
    expect(changes(events).at(-1)).toMatchObject({name: 'broken'})
    await transport.close()
  })

  it('lets a call of this process go when the server ends its resumed stream: the transport settled it', async () => {
    const mock = useMock()
    network.use(
      http.post(url, async ({request}) =>
        ((await request.clone().json()) as {method?: string}).method === 'tools/call'
          ? sse([frame('p1')], 'error')
          : undefined,
      ),
    )
    interceptGets(mock, (get) => (get.lastEventId === undefined ? undefined : new Response(null, {status: 204})))
    const {client, transport, events} = await connect({callJournal: true})
    await expect(client.callTool({name: 'echo'})).rejects.toThrow()
    await until(() => changes(events).length === 2)
    expect(changes(events).map((c) => c.state)).toEqual(['sent', 'delivered'])
    expect(transport.calls.list()).toEqual([])
    await client.close()
  })
})

describe('the call journal: a record stored under the empty call ID', () => {
  it('takes no progress, answer, cancellation or failure of another request for that call', async () => {
    const store = await storeOf(
      stored('', {
        state: 'outcome-unknown',
        argumentsDigest: digestArguments({}),
        resume: {requestState: 'rs'},
        wireId: 9,
      }),
    )
    const {transport, events, received} = await open({store})
    // Continued by this process: no longer a previous process's call.
    serve(({id, method}) =>
      method === 'tools/call'
        ? sse([], 'open')
        : method === 'tools/list'
          ? sse([frame(undefined, progress('other')), frame(undefined, {jsonrpc: '2.0', id, result: {tools: []}})])
          : new Response(null, {status: 500}),
    )
    void transport.send(call(5, {name: 'echo', arguments: {}, requestState: 'rs', inputResponses: {}})).catch(() => {})
    await until(() => transport.calls.list()[0]?.state === 'sent')
    await transport.send({jsonrpc: '2.0', id: 6, method: 'tools/list', params: {}})
    await transport.send({jsonrpc: '2.0', method: 'notifications/cancelled', params: {requestId: 77}})
    await transport.send({jsonrpc: '2.0', id: 8, method: 'prompts/list', params: {}}).catch(() => {})
    await until(() => received.length >= 2)
    expect(transport.calls.list()).toEqual([expect.objectContaining({callId: '', state: 'sent', clientId: 5})])
    expect(transport.calls.list()[0]).not.toHaveProperty('progress')
    expect(changes(events).map((c) => c.state)).toEqual(['outcome-unknown', 'sent'])
    await transport.close()
  })
})

describe('the call journal: a round a previous process left', () => {
  it.each([
    ['outcome-unknown', true],
    ['failed', true],
    ['input-required', true],
    ['task', false],
    ['completed', false],
  ] as const)(
    'a leg that echoes the state of a stored round in the %s state continues it: %s',
    async (state, continued) => {
      serve(({method}) => (method === 'tools/call' ? sse([], 'open') : json({})))
      const round = stored('call-2', {
        state,
        name: 'deploy',
        argumentsDigest: digestArguments({}),
        resume: {requestState: 'rs'},
        task: {taskId: 't2', status: 'working', pollIntervalMs: 60_000},
      })
      const store = await storeOf(stored('call-1', {name: 'deploy', argumentsDigest: digestArguments({})}), round)
      const {transport} = await open({store})
      void transport
        .send(call(5, {name: 'deploy', arguments: {}, requestState: 'rs', inputResponses: {}}))
        .catch(() => {})
      await until(() => transport.calls.list().some((c) => c.state === 'sent'))
      const sent = transport.calls.list().filter((c) => c.state === 'sent')
      expect(sent).toEqual([expect.objectContaining({clientId: 5, inherited: false})])
      expect(sent[0]!.callId === 'call-2').toBe(continued)
      await transport.close()
    },
  )

  it('a leg that echoes the state of a leg still in flight is a call of its own', async () => {
    askOnce()
    network.use(
      http.post(url, async ({request}) =>
        ((await request.clone().json()) as {params?: {inputResponses?: unknown}}).params?.inputResponses === undefined
          ? undefined
          : sse([], 'open'),
      ),
    )
    const {transport, received} = await open()
    await transport.send(call(1, {name: 'deploy'}))
    await until(() => received.length === 1)
    void transport.send(call(2, {name: 'deploy', requestState: 'rs', inputResponses: {}})).catch(() => {})
    await until(() => transport.calls.list()[0]?.state === 'sent')
    void transport.send(call(3, {name: 'deploy', requestState: 'rs', inputResponses: {}})).catch(() => {})
    await until(() => transport.calls.list().length === 2)
    expect(transport.calls.list().map((c) => [c.clientId, c.state])).toEqual([
      [2, 'sent'],
      [3, 'sent'],
    ])
    await transport.close()
  })

  it('no longer counts a forgotten call in callBytes', async () => {
    serve(() => sse([], 'open'))
    const first = stored('call-1', {result: {content: [{type: 'text', text: 'x'.repeat(600)}]}})
    const second = stored('call-2')
    const store = await storeOf(first, second)
    const {transport, events} = await open({store, limits: {callBytes: chars(first) + chars(second)}})
    await transport.calls.forget('call-1')
    void transport.send(call(1)).catch(() => {})
    await until(() => transport.calls.list().length === 2)
    expect(eventsOf(events, 'limit-exceeded')).toEqual([])
    await transport.close()
  })
})

describe('the call journal: progress tokens shared or missing', () => {
  it('a progress without a token changes no call, though no leg of the round had one', async () => {
    serve(({id, params}) =>
      params['inputResponses'] === undefined
        ? json({jsonrpc: '2.0', id, result: {resultType: 'input_required', requestState: 'rs'}})
        : sse([
            frame(undefined, {jsonrpc: '2.0', method: 'notifications/progress', params: {progress: 1}}),
            frame(undefined, toolResult(id)),
          ]),
    )
    const {transport, events, received} = await open()
    await transport.send(call(1, {name: 'deploy'}))
    await until(() => received.length === 1)
    await transport.send(call(2, {name: 'deploy', requestState: 'rs', inputResponses: {}}))
    await until(() => received.length === 3)
    expect(changes(events).map((c) => c.progress)).toEqual([undefined, undefined, undefined, undefined])
    await transport.close()
  })

  it('a progress without a token changes no call that has none', async () => {
    serve(({id}) =>
      sse([
        frame(undefined, {jsonrpc: '2.0', method: 'notifications/progress', params: {progress: 1}}),
        frame(undefined, toolResult(id)),
      ]),
    )
    const {transport, events, received} = await open()
    await transport.send(call(1))
    await until(() => received.length === 2)
    expect(changes(events).map((c) => c.progress)).toEqual([undefined, undefined])
    await transport.close()
  })

  it("two calls in flight under one progress token: when the first goes, the second's progress is still recorded", async () => {
    const gates = [0, 1].map(() => {
      let open = (): void => {}
      return {opened: new Promise<void>((resolve) => (open = resolve)), open: () => open()}
    })
    serve(async ({id}) => {
      await gates[id as number]!.opened
      return id === 0
        ? json(toolResult(id))
        : sse([frame(undefined, progress('shared')), frame(undefined, toolResult(id))])
    })
    const {transport, events, received} = await open()
    void transport.send(call(0, {name: 'a', _meta: {progressToken: 'shared'}})).catch(() => {})
    void transport.send(call(1, {name: 'b', _meta: {progressToken: 'shared'}})).catch(() => {})
    await until(() => transport.calls.list().length === 2)
    gates[0]!.open()
    await until(() => transport.calls.list().length === 1)
    gates[1]!.open()
    await until(() => received.length === 3)
    expect(
      changes(events)
        .filter((c) => c.name === 'b')
        .map((c) => c.progress?.progress),
    ).toEqual([undefined, 1, 1])
    await transport.close()
  })

  it('keeps a call whose POST close() stopped: the next process lists it', async () => {
    const store = new MemoryStore()
    serve(() => new Promise<never>(() => {}))
    const {transport} = await open({store})
    const sending = transport.send(call(1)).catch(() => 'stopped')
    await until(() => transport.calls.list().length === 1)
    await transport.close()
    await sending
    expect([...(await records(store)).values()]).toEqual([expect.objectContaining({state: 'sent'})])
  })
})
