/**
 * The demo's client side: the SDK Client on our transport, a fetch that can cut its own streams (a network
 * drop the demo causes without touching the server), client processes, and waiting.
 */
import {spawn} from 'node:child_process'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {
  ResumableHTTPClientTransport,
  type ResumableHTTPClientTransportOptions,
  type ResumptionStore,
} from '../src/index.ts'
import {FileStore} from '../src/node.ts'
import type {AgentLine} from './agent.ts'
import {dim, say, type Narrator} from './output.ts'
import {instrumented} from './telemetry.ts'

export interface DemoClient {
  transport: ResumableHTTPClientTransport
  client: Client
  /** The questions of the sampling requests the Client's handler answered. */
  answered: string[]
  /** Sampling requests the handler received and left unanswered (`answer: false`). */
  unanswered: string[]
}

export interface ConnectOptions {
  /** Printed before each of this client's lines. */
  label?: string
  sessionId?: string
  store?: ResumptionStore
  /** False: the sampling handler never answers (a user who has not replied yet). */
  answer?: boolean
  fetch?: typeof fetch
}

let makeTransport = (url: URL, options: ResumableHTTPClientTransportOptions): ResumableHTTPClientTransport =>
  new ResumableHTTPClientTransport(url, options)

/** `--otel`: every client from now on is on `mcp-resumable-http/otel`. */
export function instrumentClients(): void {
  makeTransport = instrumented
}

/** The SDK Client, unchanged, on our transport; its events narrated, its counters tracked. */
export async function connect(url: string, narrator: Narrator, options: ConnectOptions = {}): Promise<DemoClient> {
  const {label = '', answer = true} = options
  const transport = makeTransport(new URL(url), {
    sessionId: options.sessionId,
    store: options.store,
    fetch: options.fetch,
    reconnect: {minDelayMs: 50, maxDelayMs: 500},
    onEvent: narrator.listener(label),
  })
  narrator.track(label, () => transport.metrics)
  const client = new Client({name: 'mcp-resumable-http-demo', version: '1.0.0'}, {capabilities: {sampling: {}}})
  const demo: DemoClient = {transport, client, answered: [], unanswered: []}
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    const content = request.params.messages[0]?.content
    const question = content !== undefined && 'text' in content ? content.text : '?'
    const who = label === '' ? '' : `${dim(label)} `
    if (!answer) {
      demo.unanswered.push(question)
      say(`${who}? sampling request received: "${question}" ${dim('(left unanswered)')}`)
      return new Promise<never>(() => {})
    }
    demo.answered.push(question)
    say(`${who}→ sampling request "${question}" answered by the Client's handler`)
    return {model: 'demo', role: 'assistant', content: {type: 'text', text: `answer to ${question}`}}
  })
  await client.connect(transport)
  return demo
}

/**
 * A fetch whose SSE bodies the demo can break, as a network drop would: the server is not told, its stream
 * goes on. Counts the JSON-RPC requests POSTed, by method.
 */
export function cuttableFetch(): {fetch: typeof fetch; cut: () => number; posted: Record<string, number>} {
  const live = new Set<(reason: Error) => void>()
  const posted: Record<string, number> = {}
  const wrapped = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const method = (JSON.parse(init.body) as {method?: unknown}).method
      if (typeof method === 'string') posted[method] = (posted[method] ?? 0) + 1
    }
    const response = await fetch(input, init)
    if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream'))
      return response
    const reader = response.body.getReader()
    let cut: (reason: Error) => void = () => {}
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        cut = (reason) => {
          controller.error(reason)
          void reader.cancel(reason).catch(() => {})
        }
        live.add(cut)
      },
      pull: async (controller) => {
        try {
          const {done, value} = await reader.read()
          if (done) {
            live.delete(cut)
            controller.close()
          } else {
            controller.enqueue(value)
          }
        } catch (error) {
          live.delete(cut)
          controller.error(error)
        }
      },
      cancel: (reason) => {
        live.delete(cut)
        return reader.cancel(reason)
      },
    })
    return new Response(body, {status: response.status, statusText: response.statusText, headers: response.headers})
  }
  return {
    fetch: wrapped,
    posted,
    cut: () => {
      const count = live.size
      for (const cut of live) cut(new TypeError('terminated (the demo cut the connection)'))
      live.clear()
      return count
    },
  }
}

export interface Agent {
  pid: number
  /** Every line the process printed. */
  lines: AgentLine[]
  /** Resolves with the exit code (or signal). */
  exited: Promise<string>
  kill: () => void
}

const agentEntry = fileURLToPath(new URL('./agent.js', import.meta.url))

/**
 * Starts a client process (demo/agent.ts, compiled next to this file): a real second Node process with its
 * own FileStore. Its transport events are narrated under `label`.
 */
export function startAgent(
  label: string,
  args: string[],
  narrator: Narrator,
  onLine: (line: AgentLine) => void = () => {},
): Agent {
  const child = spawn(process.execPath, [agentEntry, ...args], {stdio: ['ignore', 'pipe', 'inherit']})
  const lines: AgentLine[] = []
  createInterface({input: child.stdout}).on('line', (text) => {
    const line = JSON.parse(text) as AgentLine
    lines.push(line)
    if (line.event !== undefined) narrator.event(line.event, label)
    onLine(line)
  })
  const exited = new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve(signal ?? String(code))
    })
  })
  return {pid: child.pid ?? 0, lines, exited, kill: () => child.kill('SIGKILL')}
}

/**
 * Runs `scene` with a store file in a new temporary directory, and the agents it starts: every one of them is
 * killed, and the directory removed, when it ends.
 */
export async function withStoreFile(scene: (file: string, agents: Agent[]) => Promise<void>): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'mcp-resumable-http-demo-'))
  const agents: Agent[] = []
  try {
    await scene(join(directory, 'session.json'), agents)
  } finally {
    for (const agent of agents) agent.kill()
    await rm(directory, {recursive: true, force: true})
  }
}

/** Waits for `agent` to be done or to fail; when done, its final counters join the summary under `label`. */
export async function agentDone(
  agent: Agent,
  label: string,
  narrator: Narrator,
  ms: number,
): Promise<AgentLine['done']> {
  await until(
    () => agent.lines.some((line) => line.done !== undefined || line.error !== undefined),
    ms,
    `process ${label}`,
  )
  const done = agent.lines.find((line) => line.done !== undefined)?.done
  if (done !== undefined) narrator.track(label, () => done.metrics)
  return done
}

/** What a FileStore file (and its journal) holds for the one server in it: the session ID and each stream's cursor. */
export async function readStoreFile(
  file: string,
): Promise<{sessionId: string | undefined; cursors: [string, string][]}> {
  // Read as the next process would, through FileStore: a write may still sit in the file's journal.
  const store = new FileStore(file)
  const keys = await store.list('')
  const stored = await Promise.all(
    keys.map(async (key) => [key, (await store.get(key)) as {sessionId?: string; lastEventId?: string}] as const),
  )
  const session = stored.find(([key]) => key.endsWith('#session'))?.[1]
  const cursors = stored.flatMap(([key, record]): [string, string][] => {
    const stream = /#stream:(.+)$/.exec(key)?.[1]
    return stream === undefined || record.lastEventId === undefined ? [] : [[stream, record.lastEventId]]
  })
  return {sessionId: session?.sessionId, cursors}
}

/** Prints what a FileStore file holds. */
export function sayStored({sessionId, cursors}: {sessionId: string | undefined; cursors: [string, string][]}): void {
  const list = cursors.map(([stream, cursor]) => `${stream} → ${cursor}`).join(', ')
  say(`${dim('the file holds')} session ${sessionId ?? '—'} ${dim('and the cursors')} ${list === '' ? '—' : list}`)
}

/** Resolves once `predicate` holds; rejects after `ms`. */
export async function until(predicate: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
