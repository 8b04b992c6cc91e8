/**
 * The two servers a schedule runs against, in this process: the testing kit's reference server, and an SDK v1
 * server (`WebStandardStreamableHTTPServerTransport`, one per session) with this package's `ResumableEventStore`
 * and `reemitPendingRequests`. Both offer the same three tools, each call named by its `call` argument so that
 * the ledger counts executions call by call: `increment` (a side effect), `ask` (`count` sampling requests at
 * once) and `slow` (`steps` progress notifications, `stepMs` apart).
 */
import {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import {WebStandardStreamableHTTPServerTransport} from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {CreateMessageResultSchema, type CallToolResult} from '@modelcontextprotocol/sdk/types.js'
import type {JsonSchemaValidatorResult, jsonSchemaValidator} from '@modelcontextprotocol/sdk/validation'
import {z} from 'zod'
import {MemoryEventLog, reemitPendingRequests, ResumableEventStore} from '../src/server.ts'
import {createReferenceServer, type ServerMode, type ToolDefinition} from '../src/testing/index.ts'
import type {Handle} from './network.ts'

/** A server request a tool made, as the server saw it end. */
export interface Asked {
  call: string
  sessionId: string | undefined
  /** How it ended: `answer`, `error` (a JSON-RPC error answer, a cancellation, a timeout), or still pending. */
  ended: 'answer' | 'error' | undefined
}

/** The server faults a schedule draws; `restart-kept` keeps the event store and the sessions' `initialize`. */
export type ServerFault =
  'expire-session' | 'expire-streams' | 'disconnect' | 'disconnect-close' | 'restart' | 'restart-kept'

export interface SimServer {
  readonly kind: 'reference' | 'sdk'
  handle: Handle
  /** Tool executions by call. */
  readonly executions: Map<string, number>
  readonly asked: Asked[]
  /** Whether session `id` is live on the server. */
  live(id: string): boolean
  /** Hits the server with `fault` (`restart-kept` is a plain restart on the reference server, which has no store). */
  fault(fault: ServerFault): void
  close(): Promise<void>
}

/**
 * The JSON Schema validator of the SDK Clients and server: the sim's tools and requests carry no schema to check, so
 * none is ever compiled; the SDKs' default builds an Ajv for each Client and server, a third of a schedule's set-up.
 */
export const noSchemas: jsonSchemaValidator = {
  getValidator:
    <T>() =>
    (input: unknown): JsonSchemaValidatorResult<T> => ({valid: true, data: input as T, errorMessage: undefined}),
}

/** A tool's result of one text. */
export const text = (value: string): CallToolResult => ({content: [{type: 'text', text: value}]})
const question = (n: number) => ({
  messages: [{role: 'user' as const, content: {type: 'text' as const, text: `question ${n}`}}],
  maxTokens: 10,
})

/** What a tool needs of its server: ask, report progress, wait. */
interface ToolHost {
  sessionId: string | undefined
  sample(n: number): Promise<'answer' | 'error'>
  progress(step: number, total: number): Promise<void>
}

/** The three tools, the same on both servers. */
async function runTool(
  name: string,
  args: Record<string, unknown>,
  host: ToolHost,
  server: {executions: Map<string, number>; asked: Asked[]},
): Promise<string> {
  const call = typeof args['call'] === 'string' ? args['call'] : '?'
  server.executions.set(call, (server.executions.get(call) ?? 0) + 1)
  const number = (key: string): number => (typeof args[key] === 'number' ? args[key] : 1)
  if (name === 'ask') {
    const answers = await Promise.all(
      Array.from({length: number('count')}, (_, index) => {
        const asked: Asked = {call, sessionId: host.sessionId, ended: undefined}
        server.asked.push(asked)
        return host.sample(index + 1).then((ended) => (asked.ended = ended))
      }),
    )
    return `${call}: ${answers.join(', ')}`
  }
  if (name === 'slow') {
    const steps = number('steps')
    for (let step = 1; step <= steps; step++) {
      await new Promise((resolve) => setTimeout(resolve, number('stepMs')))
      await host.progress(step, steps)
    }
    return `${call}: ${steps} steps`
  }
  return `${call}: done`
}

export const toolNames = ['increment', 'ask', 'slow'] as const

export interface ReferenceOptions {
  mode: ServerMode
  pendingOnAttach: 're-emit' | 'cancel'
  retryMs: number | undefined
}

/** The testing kit's reference server. */
export function referenceServer(options: ReferenceOptions): SimServer {
  const executions = new Map<string, number>()
  const asked: Asked[] = []
  const record = {executions, asked}
  const tools: ToolDefinition[] = toolNames.map((name) => ({
    name,
    handler: async (args, context) =>
      text(
        await runTool(
          name,
          args,
          {
            sessionId: context.sessionId,
            sample: async (n) =>
              'error' in (await context.request('sampling/createMessage', question(n))) ? 'error' : 'answer',
            progress: (step, total) => {
              context.progress(step, total)
              return Promise.resolve()
            },
          },
          record,
        ),
      ),
  }))
  let sessionCount = 0
  const server = createReferenceServer({
    tools,
    mode: options.mode,
    pendingOnAttach: options.pendingOnAttach,
    retryMs: options.retryMs,
    // Names that outlive a restart, as the server's own do.
    sessionIds: Array.from({length: 64}, () => `ref-${++sessionCount}`),
  })
  return {
    kind: 'reference',
    handle: (request) => server.handle(request),
    executions,
    asked,
    live: (id) => server.sessions().some((session) => session.id === id),
    fault: (fault) => {
      const sessions = server.sessions()
      const session = sessions[sessions.length - 1]?.id
      if (fault === 'restart' || fault === 'restart-kept') server.faults.restart()
      else if (fault === 'disconnect') server.faults.disconnect({how: 'error'})
      else if (fault === 'disconnect-close') server.faults.disconnect({how: 'close'})
      else if (session !== undefined && fault === 'expire-session') server.faults.expireSession(session)
      else if (session !== undefined) server.faults.expireStreams(session)
    },
    close: () => {
      server.faults.restart()
      return Promise.resolve()
    },
  }
}

/** The arguments of every tool, built once: zod shapes cost more to build than to use. */
const inputSchema = {
  call: z.string(),
  count: z.number().optional(),
  steps: z.number().optional(),
  stepMs: z.number().optional(),
}

const notFound = (): Response =>
  Response.json({jsonrpc: '2.0', id: null, error: {code: -32001, message: 'Session not found'}}, {status: 404})

interface SdkSession {
  transport: WebStandardStreamableHTTPServerTransport
  server: McpServer
}

/**
 * The SDK v1 server. What survives `restart-kept` is what a deployment keeps outside the process: each session's
 * event log and its `initialize` request, from which a session met again is rebuilt (as test/fixtures'
 * restartable server does over Redis).
 */
export function sdkServer(options: {retryInterval: number; dropConnections: () => void}): SimServer {
  const executions = new Map<string, number>()
  const asked: Asked[] = []
  const logs = new Map<string, MemoryEventLog>()
  const initializes = new Map<string, string>()
  /** How often each session was rebuilt. */
  const rebuilds = new Map<string, number>()
  let sessions = new Map<string, Promise<SdkSession>>()
  let count = 0

  const open = async (sessionId: string, rebuilt = 0): Promise<SdkSession> => {
    const log = logs.get(sessionId) ?? new MemoryEventLog()
    logs.set(sessionId, log)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      eventStore: new ResumableEventStore({log}),
      retryInterval: options.retryInterval,
    })
    reemitPendingRequests(transport)
    const server = new McpServer({name: 'sim-sdk', version: '1.0.0'}, {jsonSchemaValidator: noSchemas})
    for (const name of toolNames) {
      server.registerTool(name, {inputSchema}, async (args, extra) =>
        text(
          await runTool(
            name,
            args,
            {
              sessionId,
              sample: (n) =>
                extra
                  .sendRequest({method: 'sampling/createMessage', params: question(n)}, CreateMessageResultSchema)
                  .then(
                    () => 'answer' as const,
                    () => 'error' as const,
                  ),
              // The SDK Client sends a token only with an onprogress handler, which every sim call has.
              progress: (progress, total) =>
                extra.sendNotification({
                  method: 'notifications/progress',
                  params: {progressToken: extra._meta?.progressToken ?? '', progress, total},
                }),
            },
            {executions, asked},
          ),
        ),
      )
    }
    // [spec basic, requests] an ID is never reused in a session: the SDK counts from 0 in each process, so a
    // rebuilt session starts past the IDs of its earlier lives (a deployment would keep the counter with the log).
    if (rebuilt > 0) (server.server as unknown as {_requestMessageId: number})._requestMessageId = rebuilt * 100_000
    await server.connect(transport)
    return {transport, server}
  }

  const rebuild = async (sessionId: string, url: string): Promise<SdkSession | undefined> => {
    const initialize = initializes.get(sessionId)
    if (initialize === undefined) return undefined
    const lives = (rebuilds.get(sessionId) ?? 0) + 1
    rebuilds.set(sessionId, lives)
    const session = await open(sessionId, lives)
    const headers = {accept: 'application/json, text/event-stream', 'content-type': 'application/json'}
    await (await session.transport.handleRequest(new Request(url, {method: 'POST', headers, body: initialize}))).text()
    return session
  }

  const handle = async (request: Request): Promise<Response> => {
    const sessionId = request.headers.get('mcp-session-id')
    if (sessionId === null) {
      const body = await request.text()
      const id = `sdk-${++count}`
      initializes.set(id, body)
      const session = open(id)
      sessions.set(id, session)
      return (await session).transport.handleRequest(
        new Request(request.url, {method: request.method, headers: request.headers, body}),
      )
    }
    let session = sessions.get(sessionId)
    if (session === undefined && initializes.has(sessionId)) {
      const rebuilt = rebuild(sessionId, request.url)
      session = rebuilt.then((found) => found!)
      sessions.set(sessionId, session)
    }
    if (session === undefined) return notFound()
    return (await session).transport.handleRequest(request)
  }

  const closeAll = async (): Promise<void> => {
    const all = [...sessions.values()]
    sessions = new Map()
    for (const session of all) await (await session).server.close()
  }

  return {
    kind: 'sdk',
    handle,
    executions,
    asked,
    live: (id) => sessions.has(id) || initializes.has(id),
    fault: (fault) => {
      const ids = [...sessions.keys()]
      const last = ids[ids.length - 1]
      if (fault === 'restart' || fault === 'restart-kept') {
        // A process that dies takes its connections with it.
        options.dropConnections()
        if (fault === 'restart') {
          logs.clear()
          initializes.clear()
        }
        void closeAll()
      } else if (fault === 'disconnect') {
        options.dropConnections()
      } else if (last !== undefined && fault === 'expire-session') {
        const session = sessions.get(last)!
        sessions.delete(last)
        initializes.delete(last)
        logs.delete(last)
        void session.then(({server}) => server.close())
      } else if (last !== undefined) {
        // The session lives on; its streams' events are gone, so a Last-Event-ID of them is refused.
        void logs.get(last)?.clear()
      }
    },
    close: closeAll,
  }
}
