/**
 * Durable calls in both eras, over real sockets against the v2 SDK server (test/fixtures/durable-server.ts): a
 * process that ends mid-call is replaced by one on the same FileStore, which lists the call and learns how it
 * ended: a task by polling `tasks/get` again, an `input_required` round by sending its stored answers, a legacy call
 * by stream resumption. The process is ended by closing its Client (its connections drop with it).
 *
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Client} from '@modelcontextprotocol/client'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {
  ResumableHTTPClientTransport,
  type JournaledCall,
  type JsonValue,
  type ResumptionStore,
  type TransportEvent,
} from '../../src/index.ts'
import {digestArguments} from '../../src/journal.ts'
import {FileStore} from '../../src/node.ts'
import {startDurableServer, type DurableServer} from '../fixtures/durable-server.ts'
import {until} from '../fixtures/client.ts'
import {SlowApplyStore} from '../fixtures/recording-store.ts'

let directory: string
let server: DurableServer | undefined
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'durable-'))
})
afterEach(async () => {
  await server?.close()
  server = undefined
  await rm(directory, {recursive: true, force: true})
})

interface Process {
  transport: ResumableHTTPClientTransport
  client: Client
  events: TransportEvent[]
  asked: number
}

/** One client process: the v2 Client on this transport, over the FileStore every process of a test shares. */
async function startProcess(
  era: 'legacy' | 'modern',
  store: ResumptionStore = new FileStore(join(directory, 'store.json')),
): Promise<Process> {
  const events: TransportEvent[] = []
  const transport = new ResumableHTTPClientTransport(new URL(server!.url), {
    store,
    callJournal: true,
    reconnect: {minDelayMs: 20, maxDelayMs: 100},
    onEvent: (event) => events.push(event),
  })
  const negotiation = era === 'modern' ? {versionNegotiation: {mode: {pin: '2026-07-28'}}} : {}
  const client = new Client(
    {name: 'durable', version: '1.0.0'},
    {capabilities: {elicitation: {form: {}}}, ...negotiation},
  )
  const process: Process = {transport, client, events, asked: 0}
  client.setRequestHandler('elicitation/create', () => {
    process.asked++
    return {action: 'accept', content: {approved: true}}
  })
  await client.connect(transport)
  return process
}

const changes = (process: Process, callId: string): JournaledCall[] =>
  process.events.flatMap((event) => (event.type === 'call-changed' && event.call.callId === callId ? [event.call] : []))
const idsOf = (era: 'legacy' | 'modern'): (string | number)[] =>
  server!.seen.flatMap((seen) => (seen.era === era && seen.id !== undefined ? [seen.id] : []))

describe('2026-07-28: tasks and input_required rounds outlive their process', () => {
  it('a task handle is stored before the Client sees it; a restarted process lists the task, polls tasks/get again and gets its result; the tool ran once', async () => {
    server = await startDurableServer({taskMs: 700, pollIntervalMs: 40})
    const first = await startProcess('modern')
    // [v2 Client 2.4.0] a task handle is no result it takes: only the transport holds it.
    await expect(first.client.callTool({name: 'render', arguments: {scene: 'intro'}})).rejects.toMatchObject({
      code: 'UNSUPPORTED_RESULT_TYPE',
    })
    const [call] = first.transport.calls.list()
    expect(call).toMatchObject({
      method: 'tools/call',
      name: 'render',
      era: 'modern',
      state: 'task',
      inherited: false,
      task: {taskId: 'task-1', status: 'working', pollIntervalMs: 40},
    })
    expect(call!.argumentsDigest).toBe(digestArguments({scene: 'intro'}))
    await until(() => server!.seen.filter((seen) => seen.method === 'tasks/get').length >= 2)
    await first.client.close()

    const polledBefore = server.seen.filter((seen) => seen.method === 'tasks/get').length
    const second = await startProcess('modern')
    expect(second.transport.calls.list()).toEqual([
      expect.objectContaining({callId: call!.callId, name: 'render', state: 'task', inherited: true}),
    ])
    const settled = await second.transport.calls.wait(call!.callId, AbortSignal.timeout(5000))
    expect(settled).toMatchObject({
      callId: call!.callId,
      state: 'completed',
      result: {content: [{type: 'text', text: 'rendered intro'}]},
    })
    expect(server.seen.filter((seen) => seen.method === 'tasks/get').length).toBeGreaterThan(polledBefore)
    expect(server.executions).toEqual({render: 1})
    // Kept until the app forgets it: the Client never received this result.
    expect(second.transport.calls.list()).toHaveLength(1)
    await second.transport.calls.forget(call!.callId)
    expect(second.transport.calls.list()).toEqual([])
    await second.client.close()
    const third = await startProcess('modern')
    expect(third.transport.calls.list()).toEqual([])
    await third.client.close()
  })

  it("a restart while a round's answers are on their way resumes the round with the stored answers: the user is asked once, the call completes under the same call ID", async () => {
    server = await startDurableServer({legMs: 400})
    const first = await startProcess('modern')
    const cut = first.client.callTool({name: 'approve', arguments: {item: 'budget'}}).catch((error: unknown) => error)
    // The answered leg reached the server, which works on it; the process ends before its answer.
    await until(() => server!.seen.filter((seen) => seen.tool === 'approve').length === 2)
    const [call] = first.transport.calls.list()
    expect(call).toMatchObject({
      name: 'approve',
      state: 'sent',
      resume: {
        requestState: 'approval-round',
        inputResponses: {confirm: {action: 'accept', content: {approved: true}}},
      },
    })
    expect(changes(first, call!.callId).map((change) => change.state)).toEqual(['sent', 'input-required', 'sent'])
    expect(first.asked).toBe(1)
    await first.client.close()
    await cut

    const second = await startProcess('modern')
    const [listed] = second.transport.calls.list()
    // [spec 2026-07-28] a broken response stream is cancellation: the leg may have run; the round can go on.
    expect(listed).toMatchObject({
      callId: call!.callId,
      state: 'outcome-unknown',
      inherited: true,
      resume: call!.resume,
    })
    const result = await second.client.callTool({name: 'approve', arguments: {item: 'budget'}, ...listed!.resume})
    expect(result.content).toEqual([{type: 'text', text: 'approved budget'}])
    expect(first.asked + second.asked).toBe(1)
    expect(changes(second, call!.callId).at(-1)).toMatchObject({state: 'delivered'})
    expect(second.transport.calls.list()).toEqual([])
    // Every leg went out under a wire ID of its own, across both processes.
    const legs = server.seen.filter((seen) => seen.tool === 'approve').map((seen) => seen.id)
    expect(legs).toHaveLength(3)
    expect(new Set(legs).size).toBe(3)
    await second.client.close()
  })

  it('a task handle and an input_required round are in the store before the Client receives them', async () => {
    server = await startDurableServer({taskMs: 60_000, legMs: 1})
    const store = new SlowApplyStore(30)
    const process = await startProcess('modern', store)
    const applied: {resultType: unknown; calls: JsonValue[]}[] = []
    const deliver = process.transport.onmessage!
    process.transport.onmessage = (message, extra) => {
      const result = (message as {result?: {resultType?: unknown}}).result
      if (result !== undefined) applied.push({resultType: result.resultType, calls: store.appliedCalls()})
      deliver(message, extra)
    }
    await process.client.callTool({name: 'render', arguments: {scene: 'a'}}).catch(() => undefined)
    await process.client.callTool({name: 'approve', arguments: {item: 'b'}})
    expect(applied.find((entry) => entry.resultType === 'task')?.calls).toEqual([
      expect.objectContaining({name: 'render', state: 'task', task: expect.objectContaining({taskId: 'task-1'})}),
    ])
    expect(applied.find((entry) => entry.resultType === 'input_required')?.calls).toContainEqual(
      expect.objectContaining({
        name: 'approve',
        state: 'input-required',
        resume: {requestState: 'approval-round'},
        inputRequests: {confirm: expect.objectContaining({method: 'elicitation/create'})},
      }),
    )
    await process.client.close()
  })

  it('a tools/call is in the store before its POST leaves: its tool name and argument digest, never its arguments', async () => {
    server = await startDurableServer()
    const file = join(directory, 'store.json')
    const store = new FileStore(file)
    const atPost: unknown[] = []
    const transport = new ResumableHTTPClientTransport(new URL(server.url), {
      store,
      callJournal: true,
      fetch: async (url, init) => {
        if (typeof init?.body === 'string' && init.body.includes('"tools/call"')) {
          const keys = await store.list('')
          atPost.push(await Promise.all(keys.filter((key) => key.includes('#call:')).map((key) => store.get(key))))
        }
        return globalThis.fetch(url, init)
      },
    })
    const client = new Client(
      {name: 'durable', version: '1.0.0'},
      {capabilities: {elicitation: {form: {}}}, versionNegotiation: {mode: {pin: '2026-07-28'}}},
    )
    client.setRequestHandler('elicitation/create', () => ({action: 'accept', content: {approved: true}}))
    await client.connect(transport)
    await client.callTool({name: 'approve', arguments: {item: 'secret-token-123'}})
    expect(atPost).toHaveLength(2)
    expect(atPost[0]).toEqual([
      expect.objectContaining({
        name: 'approve',
        state: 'sent',
        argumentsDigest: digestArguments({item: 'secret-token-123'}),
      }),
    ])
    expect(JSON.stringify(atPost)).not.toContain('secret-token-123')
    // The second leg's answers are stored before it goes, so that a restart need not ask again.
    expect(atPost[1]).toEqual([
      expect.objectContaining({
        resume: {
          requestState: 'approval-round',
          inputResponses: {confirm: {action: 'accept', content: {approved: true}}},
        },
      }),
    ])
    expect(transport.calls.list()).toEqual([])
    await client.close()
  })

  it('the journal is bounded by limits.maxCalls: past it the oldest call goes, with a limit-exceeded event', async () => {
    server = await startDurableServer({taskMs: 60_000})
    const events: TransportEvent[] = []
    const transport = new ResumableHTTPClientTransport(new URL(server.url), {
      callJournal: true,
      limits: {maxCalls: 2},
      onEvent: (event) => events.push(event),
    })
    const client = new Client({name: 'durable', version: '1.0.0'}, {versionNegotiation: {mode: {pin: '2026-07-28'}}})
    await client.connect(transport)
    for (const scene of ['a', 'b', 'c'])
      await client.callTool({name: 'render', arguments: {scene}}).catch(() => undefined)
    expect(transport.calls.list().map((call) => call.task?.taskId)).toEqual(['task-2', 'task-3'])
    expect(events).toContainEqual(expect.objectContaining({type: 'limit-exceeded', limit: 'maxCalls', max: 2}))
    await client.close()
  })
})

describe("2025 revisions: a restarted process learns its predecessor's call by stream resumption", () => {
  it('lists the call with its progress and gets its result from the resumed stream; the tool ran once', async () => {
    server = await startDurableServer({steps: 5, stepMs: 80})
    const first = await startProcess('legacy')
    const progress: number[] = []
    void first.client
      .callTool({name: 'report', arguments: {topic: 'q3'}}, {onprogress: (update) => progress.push(update.progress)})
      .catch(() => undefined)
    await until(() => progress.length >= 1)
    const [call] = first.transport.calls.list()
    expect(call).toMatchObject({name: 'report', era: 'legacy', state: 'sent', progress: {progress: 1, total: 5}})
    await first.client.close()

    const second = await startProcess('legacy')
    expect(second.transport.calls.list()).toEqual([
      expect.objectContaining({callId: call!.callId, state: 'sent', inherited: true}),
    ])
    const settled = await second.transport.calls.wait(call!.callId, AbortSignal.timeout(5000))
    expect(settled).toMatchObject({
      state: 'completed',
      progress: {progress: 5},
      result: {content: [{type: 'text', text: 'reported q3'}]},
    })
    expect(
      changes(second, call!.callId).some((change) => change.progress!.progress > 1 && change.state === 'sent'),
    ).toBe(true)
    expect(server.executions).toEqual({report: 1})
    expect(second.transport.metrics.streamResumptions).toBeGreaterThan(0)
    await second.client.close()
  })
})

describe('wire request IDs', () => {
  it.each(['legacy', 'modern'] as const)('never repeat across restarts (%s era)', async (era) => {
    server = await startDurableServer({steps: 1, stepMs: 1, taskMs: 1})
    for (let restart = 0; restart < 3; restart++) {
      const process = await startProcess(era)
      await process.client.listTools()
      await process.client.callTool(
        era === 'legacy' ? {name: 'report', arguments: {topic: 't'}} : {name: 'approve', arguments: {item: 'i'}},
      )
      await process.client.close()
    }
    const ids = idsOf(era).filter((id) => typeof id === 'number')
    expect(ids.length).toBeGreaterThanOrEqual(era === 'legacy' ? 7 : 9)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
