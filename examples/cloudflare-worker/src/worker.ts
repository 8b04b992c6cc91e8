/**
 * A Worker whose Durable Object keeps one MCP client across requests: the SDK Client on
 * `ResumableHTTPClientTransport`, its session, cursors and calls in the object's storage (`DurableObjectStore`).
 * When the object is evicted, restarted or aborted mid-call, its next instance resumes the session without a new
 * initialize, and the call's answer comes to it on the resumed stream: the tool ran once.
 *
 *   POST /call  {"name": "...", "arguments": {...}}   calls the tool, answers its result
 *   GET  /calls     the calls in flight, with their progress, and those an earlier instance left, once settled
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CfWorkerJsonSchemaValidator} from '@modelcontextprotocol/sdk/validation/cfworker-provider.js'
import {ResumableHTTPClientTransport} from 'mcp-resumable-http'
import {DurableObjectStore} from 'mcp-resumable-http/cloudflare'

export interface Env {
  MCP_AGENT: DurableObjectNamespace
  /** The MCP server's endpoint (Streamable HTTP). */
  MCP_SERVER_URL: string
}

interface Connected {
  client: Client
  transport: ResumableHTTPClientTransport
}

/** How long `GET /calls` waits for an earlier instance's call to settle. */
const SETTLE_MS = 30_000

export class McpAgent {
  protected readonly ctx: DurableObjectState
  readonly #env: Env
  /** Made on the first request and kept: I/O belongs to the object, so the client serves every later request. */
  #connected: Promise<Connected> | undefined

  constructor(ctx: DurableObjectState, env: Env) {
    this.ctx = ctx
    this.#env = env
  }

  async fetch(request: Request): Promise<Response> {
    const {client, transport} = await this.#connect()
    const {pathname} = new URL(request.url)
    if (request.method === 'POST' && pathname === '/call') {
      const {name, arguments: args} = await request.json<{name: string; arguments?: Record<string, unknown>}>()
      // Asking for progress (a progress token) costs nothing and saves a lot: each progress event stores the stream's
      // cursor, from which a next instance resumes the call, and the journal keeps it (GET /calls).
      return Response.json(
        await client.callTool({name, arguments: args}, undefined, {onprogress: () => {}, resetTimeoutOnProgress: true}),
      )
    }
    if (request.method === 'GET' && pathname === '/calls') {
      // The calls of an instance that ended mid-call: their streams are resumed from the stored cursors, and their
      // answers come here, not to this instance's Client (which never made them). Reported once, then forgotten.
      const calls = await Promise.all(
        transport.calls.list().map(async (call) => {
          if (!call.inherited) return call
          const settled = await transport.calls.wait(call.callId, AbortSignal.timeout(SETTLE_MS))
          await transport.calls.forget(call.callId)
          return settled
        }),
      )
      return Response.json(
        calls.map(({name, state, inherited, progress, result, reason}) => ({
          name,
          state,
          inherited,
          progress,
          result,
          reason,
        })),
      )
    }
    return new Response('Not found', {status: 404})
  }

  #connect(): Promise<Connected> {
    this.#connected ??= (async () => {
      const transport = new ResumableHTTPClientTransport(new URL(this.#env.MCP_SERVER_URL), {
        store: new DurableObjectStore(this.ctx.storage),
        callJournal: true,
      })
      // Ajv, the SDK's default validator, compiles code at run time, which Workers forbid.
      const client = new Client(
        {name: 'worker-agent', version: '1.0.0'},
        {jsonSchemaValidator: new CfWorkerJsonSchemaValidator()},
      )
      await client.connect(transport)
      return {client, transport}
    })()
    // A connect that failed is tried again by the next request.
    this.#connected.catch(() => (this.#connected = undefined))
    return this.#connected
  }
}

export default {
  fetch(request, env) {
    // One agent here; one per user in an app (idFromName(userId)).
    return env.MCP_AGENT.get(env.MCP_AGENT.idFromName('agent')).fetch(request)
  },
} satisfies ExportedHandler<Env>
