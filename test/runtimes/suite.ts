/**
 * The runtime suite, written once and run by each runtime's own test runner: `bun test`, `deno test` and Node's
 * `node --test` (docs/runtimes.md). It runs the package as built (`npm run build`: dist/, imported by its name
 * through package.json's `exports`, as an installed copy resolves), the SDK v1 Client on it, a response stream cut
 * mid-call on a real socket, the stores the runtime has, and the testing kit with msw 3. Each runtime's entry
 * (`bun.runtime.ts`, `deno.runtime.ts`, `node.runtime.ts`) hands it its runner and what differs between runtimes.
 */
import assert from 'node:assert/strict'
import type {ChildProcess} from 'node:child_process'
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import type {HttpHandler} from 'msw'
import {
  MemoryStore,
  ResumableHTTPClientTransport,
  type ResumableHTTPClientTransportOptions,
  type TransportEvent,
} from 'mcp-resumable-http'
import {createMockMcpServer} from 'mcp-resumable-http/testing'
import {createReferenceServer, listen, type Listening, type ReferenceServer} from 'mcp-resumable-http/testing/node'
import {runJsonLines, type JsonLine} from '../fixtures/child-process.ts'

/** What a part of the suite needs of the system. Deno grants each part these and nothing more (docs/runtimes.md). */
export interface Needs {
  /**
   * Sockets on 127.0.0.1 (the reference server listens there, and the client connects to it), and reading the
   * package and node_modules: what is imported dynamically (an entry point, the SDK's auth() on a 401) is read.
   */
  loopback?: true
  /** FileStore: its folder read and written, the host name, the liveness of processes. */
  fileStore?: true
  /** Starting processes of this runtime: the clients the FileStore part kills and restarts. */
  processes?: true
  /** msw: the environment (its `debug` dependency reads every variable). */
  env?: true
}

/** The test runner of a runtime, as the suite uses it. */
export interface Runner {
  describe: (title: string, needs: Needs, body: () => void) => void
  /** A test that fails once `timeoutMs` passed: a hang is a failure, never a wait for ever. */
  test: (title: string, body: () => Promise<void>, timeoutMs: number) => void
  beforeAll: (body: () => Promise<void>) => void
  afterAll: (body: () => Promise<void>) => void
}

export interface Runtime {
  runner: Runner
  /** The command line that runs `script` (a plain JavaScript file) with `args` in a new process of this runtime. */
  command: (script: string, args: string[]) => [string, ...string[]]
  /** Serves msw `handlers` to this runtime's global fetch; resolves with what stops it. */
  mock: (handlers: HttpHandler[]) => Promise<() => Promise<void>>
}

const repository = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url))
/** The folders FileStore writes in, inside the repository (gitignored): a child process there finds node_modules. */
export const scratch = repository('.test-build/runtimes')
/** The build the suite imports, and the one the client processes load by path. */
export const dist = repository('dist')
/** Where the SDK, msw and the package's dependencies are. */
export const nodeModules = repository('node_modules')
const restartClient = repository('test/fixtures/restart-client.mjs')

/** The SDK Client on this transport, connected to `url`; every transport event kept. */
async function connect(
  url: string,
  options: ResumableHTTPClientTransportOptions = {},
): Promise<{client: Client; transport: ResumableHTTPClientTransport; events: TransportEvent[]}> {
  const events: TransportEvent[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    reconnect: {minDelayMs: 1, maxDelayMs: 5},
    ...options,
    onEvent: (event) => events.push(event),
  })
  const client = new Client({name: 'runtime-suite', version: '1.0.0'})
  await client.connect(transport)
  return {client, transport, events}
}

/** The slow tool cut after its third event, on the reference server behind `url`: its result, progress and events. */
async function callCutMidway(
  server: ReferenceServer,
  url: string,
): Promise<{text: unknown; progress: number[]; events: TransportEvent[]}> {
  const {client, events} = await connect(url)
  try {
    server.faults.cutNext({on: 'POST', after: 3, how: 'error'})
    const progress: number[] = []
    const result = await client.callTool({name: 'slow', arguments: {steps: 5, delayMs: 20}}, undefined, {
      onprogress: ({progress: step}) => progress.push(step),
    })
    return {text: result.content, progress, events}
  } finally {
    await client.close()
  }
}

const resumptions = (events: TransportEvent[]) =>
  events.filter(
    (event): event is Extract<TransportEvent, {type: 'reconnect'}> =>
      event.type === 'reconnect' && event.stream === 'request',
  )

/** A process of this runtime running the restart client; each printed line goes to `onLine` until it says stop. */
function runClient(
  runtime: Runtime,
  children: ChildProcess[],
  args: string[],
  onLine: (line: JsonLine) => boolean,
): Promise<JsonLine> {
  const {child, line} = runJsonLines(
    runtime.command(restartClient, [dist, ...args]),
    `the client process (${args.at(-1)!})`,
    onLine,
  )
  children.push(child)
  return line
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

export function registerTests(runtime: Runtime): void {
  const {describe, test, beforeAll, afterAll} = runtime.runner

  describe('the package as built, on 127.0.0.1', {loopback: true}, () => {
    let server: ReferenceServer
    let listening: Listening
    beforeAll(async () => {
      server = createReferenceServer()
      listening = await listen(server)
    })
    afterAll(async () => {
      await listening.close()
    })

    test('imports every entry point by the package name, each with its exports', async () => {
      const entries = {
        'mcp-resumable-http': 'ResumableHTTPClientTransport',
        'mcp-resumable-http/testing': 'createMockMcpServer',
        'mcp-resumable-http/testing/node': 'listen',
        'mcp-resumable-http/node': 'FileStore',
        'mcp-resumable-http/cloudflare': 'DurableObjectStore',
        'mcp-resumable-http/idb': 'IdbStore',
        'mcp-resumable-http/redis': 'RedisStore',
      }
      for (const [entry, name] of Object.entries(entries)) {
        const loaded = (await import(entry)) as Record<string, unknown>
        assert.equal(typeof loaded[name], 'function', `${entry} exports ${name}`)
      }
    }, 10_000)

    test('connects the SDK Client over a real socket and calls a tool', async () => {
      const {client, transport} = await connect(listening.url)
      try {
        const result = await client.callTool({name: 'echo', arguments: {from: 'runtime'}})
        assert.deepEqual(result.content, [{type: 'text', text: 'echo: {"from":"runtime"}'}])
        assert.match(transport.sessionId ?? '', /^session-\d+$/)
      } finally {
        await client.close()
      }
    }, 10_000)

    test('resumes once, from its cursor, a response stream whose socket is destroyed mid-call; the tool runs once', async () => {
      const before = server.executions['slow'] ?? 0
      const {text, progress, events} = await callCutMidway(server, listening.url)
      assert.deepEqual(text, [{type: 'text', text: 'done after 5 steps'}])
      assert.deepEqual(progress, [1, 2, 3, 4, 5])
      assert.equal(server.executions['slow'], before + 1)
      const resumed = resumptions(events)
      assert.equal(resumed.length, 1)
      assert.equal(resumed[0]!.branch, 'stream-resumption')
      assert.match(resumed[0]!.headers['last-event-id'] ?? '', /^p\d+_\d+$/)
    }, 10_000)

    test('MemoryStore: a second transport on the same store resumes the session, without a second initialize', async () => {
      const store = new MemoryStore()
      const initialized = server.requests('POST', 'initialize').length
      const first = await connect(listening.url, {store})
      await first.client.close()
      const second = await connect(listening.url, {store})
      try {
        assert.equal(second.transport.sessionId, first.transport.sessionId)
        assert.equal(server.requests('POST', 'initialize').length, initialized + 1)
      } finally {
        await second.client.close()
      }
    }, 10_000)
  })

  describe('FileStore across processes of this runtime', {loopback: true, fileStore: true, processes: true}, () => {
    let server: ReferenceServer
    let listening: Listening
    let directory: string
    const children: ChildProcess[] = []
    beforeAll(async () => {
      server = createReferenceServer()
      listening = await listen(server)
      await mkdir(scratch, {recursive: true})
      directory = await mkdtemp(join(scratch, 'file-store-'))
    })
    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL')
      await Promise.all(children.map(exited))
      await listening.close()
      await rm(directory, {recursive: true, force: true})
    })

    test('a client killed mid-call restarts on the same file: the same session, the rest of the call replayed to it, the tool ran once', async () => {
      const file = join(directory, 'restart.json')
      const first = await runClient(runtime, children, [listening.url, file, 'call'], (line) => line['progress'] === 3)
      assert.equal(first['progress'], 3)
      const killed = children.at(-1)!
      killed.kill('SIGKILL')
      await exited(killed)

      const resumed = await runClient(
        runtime,
        children,
        [listening.url, file, 'resume'],
        (line) => line['result'] !== undefined,
      )
      assert.equal(server.requests('POST', 'initialize').length, 1)
      assert.equal(server.requests('POST', 'tools/call').length, 1)
      assert.deepEqual(server.executions, {slow: 1})
      assert.deepEqual((resumed['result'] as {result: unknown}).result, {
        content: [{type: 'text', text: 'done after 8 steps'}],
      })
      assert.equal(resumed['sessionId'], server.sessions()[0]!.id)
      const events = resumed['events'] as {type: string; branch?: string; headers?: Record<string, string>}[]
      const resumption = events.find((event) => event.type === 'reconnect' && event.branch === 'stream-resumption')
      assert.match(resumption?.headers?.['last-event-id'] ?? '', /^p\d+_\d+$/)
    }, 20_000)

    test('a second process never shares the session of a live owner: it starts one of its own', async () => {
      const {FileStore} = await import('mcp-resumable-http/node')
      const file = join(directory, 'owned.json')
      const owner = await connect(listening.url, {store: new FileStore(file)})
      try {
        const other = await runClient(
          runtime,
          children,
          [listening.url, file, 'connect'],
          (line) => line['connected'] !== undefined,
        )
        assert.match(String(other['connected']), /^session-\d+$/)
        assert.notEqual(other['connected'], owner.transport.sessionId)
      } finally {
        await owner.client.close()
      }
    }, 20_000)
  })

  describe("the testing kit with msw 3, in this runtime's test runner", {env: true}, () => {
    test("the README's snippet: a stream cut mid-call through msw is resumed, and the tool runs once", async () => {
      const {server, handlers} = createMockMcpServer({url: 'https://mcp.example/mcp'})
      const stop = await runtime.mock(handlers)
      try {
        const {text, events} = await callCutMidway(server, 'https://mcp.example/mcp')
        assert.deepEqual(text, [{type: 'text', text: 'done after 5 steps'}])
        assert.deepEqual(server.executions, {slow: 1})
        assert.deepEqual(
          resumptions(events).map((event) => event.branch),
          ['stream-resumption'],
        )
      } finally {
        await stop()
      }
    }, 10_000)
  })
}
