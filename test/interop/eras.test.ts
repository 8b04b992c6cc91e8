/**
 * Both protocol eras over real sockets (docs/design.md#eras): the v2 SDK server serving 2025-11-25 and 2026-07-28
 * on one endpoint, the v2 `Client` in each negotiation mode on this transport and, in the same test, on the v2
 * SDK's own `StreamableHTTPClientTransport` (the baseline); a tool with a header parameter; a cut mid-call in each
 * era; cancellation by `requestSignal`; and a stored legacy session steering a negotiating Client.
 */
import {Client, SdkHttpError, StreamableHTTPClientTransport, type Transport} from '@modelcontextprotocol/client'
import {afterEach, describe, expect, it} from 'vitest'
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  transportErrorCodeOf,
  type TransportEvent,
} from '../../src/index.ts'
import {startBothErasServer, type BothErasServer} from '../fixtures/both-eras-server.ts'
import {until} from '../fixtures/client.ts'
import {afterEventWith, startTcpProxy, type TcpProxy} from '../fixtures/tcp-proxy.ts'

type Mode = 'legacy' | 'auto' | 'pin'
type Kind = 'ours' | 'sdk'

const modes: Mode[] = ['legacy', 'auto', 'pin']
const negotiated: Record<Mode, string> = {legacy: '2025-11-25', auto: '2026-07-28', pin: '2026-07-28'}

let server: BothErasServer | undefined
let proxy: TcpProxy | undefined
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {})
  await proxy?.close()
  await server?.close()
  proxy = server = undefined
})

interface V2Peer {
  client: Client
  transport: Transport
  /** The transport, when it is this library's. */
  ours: ResumableHTTPClientTransport | undefined
  events: TransportEvent[]
  errors: Error[]
}

function v2Client(mode: Mode): Client {
  const versionNegotiation =
    mode === 'legacy' ? undefined : {mode: mode === 'auto' ? ('auto' as const) : {pin: '2026-07-28'}}
  return new Client({name: 'eras', version: '1.0.0'}, versionNegotiation === undefined ? {} : {versionNegotiation})
}

/** The v2 Client in `mode` on `kind`, not yet connected. */
function v2Peer(kind: Kind, mode: Mode, url: string, store?: MemoryStore): V2Peer {
  const events: TransportEvent[] = []
  const ours =
    kind === 'sdk'
      ? undefined
      : new ResumableHTTPClientTransport(new URL(url), {
          store,
          reconnect: {minDelayMs: 20, maxDelayMs: 100},
          onEvent: (event) => void events.push(event),
        })
  const transport = ours ?? new StreamableHTTPClientTransport(new URL(url))
  const client = v2Client(mode)
  const peer: V2Peer = {client, transport, ours, events, errors: []}
  client.onerror = (error) => void peer.errors.push(error)
  cleanups.push(() => client.close())
  return peer
}

async function connected(kind: Kind, mode: Mode, url: string, store?: MemoryStore): Promise<V2Peer> {
  const peer = v2Peer(kind, mode, url, store)
  await peer.client.connect(peer.transport)
  return peer
}

const textOf = (result: unknown): string | undefined => (result as {content?: {text?: string}[]}).content?.[0]?.text

/** The MCP headers of each request `server` saw from `from` on, the session ID's value left out (it is random). */
function wireHeaders(server: BothErasServer, from: number): string[] {
  return server.seen.slice(from).map(({method, rpcMethod, headers}) => {
    const mcp = Object.entries(headers)
      .filter(([name]) => name.startsWith('mcp-'))
      .map(([name, value]) => (name === 'mcp-session-id' ? name : `${name}: ${value}`))
      .sort()
    return `${method} ${rpcMethod ?? ''} {${mcp.join(', ')}}`
  })
}

describe('the v2 Client in each negotiation mode, on this transport and on the SDK v2 transport, against a server of both eras', () => {
  /** The table, filled in by the tests below: mode → transport → what happened. */
  const table: Record<Mode, Partial<Record<Kind, string>>> = {legacy: {}, auto: {}, pin: {}}

  it.each(modes)(
    '%s mode: connects, lists, calls, and calls a tool with a non-ASCII header parameter, sending the headers the SDK transport sends',
    async (mode) => {
      server = await startBothErasServer()
      const outcomes: Partial<
        Record<Kind, {version: string | undefined; texts: (string | undefined)[]; wire: string[]}>
      > = {}
      for (const kind of ['sdk', 'ours'] as const) {
        const from = server.seen.length
        const peer = v2Peer(kind, mode, server.url)
        try {
          await peer.client.connect(peer.transport)
          const {tools} = await peer.client.listTools()
          expect(tools.map((tool) => tool.name)).toEqual(['echo', 'slow', 'regional'])
          const echo = await peer.client.callTool({name: 'echo', arguments: {text: 'hello'}})
          const regional = await peer.client.callTool({name: 'regional', arguments: {region: 'eu-west Ü', note: 'n'}})
          outcomes[kind] = {
            version: peer.client.getNegotiatedProtocolVersion(),
            texts: [textOf(echo), textOf(regional)],
            wire: wireHeaders(server, from),
          }
          table[mode][kind] = `works (${peer.client.getNegotiatedProtocolVersion()})`
        } catch (error) {
          table[mode][kind] = `fails: ${String(error)}`
          throw error
        } finally {
          await peer.client.close()
        }
      }
      expect(outcomes.ours!.version).toBe(negotiated[mode])
      expect(outcomes.ours!.texts).toEqual(['hello', 'served in eu-west Ü'])
      expect(outcomes.ours).toEqual(outcomes.sdk)
      if (mode !== 'legacy') {
        expect(outcomes.ours!.wire).toEqual([
          'POST server/discover {mcp-method: server/discover, mcp-protocol-version: 2026-07-28}',
          'POST tools/list {mcp-method: tools/list, mcp-protocol-version: 2026-07-28}',
          'POST tools/call {mcp-method: tools/call, mcp-name: echo, mcp-protocol-version: 2026-07-28}',
          // [spec 2026-07-28] a value that is not plain ASCII goes Base64-wrapped: "eu-west Ü" as UTF-8.
          'POST tools/call {mcp-method: tools/call, mcp-name: regional, mcp-param-region: =?base64?ZXUtd2VzdCDDnA==?=, mcp-protocol-version: 2026-07-28}',
        ])
      }
    },
  )

  it('fills the issue\'s table with "works" in every cell, on both transports', () => {
    expect(table).toEqual({
      legacy: {sdk: 'works (2025-11-25)', ours: 'works (2025-11-25)'},
      auto: {sdk: 'works (2026-07-28)', ours: 'works (2026-07-28)'},
      pin: {sdk: 'works (2026-07-28)', ours: 'works (2026-07-28)'},
    })
  })
})

describe('headers of the 2026-07-28 era', () => {
  it('a per-request header that cannot go on the wire fails the call with a protocol TransportError, nothing sent, and the next call works', async () => {
    server = await startBothErasServer()
    const peer = await connected('ours', 'auto', server.url)
    const calls = (): number => server!.seen.filter((request) => request.rpcMethod === 'tools/call').length
    for (const headers of [{'X-Trace': 'a\r\nInjected: yes'}, {'X-Trace': 'é'}, {'Bad Name': 'x'}]) {
      const error = await peer.client.callTool({name: 'echo', arguments: {text: 'x'}}, {headers}).then(
        () => undefined,
        (rejection: unknown) => rejection,
      )
      expect(isTransportError(error, 'protocol')).toBe(true)
    }
    expect(calls()).toBe(0)
    expect(
      textOf(
        await peer.client.callTool(
          {name: 'echo', arguments: {text: 'after'}},
          {headers: {'X-Trace': 'ok', 'Mcp-Method': 'forged'}},
        ),
      ),
    ).toBe('after')
    const sent = server.seen.at(-1)!.headers
    expect([sent['x-trace'], sent['mcp-method']]).toEqual(['ok', 'tools/call'])
  })

  it('a request the server rejects with HTTP 400 and a JSON-RPC error reaches the Client as that error, as on the SDK transport', async () => {
    server = await startBothErasServer()
    for (const kind of ['sdk', 'ours'] as const) {
      const peer = await connected(kind, 'pin', server.url)
      // A stale definition of the tool, without its x-mcp-header: the Client sends no
      // Mcp-Param-Region, the server wants one.
      const toolDefinition = {
        name: 'regional',
        inputSchema: {type: 'object' as const, properties: {region: {type: 'string'}}},
      }
      const error = await peer.client.callTool({name: 'regional', arguments: {region: 'eu'}}, {toolDefinition}).then(
        () => undefined,
        (rejection: unknown) => rejection as {code?: unknown},
      )
      expect(error?.code).toBe(-32020)
      expect(error).not.toBeInstanceOf(SdkHttpError)
      expect(server.executions['regional']).toBeUndefined()
    }
  })
})

describe('a cut mid-call, in each era', () => {
  async function behindProxy(): Promise<{url: string; proxy: TcpProxy; server: BothErasServer}> {
    server = await startBothErasServer({steps: 5, stepMs: 60})
    proxy = await startTcpProxy({port: server.port})
    return {url: proxy.url('/mcp'), proxy, server}
  }
  const cutSlowAfterProgress = (proxy: TcpProxy, step: number): Promise<void> =>
    proxy.cutNext({request: (chunk) => chunk.includes('"slow"'), at: afterEventWith(`"progress":${step}`)})

  it('2025-11-25: the stream is resumed from its cursor and the call completes, run once, with every progress once', async () => {
    const {url, proxy, server} = await behindProxy()
    const peer = await connected('ours', 'legacy', url)
    const progress: number[] = []
    const cut = cutSlowAfterProgress(proxy, 2)
    const result = await peer.client.callTool(
      {name: 'slow', arguments: {}},
      {onprogress: ({progress: step}) => void progress.push(step)},
    )
    await cut
    expect(textOf(result)).toBe('done')
    expect(progress).toEqual([1, 2, 3, 4, 5])
    expect(server.executions['slow']).toBe(1)
    expect(
      server.seen.filter((request) => request.method === 'GET' && request.headers['last-event-id'] !== undefined),
    ).toHaveLength(1)
  })

  it('2026-07-28: the call settles outcome-unknown at once and is never sent again; the next call works', async () => {
    const {url, proxy, server} = await behindProxy()
    const peer = await connected('ours', 'auto', url)
    const progress: number[] = []
    const cut = cutSlowAfterProgress(proxy, 2)
    const started = Date.now()
    const error = await peer.client
      .callTool(
        {name: 'slow', arguments: {}},
        {onprogress: ({progress: step}) => void progress.push(step), timeout: 5000},
      )
      .then(
        () => undefined,
        (rejection: unknown) => rejection,
      )
    await cut
    expect(transportErrorCodeOf(error)).toBe('outcome-unknown')
    expect(Date.now() - started).toBeLessThan(2000)
    expect(progress).toEqual([1, 2])
    expect(server.seen.filter((request) => request.rpcMethod === 'tools/call')).toHaveLength(1)
    // [spec 2026-07-28] no session, no GET stream, nothing to resume.
    expect(server.seen.filter((request) => request.method === 'GET')).toEqual([])
    expect(textOf(await peer.client.callTool({name: 'echo', arguments: {text: 'next'}}))).toBe('next')
    expect(server.executions['slow']).toBe(1)
    expect(peer.ours!.pendingRequests).toBe(0)
  })
})

describe('cancellation in the 2026-07-28 era', () => {
  it('aborting a call closes its request, nothing else is sent, the server sees the cancellation, and the Client hears nothing more of it', async () => {
    server = await startBothErasServer({steps: 20, stepMs: 30})
    const peer = await connected('ours', 'pin', server.url)
    const controller = new AbortController()
    const call = peer.client.callTool(
      {name: 'slow', arguments: {}},
      {signal: controller.signal, onprogress: () => controller.abort('user')},
    )
    await expect(call).rejects.toThrow()
    const seen = server
    await until(() => seen.cancelled.slow === 1)
    expect(server.seen.filter((request) => request.method === 'POST').map((request) => request.rpcMethod)).toEqual([
      'server/discover',
      'tools/call',
    ])
    expect(peer.ours!.pendingRequests).toBe(0)
    expect(textOf(await peer.client.callTool({name: 'echo', arguments: {text: 'next'}}))).toBe('next')
    expect(peer.errors).toEqual([])
    expect(peer.events.filter((event) => event.type === 'request-settled')).toEqual([])
  })
})

describe('a stored 2025-era session and a negotiating Client', () => {
  /** A first process on the legacy era that leaves a call running in the store's session, then goes away. */
  async function leaveACall(url: string, store: MemoryStore): Promise<string> {
    const first = await connected('ours', 'legacy', url, store)
    const progressed = new Promise<void>((resolve) => {
      void first.client.callTool({name: 'slow', arguments: {}}, {onprogress: () => resolve()}).catch(() => {})
    })
    await progressed
    const sessionId = first.transport.sessionId!
    await first.client.close()
    return sessionId
  }

  it("with the transport's prior(), an auto-mode Client resumes the session: no probe, no initialize, the earlier call's answer comes back", async () => {
    server = await startBothErasServer({steps: 6, stepMs: 60})
    const store = new MemoryStore()
    const sessionId = await leaveACall(server.url, store)
    const from = server.seen.length
    const second = v2Peer('ours', 'auto', server.url, store)
    const transport = second.ours!
    const prior = await transport.prior()
    expect(prior).toEqual({kind: 'legacy'})
    await second.client.connect(transport, prior === undefined ? {} : {prior})
    expect(transport.sessionId).toBe(sessionId)
    expect(second.client.getNegotiatedProtocolVersion()).toBe('2025-11-25')
    await until(() => second.events.some((event) => event.type === 'unmatched-response'), 5000)
    expect(textOf(await second.client.callTool({name: 'echo', arguments: {text: 'resumed'}}))).toBe('resumed')
    const methods = server.seen.slice(from).map((request) => request.rpcMethod)
    expect(methods).not.toContain('server/discover')
    expect(methods).not.toContain('initialize')
    expect(server.executions['slow']).toBe(1)
  })

  it('without it, an auto-mode Client probes, goes to 2026-07-28, and the stored session is ended', async () => {
    server = await startBothErasServer()
    const store = new MemoryStore()
    await leaveACall(server.url, store)
    const second = v2Peer('ours', 'auto', server.url, store)
    await second.client.connect(second.transport)
    expect(second.client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    expect(second.transport.sessionId).toBeUndefined()
    expect(await second.ours!.prior()).toBeUndefined()
  })

  it('prior() is undefined for a store without a session', async () => {
    server = await startBothErasServer()
    expect(await new ResumableHTTPClientTransport(new URL(server.url)).prior()).toBeUndefined()
  })
})
