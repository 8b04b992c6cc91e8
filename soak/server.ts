/**
 * The soak's server side, on 127.0.0.1 only: the reference server (its built-in tools, each run counted by the
 * soak's call ID), served over a real socket that can go down and come back on the same port with its state
 * (a restart that keeps the event log), behind the TCP proxy of the tests that cuts connections at byte
 * offsets and can itself go down (an outage: connections refused).
 */
import {
  builtinTools,
  createReferenceServer,
  listen,
  type Listening,
  type ReferenceServer,
  type ToolDefinition,
} from '../src/testing/node.ts'
import {startTcpProxy, type TcpProxy} from '../test/fixtures/tcp-proxy.ts'
import type {Trace} from './trace.ts'

/** `Retry-After` (seconds) on every injected 429 and 5xx. */
export const retryAfterSeconds = 1

export class SoakServer {
  readonly reference: ReferenceServer
  /** Tool runs by the soak's call ID. */
  readonly runs = new Map<string, number>()
  /** The soak's call IDs whose tool returned: the server had an answer for them (in its event log, once sent). */
  readonly answered = new Set<string>()
  /** The soak's call ID of each `tools/call`, by `<session> <JSON-RPC id>`. */
  readonly calls = new Map<string, string>()
  #listening: Listening | undefined
  #proxy: TcpProxy | undefined
  #serverPort = 0
  #proxyPort = 0
  readonly #trace: Trace | undefined

  private constructor(trace: Trace | undefined) {
    this.#trace = trace
    const tools: ToolDefinition[] = builtinTools().map((tool) => ({
      ...tool,
      handler: (args, context) => {
        const callId = String(args['callId'])
        this.runs.set(callId, (this.runs.get(callId) ?? 0) + 1)
        return Promise.resolve(tool.handler(args, context)).then((result) => {
          this.answered.add(callId)
          return result
        })
      },
    }))
    this.reference = createReferenceServer({tools})
  }

  static async start(trace?: Trace): Promise<SoakServer> {
    const server = new SoakServer(trace)
    await server.up()
    await server.proxyUp()
    return server
  }

  /** The endpoint the clients use: the proxy's. */
  get url(): string {
    return `http://127.0.0.1:${this.#proxyPort}/mcp`
  }

  get proxy(): TcpProxy | undefined {
    return this.#proxy
  }

  /** The server process stops: every socket destroyed, connections refused behind the proxy; state kept. */
  async down(): Promise<void> {
    const listening = this.#listening
    this.#listening = undefined
    await listening?.close()
  }

  async up(): Promise<void> {
    if (this.#listening !== undefined) return
    this.#listening = await listen({handle: (request) => this.#handle(request)}, {port: this.#serverPort})
    this.#serverPort = Number(new URL(this.#listening.url).port)
  }

  /** The network in front of the server goes away: clients' connections are refused. */
  async proxyDown(): Promise<void> {
    const proxy = this.#proxy
    this.#proxy = undefined
    await proxy?.close()
  }

  async proxyUp(): Promise<void> {
    if (this.#proxy !== undefined) return
    this.#proxy = await startTcpProxy({port: this.#serverPort}, this.#proxyPort)
    this.#proxyPort = this.#proxy.port
  }

  async close(): Promise<void> {
    await this.proxyDown()
    await this.down()
  }

  /** The soak's call ID of the tool call a pending server request belongs to, if known. */
  callOfStream(sessionId: string | undefined, streamId: string | undefined): string | undefined {
    const requestId = streamId === undefined ? undefined : this.reference.stream(streamId)?.requestId
    return requestId === undefined ? undefined : this.calls.get(`${sessionId} ${String(requestId)}`)
  }

  async #handle(request: Request): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id')
    const what =
      request.method === 'POST'
        ? await this.#note(request.clone(), sessionId)
        : `lei=${request.headers.get('last-event-id') ?? '-'}`
    const response = await this.reference.handle(request)
    this.#trace?.line('server', `${sessionId ?? '-'} ${request.method} ${what} -> ${response.status}`)
    if (response.status !== 429 && response.status < 500) return response
    // [spec: RFC 9110 §10.2.3] a rate limiter or a deploy says when to come back.
    const headers = new Headers(response.headers)
    headers.set('retry-after', String(retryAfterSeconds))
    return new Response(response.body, {status: response.status, headers})
  }

  /** Notes the soak's call ID of a `tools/call`; returns what the POST carries, for the trace. */
  async #note(request: Request, sessionId: string | null): Promise<string> {
    try {
      const message = (await request.json()) as {
        method?: unknown
        id?: unknown
        params?: {arguments?: {callId?: unknown}}
      }
      const callId = message.params?.arguments?.callId
      if (message.method === 'tools/call' && typeof callId === 'string')
        this.calls.set(`${sessionId ?? undefined} ${String(message.id)}`, callId)
      const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : ''
      return `${typeof message.method === 'string' ? message.method : 'answer'} ${id} ${typeof callId === 'string' ? callId : ''}`
    } catch {
      // Not JSON: the server refuses it.
      return 'not JSON'
    }
  }
}
