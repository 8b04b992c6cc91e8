/**
 * The workerd suite's Worker (test/runtimes/workerd.runtime.ts builds it with esbuild and runs `workerd test`):
 * each named export's `test()` is one test. The package as built, the SDK v1 Client, a response stream cut mid-call
 * on a real socket to the reference server (in Node, on 127.0.0.1, reached through the `loopback` network), the
 * DurableObjectStore over a real Durable Object's storage, and the example's Durable Object aborted mid-call.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CfWorkerJsonSchemaValidator} from '@modelcontextprotocol/sdk/validation/cfworker-provider.js'
import {
  isLeaseLost,
  MemoryStore,
  ResumableHTTPClientTransport,
  type JsonValue,
  type TransportEvent,
} from 'mcp-resumable-http'
import {DurableObjectStore} from 'mcp-resumable-http/cloudflare'
import {McpAgent, type Env as AgentEnv} from '../../../examples/cloudflare-worker/src/worker.ts'

interface Env extends AgentEnv {
  STORE: DurableObjectNamespace
}

/**
 * What a reference server has seen, from its control endpoint (test/runtimes/workerd.runtime.ts):
 * each test has a server of its own, at `/<name>/mcp` beside `MCP_SERVER_URL` (the agent's,
 * `/agent/mcp`), its control at `/<name>/control`.
 */
interface ServerState {
  executions: Record<string, number>
  initialize: number
  toolCalls: number
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  const [seen, wanted] = [JSON.stringify(actual), JSON.stringify(expected)]
  if (seen !== wanted) throw new Error(`${what}: expected ${wanted}, got ${seen}`)
}

/** The endpoint of the reference server named `name`. */
const endpoint = (env: Env, name: string): URL => new URL(`/${name}/mcp`, env.MCP_SERVER_URL)

async function serverState(url: URL): Promise<ServerState> {
  return (await fetch(new URL('control', url))).json<ServerState>()
}

/** Arms a fault of the reference server at `url`: `{cutNext: {...}}` as in its `faults`. */
async function arm(url: URL, fault: Record<string, unknown>): Promise<void> {
  const response = await fetch(new URL('control', url), {method: 'POST', body: JSON.stringify(fault)})
  expectEqual(response.status, 204, 'arming a fault')
}

async function connect(
  url: URL,
  events: TransportEvent[] = [],
): Promise<{client: Client; transport: ResumableHTTPClientTransport}> {
  const transport = new ResumableHTTPClientTransport(url, {
    store: new MemoryStore(),
    reconnect: {minDelayMs: 1, maxDelayMs: 5},
    onEvent: (event) => events.push(event),
  })
  const client = new Client(
    {name: 'workerd-suite', version: '1.0.0'},
    {jsonSchemaValidator: new CfWorkerJsonSchemaValidator()},
  )
  await client.connect(transport)
  return {client, transport}
}

export const connectsAndCallsATool = {
  async test(_controller: TestController, env: Env): Promise<void> {
    const {client, transport} = await connect(endpoint(env, 'connect'))
    try {
      const result = await client.callTool({name: 'echo', arguments: {from: 'workerd'}})
      expectEqual(result.content, [{type: 'text', text: 'echo: {"from":"workerd"}'}], 'the result')
      if (!/^session-\d+$/.test(transport.sessionId ?? ''))
        throw new Error(`no session: ${String(transport.sessionId)}`)
    } finally {
      await client.close()
    }
  },
}

export const resumesACallCutMidway = {
  async test(_controller: TestController, env: Env): Promise<void> {
    const url = endpoint(env, 'cut')
    const events: TransportEvent[] = []
    const {client} = await connect(url, events)
    try {
      await arm(url, {cutNext: {on: 'POST', after: 3, how: 'error'}})
      const progress: number[] = []
      const result = await client.callTool({name: 'slow', arguments: {steps: 5, delayMs: 20}}, undefined, {
        onprogress: ({progress: step}) => progress.push(step),
      })
      expectEqual(result.content, [{type: 'text', text: 'done after 5 steps'}], 'the result')
      expectEqual(progress, [1, 2, 3, 4, 5], 'the progress')
      expectEqual((await serverState(url)).executions, {slow: 1}, 'executions')
      // workerd reports the drop as `Error: Network connection lost.`, not a TypeError: it is a drop all the same.
      const resumed = events.filter((event) => event.type === 'reconnect' && event.stream === 'request')
      expectEqual(
        resumed.map((event) => event.type === 'reconnect' && event.branch),
        ['stream-resumption'],
        'the resumptions',
      )
    } finally {
      await client.close()
    }
  },
}

/** Runs the store's checks in a Durable Object: `ctx.storage` exists only there. */
export class StoreChecks {
  readonly #storage: DurableObjectStorage

  constructor(ctx: DurableObjectState) {
    this.#storage = ctx.storage
  }

  async fetch(): Promise<Response> {
    const store = new DurableObjectStore(this.#storage)
    // The JSON values the transport stores, back as given; a missing key is undefined; delete removes.
    const values: JsonValue[] = ['text ✓', 0, -1.5, true, null, [1, 'two', {three: [3]}], {nested: {deep: [null]}}]
    for (const [i, value] of values.entries()) await store.set(`mcp-resumable-http:key-${i}`, value)
    for (const [i, value] of values.entries())
      expectEqual(await new DurableObjectStore(this.#storage).get(`mcp-resumable-http:key-${i}`), value, `key-${i}`)
    expectEqual(await store.get('missing'), undefined, 'a missing key')
    await store.delete('mcp-resumable-http:key-0')
    await store.delete('never-set')
    expectEqual(await store.get('mcp-resumable-http:key-0'), undefined, 'a deleted key')

    // A structured clone: a value changed after set is stored as it was.
    const value = {streams: {standalone: 'e1'}}
    await store.set('mcp-resumable-http:clone', value)
    value.streams.standalone = 'changed'
    expectEqual(await store.get('mcp-resumable-http:clone'), {streams: {standalone: 'e1'}}, 'a value changed after set')

    // list by prefix: the transport's keys only, not the object's own.
    await this.#storage.put('app:own-key', 'the app')
    expectEqual(
      (await store.list('mcp-resumable-http:key-')).sort(),
      [
        'mcp-resumable-http:key-1',
        'mcp-resumable-http:key-2',
        'mcp-resumable-http:key-3',
        'mcp-resumable-http:key-4',
        'mcp-resumable-http:key-5',
        'mcp-resumable-http:key-6',
      ],
      'list by prefix',
    )
    expectEqual(await store.list('nothing:'), [], 'list of an unused prefix')

    // Leases live in the instance, shared by every store over this storage; a fenced write of a lost lease is refused.
    const first = await store.acquire('session#lease', 100)
    expectEqual(first?.token, 1, 'the first lease')
    expectEqual(
      await new DurableObjectStore(this.#storage).acquire('session#lease', 100),
      undefined,
      'a lease held, asked by another store',
    )
    await first!.release()
    const second = await new DurableObjectStore(this.#storage).acquire('session#lease', 100)
    expectEqual(second?.token, 2, 'the next lease')
    const refused = await store.set('mcp-resumable-http:fenced', 1, {lease: 'session#lease', token: 1}).then(
      () => undefined,
      (error: unknown) => error,
    )
    expectEqual(isLeaseLost(refused), true, 'a write under a lost lease refused')
    expectEqual(await store.get('mcp-resumable-http:fenced'), undefined, 'the refused write')
    await store.set('mcp-resumable-http:fenced', 2, {lease: 'session#lease', token: 2})
    expectEqual(await store.get('mcp-resumable-http:fenced'), 2, 'a write under the latest lease')

    let refusal: unknown
    try {
      new DurableObjectStore({get: () => Promise.resolve(undefined)} as unknown as DurableObjectStorage)
    } catch (error) {
      refusal = error
    }
    expectEqual(
      refusal instanceof TypeError && refusal.message,
      "DurableObjectStore: storage must be a Durable Object's storage (ctx.storage); it lacks put, delete, list",
      'a storage without its methods',
    )
    return new Response('ok')
  }
}

export const durableObjectStoreKeepsTheRecords = {
  async test(_controller: TestController, env: Env): Promise<void> {
    const response = await env.STORE.get(env.STORE.idFromName('checks')).fetch('http://store/')
    expectEqual(await response.text(), 'ok', 'the checks in the object')
  },
}

/** The example's Durable Object, and a way to abort it as the platform may (an exception, a reset, an update). */
export class AbortableAgent extends McpAgent {
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === '/abort') this.ctx.abort('aborted by the test, mid-call')
    return super.fetch(request)
  }
}

export const anAgentAbortedMidCallIsResumedByItsNextInstance = {
  async test(_controller: TestController, env: Env): Promise<void> {
    const id = env.MCP_AGENT.idFromName('aborted-mid-call')
    const url = new URL(env.MCP_SERVER_URL)
    const agent = (): DurableObjectStub => env.MCP_AGENT.get(id)
    const calls = async (): Promise<unknown[]> => (await agent().fetch('http://agent/calls')).json()
    // A second of work: the abort comes while it runs.
    const call = agent().fetch('http://agent/call', {
      method: 'POST',
      body: JSON.stringify({name: 'slow', arguments: {steps: 20, delayMs: 50}}),
    })
    const cut = call.then(
      () => 'answered',
      (error: unknown) => `failed: ${String(error)}`,
    )
    // Mid-call: the agent has had two of its twenty progress events (each stored the stream's cursor first).
    const deadline = Date.now() + 5000
    for (;;) {
      const [inFlight] = (await calls()) as {progress?: {progress: number}}[]
      if ((inFlight?.progress?.progress ?? 0) >= 2) break
      if (Date.now() > deadline) throw new Error(`no progress within 5 s: ${JSON.stringify(inFlight)}`)
      // Polled: the progress is in the object.
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const aborted = await agent()
      .fetch('http://agent/abort')
      .then(
        () => 'answered',
        (error: unknown) => String(error),
      )
    if (!aborted.includes('aborted by the test')) throw new Error(`the abort: ${aborted}`)
    const cutShort = await cut
    if (!cutShort.startsWith('failed')) throw new Error(`the call in the aborted instance was ${cutShort}`)

    // A new stub reaches the object's next instance: it resumes the session and the call from its storage.
    const [left, ...more] = (await calls()) as {
      name: string
      state: string
      inherited: boolean
      progress: {progress: number}
      result: unknown
    }[]
    expectEqual(
      [left?.name, left?.state, left?.inherited, left?.progress.progress, left?.result, more],
      ['slow', 'completed', true, 20, {content: [{type: 'text', text: 'done after 20 steps'}]}, []],
      'the call the aborted instance left',
    )
    const {executions, initialize, toolCalls} = await serverState(url)
    expectEqual(
      {executions, initialize, toolCalls},
      {executions: {slow: 1}, initialize: 1, toolCalls: 1},
      'what the server saw: one initialize (the first instance), one call, run once',
    )
    expectEqual(await calls(), [], 'the calls, once reported')
  },
}

export default {} satisfies ExportedHandler<Env>
