/**
 * `@modelcontextprotocol/server-everything` (2026.8.31), the official reference server, over real sockets: as it
 * ships (its own binary, whose event store hands the SDK an event ID where a stream ID belongs, so a resumed stream
 * gets its replay and then nothing), and its own MCP server (`createServer()`, its tools) hosted on the SDK's
 * `StreamableHTTPServerTransport` with `ResumableEventStore` and `reemitPendingRequests`. The binary is bound to
 * 127.0.0.1 by a preload (test/fixtures/listen-local.mjs).
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {createServer as createNetServer} from 'node:net'
import {createInterface} from 'node:readline'
import {createServer as createEverything} from '@modelcontextprotocol/server-everything/dist/server/index.js'
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {afterEach, describe, expect, it} from 'vitest'
import {callTool, connectPeer, pause, until, type Call, type Kind, type Peer} from '../fixtures/interop.ts'
import {recordingFetch, startTestServer, type SeenGet, type TestServer} from '../fixtures/sdk-servers.ts'
import {afterEventWith, startTcpProxy, type TcpProxy} from '../fixtures/tcp-proxy.ts'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Long enough for anything owed to have arrived on 127.0.0.1: here, to show that nothing does. */
const nothingComesMs = 1000

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createNetServer().listen(0, '127.0.0.1', () => {
      const {port} = server.address() as {port: number}
      server.close(() => resolve(port))
    })
  })
}

/** server-everything's own binary, `streamableHttp`, on a free port of 127.0.0.1. */
async function startShipped(): Promise<number> {
  const port = await freePort()
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      './test/fixtures/listen-local.mjs',
      'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
      'streamableHttp',
    ],
    {
      env: {...process.env, PORT: String(port)},
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  cleanups.push(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  })
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server-everything exited: ${String(code)}`)))
    createInterface({input: child.stderr!}).on('line', (line) => {
      if (line.includes('listening on port')) resolve()
    })
  })
  return port
}

/** server-everything's MCP server on the SDK's Node transport, with this package's server parts. */
async function startHosted(): Promise<TestServer> {
  const sessions: (() => void)[] = []
  const server = await startTestServer({
    flavour: 'v1-node',
    store: 'resumable',
    reemit: {},
    mcpServer: () => {
      const {server: everything, cleanup} = createEverything()
      sessions.push(cleanup)
      return everything
    },
  })
  cleanups.push(async () => {
    for (const cleanup of sessions) cleanup()
    await server.close()
  })
  return server
}

async function through(port: number, kind: Kind): Promise<{proxy: TcpProxy; peer: Peer; seen: SeenGet[]}> {
  const proxy = await startTcpProxy({port})
  cleanups.push(() => proxy.close())
  const seen: SeenGet[] = []
  const peer = await connectPeer(kind, proxy.url('/mcp'), {fetch: recordingFetch(seen)}, {fetch: recordingFetch(seen)})
  cleanups.push(() => peer.client.close())
  return {proxy, peer, seen}
}

const portOf = (server: TestServer): number => Number(new URL(server.url).port)

/**
 * `trigger-sampling-request` with its connection cut right after the sampling request reaches the client, which
 * answers once it has resumed the call's stream: the result comes after the resumption.
 */
async function sampleAcrossACut({proxy, peer, seen}: {proxy: TcpProxy; peer: Peer; seen: SeenGet[]}): Promise<Call> {
  peer.client.setRequestHandler(CreateMessageRequestSchema, async () => {
    peer.handled.sampling++
    await until(() => seen.some((entry) => entry.lastEventId !== undefined && entry.status === 200))
    return {model: 'm', role: 'assistant', content: {type: 'text', text: `answer ${peer.handled.sampling}`}}
  })
  const cut = proxy.cutNext({
    request: (chunk) => chunk.includes('"tools/call"'),
    at: afterEventWith('sampling/createMessage'),
  })
  const call = callTool(peer, 'trigger-sampling-request', {arguments: {prompt: 'a question', maxTokens: 10}})
  await cut
  await Promise.race([call.settled, pause(nothingComesMs)])
  return call
}

describe.each(['ours', 'sdk'] as Kind[])('server-everything with the %s transport', (kind) => {
  it('as it ships: a call cut right after its sampling request hangs, its resumed stream replayed and then silent', async () => {
    const stack = await through(await startShipped(), kind)
    const call = await sampleAcrossACut(stack)
    expect(call.state).toBe('pending')
    expect(stack.peer.handled.sampling).toBe(1)
  })

  it('its tools on an SDK transport with ResumableEventStore: the same cut resumes, the sampling answered once, the result once', async () => {
    const server = await startHosted()
    const stack = await through(portOf(server), kind)
    const call = await sampleAcrossACut(stack)
    await call.settled
    expect(call.state).toBe('result')
    expect(call.text).toContain('answer 1')
    expect(stack.peer.handled.sampling).toBe(1)
    expect(server.requests('GET', 'with').map((entry) => entry.status)).toEqual([200])
  })

  it('its tools on an SDK transport with ResumableEventStore answer as on its own server: echo, sums, progress, elicitation', async () => {
    const server = await startHosted()
    const {proxy, peer} = await through(portOf(server), kind)
    const echo = callTool(peer, 'echo', {arguments: {message: 'hello'}})
    const sum = callTool(peer, 'get-sum', {arguments: {a: 2, b: 3}})
    await Promise.all([echo.settled, sum.settled])
    expect([echo.text, sum.text]).toEqual(['Echo: hello', 'The sum of 2 and 3 is 5.'])
    // A long operation cut after its second step: resumed, every step once.
    const cut = proxy.cutNext({
      request: (chunk) => chunk.includes('trigger-long-running-operation'),
      at: afterEventWith('"progress":2'),
    })
    const long = callTool(peer, 'trigger-long-running-operation', {arguments: {duration: 0.4, steps: 4}})
    await cut
    await long.settled
    expect(long.progress).toEqual([1, 2, 3, 4])
    expect(long.text).toBe('Long running operation completed. Duration: 0.4 seconds, Steps: 4.')
    const elicited = callTool(peer, 'trigger-elicitation-request', {arguments: {}})
    await elicited.settled
    expect(elicited.state).toBe('result')
    expect(peer.handled.elicitation).toBe(1)
    await until(() => server.requests('GET', 'with').length === 1)
  })
})
