/**
 * Clients we did not write, on top of this transport, against the official SDK server (1.32) over real sockets:
 * the SDK `Client` 1.32 (tools, progress, sampling, elicitation, cancellation), the v2 SDK line's `Client`
 * (`@modelcontextprotocol/client` 2.x) and the Vercel AI SDK's MCP client (`@ai-sdk/mcp`).
 */
import {createMCPClient, type MCPTransport} from '@ai-sdk/mcp'
import {Client as ClientV2} from '@modelcontextprotocol/client'
import {afterEach, describe, expect, it} from 'vitest'
import {MemoryStore, ResumableHTTPClientTransport} from '../../src/index.ts'
import {callTool, connectPeer, until, type Peer} from '../fixtures/interop.ts'
import {startSdkServer, type SdkServer} from '../fixtures/sdk-server.ts'
import {afterEventWith, startTcpProxy, type TcpProxy} from '../fixtures/tcp-proxy.ts'

let server: SdkServer | undefined
let proxy: TcpProxy | undefined
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await proxy?.close()
  await server?.close()
})

async function serve(): Promise<{server: SdkServer; proxy: TcpProxy; url: string}> {
  server = await startSdkServer()
  proxy = await startTcpProxy({port: server.port})
  return {server, proxy, url: proxy.url('/mcp')}
}

const cutCallAfter = (proxy: TcpProxy, needle: string): Promise<void> =>
  proxy.cutNext({request: (chunk) => chunk.includes('"tools/call"'), at: afterEventWith(needle)})

describe('@modelcontextprotocol/sdk 1.32 Client on this transport', () => {
  async function connect(url: string): Promise<Peer> {
    const peer = await connectPeer('ours', url)
    cleanups.push(() => peer.client.close())
    return peer
  }

  it('lists and calls tools, with progress', async () => {
    const {url} = await serve()
    const peer = await connect(url)
    const {tools} = await peer.client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['echo', 'slow', 'sample', 'elicit', 'block']),
    )
    const call = callTool(peer, 'slow')
    await call.settled
    expect(call.text).toBe('done after 6 steps')
    expect(call.progress).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('sampling and elicitation handlers answer the server, once each, also across a cut', async () => {
    const {server, proxy, url} = await serve()
    const peer = await connect(url)
    const sampled = callTool(peer, 'sample')
    await sampled.settled
    expect(sampled.text).toBe('sampled: answer 1')
    const cut = cutCallAfter(proxy, 'elicitation/create')
    const elicited = callTool(peer, 'elicit')
    await cut
    await elicited.settled
    expect(elicited.text).toBe('elicited: accept {"name":"Grace"}')
    expect(peer.handled).toEqual({sampling: 1, elicitation: 1})
    expect(server.requests('POST', 'response')).toHaveLength(2)
  })

  it('cancellation is POSTed as notifications/cancelled, never turned into a GET, also for a resumed request', async () => {
    const {server, proxy, url} = await serve()
    const peer = await connect(url)
    // The request's stream is cut after its priming event and resumed with Last-Event-ID before the cancel.
    const cut = proxy.cutNext({request: (chunk) => chunk.includes('"tools/call"'), at: afterEventWith('data: \n')})
    const controller = new AbortController()
    const call = peer.client
      .callTool({name: 'block'}, undefined, {signal: controller.signal})
      .catch((error: unknown) => error)
    await cut
    await until(() => server.requests('GET').some((entry) => entry.lastEventId !== undefined && entry.status === 200))
    const getsBefore = server.requests('GET').length
    controller.abort('user cancelled')
    await call
    await until(() => server.cancelled['block'] === 1)
    expect(server.requests('POST', 'notifications/cancelled')).toHaveLength(1)
    expect(server.requests('GET')).toHaveLength(getsBefore)
    expect(server.requests('POST', 'tools/call')).toHaveLength(1)
  })
})

describe('@modelcontextprotocol/client 2.x (the v2 SDK line) Client on this transport', () => {
  async function connect(url: string, store?: MemoryStore) {
    const transport = new ResumableHTTPClientTransport(new URL(url), {
      store,
      reconnect: {minDelayMs: 20, maxDelayMs: 100},
    })
    const client = new ClientV2({name: 'v2', version: '1.0.0'}, {capabilities: {sampling: {}, elicitation: {form: {}}}})
    const handled = {sampling: 0, elicitation: 0}
    client.setRequestHandler('sampling/createMessage', () => {
      handled.sampling++
      return {model: 'm', role: 'assistant', content: {type: 'text', text: 'v2 answer'}}
    })
    client.setRequestHandler('elicitation/create', () => {
      handled.elicitation++
      return {action: 'accept', content: {name: 'Lin'}}
    })
    await client.connect(transport)
    cleanups.push(() => client.close())
    return {client, transport, handled}
  }

  const textOf = (result: {content: unknown[]}): unknown => (result.content[0] as {text?: unknown} | undefined)?.text

  it('initializes, lists and calls tools with progress, resumed across a cut, the tool run once', async () => {
    const {server, proxy, url} = await serve()
    const {client, transport} = await connect(url)
    expect(transport.sessionId).toBe(server.sessions()[0])
    const {tools} = await client.listTools()
    expect(tools.map((tool) => tool.name)).toContain('slow')
    const progress: number[] = []
    const cut = cutCallAfter(proxy, '"progress":3')
    const result = await client.callTool({name: 'slow'}, {onprogress: ({progress: step}) => progress.push(step)})
    await cut
    expect(textOf(result)).toBe('done after 6 steps')
    expect(progress).toEqual([1, 2, 3, 4, 5, 6])
    expect(server.executions).toEqual({slow: 1})
    expect(server.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toHaveLength(1)
  })

  it("re-attached from the store, knows the server's capabilities, version and instructions with no initialize sent", async () => {
    const {server, url} = await serve()
    const store = new MemoryStore()
    const before = await connect(url, store)
    const known = [
      before.client.getServerCapabilities(),
      before.client.getServerVersion(),
      before.client.getInstructions(),
    ]
    await before.client.close()
    const after = await connect(url, store)
    expect([
      after.client.getServerCapabilities(),
      after.client.getServerVersion(),
      after.client.getInstructions(),
    ]).toEqual(known)
    expect(known[0]).toBeDefined()
    expect(server.requests('POST', 'initialize')).toHaveLength(1)
    expect((await after.client.listTools()).tools.map((tool) => tool.name)).toContain('slow')
  })

  it('answers sampling and elicitation; cancellation is a POST', async () => {
    const {server, url} = await serve()
    const {client, handled} = await connect(url)
    expect(textOf(await client.callTool({name: 'sample'}))).toBe('sampled: v2 answer')
    expect(textOf(await client.callTool({name: 'elicit'}))).toBe('elicited: accept {"name":"Lin"}')
    expect(handled).toEqual({sampling: 1, elicitation: 1})
    const controller = new AbortController()
    const call = client.callTool({name: 'block'}, {signal: controller.signal}).catch((error: unknown) => error)
    await until(() => server.executions['block'] === 1)
    controller.abort('user cancelled')
    await call
    await until(() => server.cancelled['block'] === 1)
    expect(server.requests('POST', 'notifications/cancelled')).toHaveLength(1)
  })
})

describe('@ai-sdk/mcp createMCPClient on this transport', () => {
  it('lists the tools and calls them through the AI SDK tool set', async () => {
    const {server, proxy, url} = await serve()
    const transport = new ResumableHTTPClientTransport(new URL(url), {reconnect: {minDelayMs: 20, maxDelayMs: 100}})
    // Under exactOptionalPropertyTypes, MCPTransport's `onclose?: () => void` (no `| undefined`) refuses the SDK
    // Transport's `onclose?: (() => void) | undefined`, which this class declares; at run time they are one contract.
    const client = await createMCPClient({transport: transport as MCPTransport})
    cleanups.push(() => client.close())
    const {tools} = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'slow']))
    const set = await client.tools()
    const options = {toolCallId: 'call-1', messages: [], context: {}}
    expect(await set['echo']!.execute({}, options)).toMatchObject({content: [{type: 'text', text: 'echo'}]})
    // A cut mid-call, after the priming event (it negotiated 2025-11-25): the result once, the tool ran once.
    const cut = cutCallAfter(proxy, 'data: \n')
    const slow = set['slow']!.execute({}, {...options, toolCallId: 'call-2'})
    await cut
    expect(await slow).toMatchObject({content: [{type: 'text', text: 'done after 6 steps'}]})
    expect(server.executions).toEqual({echo: 1, slow: 1})
    expect(server.requests('POST', 'tools/call')).toHaveLength(2)
  })
})
