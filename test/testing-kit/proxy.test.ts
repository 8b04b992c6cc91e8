/**
 * Any MCP server behind the kit's faults: the official SDK's `McpServer` (the v1 package and the v2 one) on its
 * Web-standard transport, and the reference server, each wrapped by `createFaultProxy`, served under msw and over
 * real sockets, with the SDK Client on this transport. The same `deploy` tool everywhere: progress, an
 * elicitation, more progress, a result.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ElicitRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {setupServer} from 'msw/node'
import {afterAll, afterEach, describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {
  createFaultProxy,
  createReferenceServer,
  handlersFor,
  type FaultProxy,
  type ToolDefinition,
} from '../../src/testing/index.ts'
import {listen} from '../../src/testing/node.ts'
import {codeOf} from '../fixtures/client.ts'
import {sdkV1Server, sdkV2Server, type WebMcpServer} from '../fixtures/sdk-web-server.ts'

const mswUrl = 'https://proxied.test/mcp'
const network = setupServer()
network.listen({onUnhandledFrame: 'bypass'})
afterAll(() => network.close())
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  network.resetHandlers()
  for (const close of closers.splice(0)) await close()
})

/** The `deploy` of the SDK fixtures, declared on the reference server. */
const deploy: ToolDefinition = {
  name: 'deploy',
  inputSchema: {type: 'object', properties: {service: {type: 'string'}}, required: ['service']},
  handler: async (args, context) => {
    const service = String(args['service'])
    context.progress(1, 4)
    context.progress(2, 4)
    const answer = await context.elicit({
      message: `Deploy ${service}?`,
      requestedSchema: {type: 'object', properties: {confirm: {type: 'boolean'}}},
    })
    context.progress(3, 4)
    context.progress(4, 4)
    return {content: [{type: 'text', text: answer['action'] === 'accept' ? `deployed ${service}` : 'not deployed'}]}
  },
}

function referenceServer(): WebMcpServer {
  const server = createReferenceServer({tools: [deploy], retryMs: 50})
  return {handle: (request) => server.handle(request), executions: server.executions}
}

const servers: [string, () => WebMcpServer][] = [
  ['the SDK v1 McpServer', sdkV1Server],
  ['the SDK v2 McpServer', sdkV2Server],
  ['the reference server', referenceServer],
]

interface Setup {
  proxy: FaultProxy
  mcp: WebMcpServer
  client: Client
  /** The message of each elicitation the Client answered. */
  elicited: string[]
  /** Runs inside the Client's elicitation handler, before it answers. */
  onElicit: {run: () => void}
}

async function start(makeServer: () => WebMcpServer, backend: 'msw' | 'node'): Promise<Setup> {
  const mcp = makeServer()
  const proxy = createFaultProxy(mcp.handle)
  let url = mswUrl
  if (backend === 'msw') network.use(...handlersFor(proxy, {url}))
  else {
    const listening = await listen(proxy)
    closers.push(() => listening.close())
    url = listening.url
  }
  const elicited: string[] = []
  const onElicit = {run: () => {}}
  const client = new Client({name: 'agent', version: '1.0.0'}, {capabilities: {elicitation: {}}})
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    onElicit.run()
    elicited.push(request.params.message)
    return {action: 'accept', content: {confirm: true}}
  })
  await client.connect(new ResumableHTTPClientTransport(new URL(url), {reconnect: {minDelayMs: 1, maxDelayMs: 5}}))
  closers.unshift(() => client.close())
  return {proxy, mcp, client, elicited, onElicit}
}

async function callDeploy(client: Client): Promise<{text: string; progress: number[]}> {
  const progress: number[] = []
  const result = await client.callTool({name: 'deploy', arguments: {service: 'api'}}, undefined, {
    onprogress: ({progress: step}) => progress.push(step),
  })
  return {text: (result.content as {text: string}[])[0]!.text, progress}
}

describe.each(servers)('%s behind the fault proxy', (_, makeServer) => {
  describe.each(['msw', 'node'] as const)('served by %s', (backend) => {
    it.each([3, 4])(
      'the tool stream cut after %i events: resumed, the tool ran once, the elicitation answered once',
      async (after) => {
        const {proxy, mcp, client, elicited} = await start(makeServer, backend)
        proxy.faults.cutNext({after, how: 'error', on: 'POST'})
        expect(await callDeploy(client)).toEqual({text: 'deployed api', progress: [1, 2, 3, 4]})
        expect(mcp.executions).toEqual({deploy: 1})
        expect(elicited).toEqual(['Deploy api?'])
        expect([...proxy.answers.values()].map((answers) => answers.length)).toEqual([1])
        expect(proxy.requests('POST', 'tools/call')).toHaveLength(1)
        // The proxy's log holds the resumption with both headers.
        const sessionId = proxy.requests('POST', 'tools/call')[0]!.sessionId
        expect(proxy.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toEqual([
          expect.objectContaining({sessionId, lastEventId: expect.any(String), status: 200}),
        ])
      },
    )

    it('the tool stream cut mid-event (after 200 bytes): the partial event is dropped, the replay brings it whole', async () => {
      const {proxy, mcp, client, elicited} = await start(makeServer, backend)
      proxy.faults.cutNext({afterBytes: 200, how: 'error', on: 'POST'})
      expect(await callDeploy(client)).toEqual({text: 'deployed api', progress: [1, 2, 3, 4]})
      expect(mcp.executions).toEqual({deploy: 1})
      expect(elicited).toEqual(['Deploy api?'])
      expect(proxy.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toHaveLength(1)
    })

    it('every connection dropped while the client answers the elicitation: both streams resumed, nothing twice', async () => {
      const {proxy, mcp, client, elicited, onElicit} = await start(makeServer, backend)
      onElicit.run = () => {
        onElicit.run = () => {}
        proxy.faults.disconnect()
      }
      expect(await callDeploy(client)).toEqual({text: 'deployed api', progress: [1, 2, 3, 4]})
      expect(mcp.executions).toEqual({deploy: 1})
      expect(elicited).toEqual(['Deploy api?'])
      expect([...proxy.answers.values()].map((answers) => answers.length)).toEqual([1])
      expect(proxy.requests('GET').filter((entry) => entry.lastEventId !== undefined).length).toBeGreaterThan(0)
    })
  })

  it('a 404 injected on the tools/call POST: the call fails with session-expired and never reaches the server', async () => {
    const {proxy, mcp, client} = await start(makeServer, 'msw')
    proxy.faults.failNext({method: 'POST', status: 404, rpcMethod: 'tools/call'})
    expect(codeOf(await callDeploy(client).catch((error: unknown) => error))).toBe('session-expired')
    expect(mcp.executions).toEqual({})
    expect(proxy.requests('POST', 'tools/call')).toEqual([expect.objectContaining({status: 404})])
  })

  it('an error page where SSE was announced: outcome-unknown, the tool never ran; a delayed call is served late', async () => {
    const {proxy, mcp, client} = await start(makeServer, 'msw')
    proxy.faults.corruptNext({kind: 'sse'})
    expect(codeOf(await callDeploy(client).catch((error: unknown) => error))).toBe('outcome-unknown')
    expect(mcp.executions).toEqual({})
    proxy.faults.delayNext({ms: 150, rpcMethod: 'tools/call'})
    const started = Date.now()
    expect((await callDeploy(client)).text).toBe('deployed api')
    expect(Date.now() - started).toBeGreaterThanOrEqual(149)
    expect(proxy.faults.armed).toEqual({cuts: [], failures: [], delays: [], corruptions: []})
  })
})

describe('the fault proxy', () => {
  it('refuses a handler that is not a function, and a cut of less than one event or byte, with a TypeError', () => {
    expect(() => createFaultProxy(undefined as never)).toThrow(TypeError)
    const proxy = createFaultProxy(() => new Response(null, {status: 405}))
    expect(() => proxy.faults.cutNext({after: 0, how: 'error'})).toThrow(new TypeError('cut.after must be 1 or more'))
    expect(() => proxy.faults.cutNext({afterBytes: -1, how: 'error'})).toThrow(
      new TypeError('cut.afterBytes must be 1 or more'),
    )
  })

  describe.each(['msw', 'node'] as const)('served by %s', (backend) => {
    const frames = 'id: a\ndata: one\n\nid: b\ndata: two\n\n'
    const sse = (body: BodyInit, headers: Record<string, string> = {}): Response =>
      new Response(body, {headers: {'content-type': 'text/event-stream', ...headers}})

    /** Serves `proxy` by this backend; resolves with its URL. */
    async function urlOf(proxy: FaultProxy): Promise<string> {
      if (backend === 'msw') {
        network.use(...handlersFor(proxy, {url: mswUrl}))
        return mswUrl
      }
      const listening = await listen(proxy)
      closers.push(() => listening.close())
      return listening.url
    }

    /** The body the client reads from `url`, or 'broken'. */
    const textOf = async (url: string, init?: RequestInit): Promise<string> =>
      (await fetch(url, init)).text().catch(() => 'broken')

    it('a stream the server keeps silent has its headers at once', async () => {
      const response = await fetch(await urlOf(createFaultProxy(() => sse(new ReadableStream()))))
      expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream'])
      await response.body!.cancel()
    })

    it('a cut as a drop reaches the client as a broken connection, on a body framed by nothing but its end', async () => {
      const proxy = createFaultProxy(() => sse(frames))
      proxy.faults.cutNext({after: 1, how: 'error'})
      expect(await textOf(await urlOf(proxy))).toBe('broken')
    })

    it("a body the proxy shortens or lengthens loses the server's Content-Length: the client reads what was sent", async () => {
      const proxy = createFaultProxy(() => sse(frames, {'content-length': String(frames.length)}))
      const url = await urlOf(proxy)
      proxy.faults.cutNext({after: 1, how: 'close'})
      expect(await textOf(url)).toBe('id: a\ndata: one\n\n')
      proxy.faults.corruptNext({kind: 'json'})
      const call = {jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'deploy'}}
      expect(await textOf(url, {method: 'POST', body: JSON.stringify(call)})).toBe(`data: {not json\n\n${frames}`)
    })
  })

  it('passes a body through byte for byte, cuts it exactly where told, and corrupts the next tools/call', async () => {
    const frames = 'id: a\ndata: one\n\nid: b\ndata: two\n\nid: c\ndata: three\n\n'
    const proxy = createFaultProxy(() => new Response(frames, {headers: {'content-type': 'text/event-stream'}}))
    const read = async (): Promise<string> => {
      const response = await proxy.handle(new Request(mswUrl, {method: 'GET'}))
      return new Response(response.body).text().catch(() => 'broken')
    }
    expect(await read()).toBe(frames)
    proxy.faults.cutNext({after: 2, how: 'close', retryMs: 70})
    expect(await read()).toBe('id: a\ndata: one\n\nid: b\ndata: two\n\nretry: 70\n\n')
    proxy.faults.cutNext({afterBytes: 22, how: 'close'})
    expect(await read()).toBe('id: a\ndata: one\n\nid: b')
    proxy.faults.cutNext({after: 1, how: 'error'})
    expect(await read()).toBe('broken')
    // An event that is no JSON, before the server's own, on the next tools/call only.
    proxy.faults.corruptNext({kind: 'json'})
    const call = {jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'deploy'}}
    const corrupted = await proxy.handle(new Request(mswUrl, {method: 'POST', body: JSON.stringify(call)}))
    expect(await corrupted.text()).toBe(`data: {not json\n\n${frames}`)
    expect(proxy.log.map(({method, rpcMethod, status}) => [method, rpcMethod, status]).at(-1)).toEqual([
      'POST',
      'tools/call',
      200,
    ])
  })
})
