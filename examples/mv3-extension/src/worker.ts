/**
 * The service worker of an MV3 agent extension: an MCP client that loses nothing when Chromium stops it mid-call
 * (README.md of this folder). Chromium stops an extension's worker 30 s after its last extension event (a
 * streaming fetch does not count) and may stop it at any time; every start of this file is a new instance with
 * nothing in memory. The session, the streams' cursors and the server's unanswered requests are in IndexedDB
 * (`IdbStore`); the app's own record of its calls is in `chrome.storage.local` (./app-state.ts).
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {
  CreateMessageRequestSchema,
  type CreateMessageRequest,
  type CreateMessageResult,
} from '@modelcontextprotocol/sdk/types.js'
import {CfWorkerJsonSchemaValidator} from '@modelcontextprotocol/sdk/validation/cfworker'
import {ResumableHTTPClientTransport, type TransportEvent} from 'mcp-resumable-http'
import {IdbStore} from 'mcp-resumable-http/idb'
import {AppStore, readState} from './app-state.ts'
import type {Reply, Request} from './messages.ts'

/** The MCP server, fixed at build time (vite.config.ts). */
declare const MCP_SERVER_URL: string

const keepAliveAlarm = 'mcp-keep-alive'
/** The alarm's changes, one at a time (see {@link syncKeepAlive}). */
let keepAlive = Promise.resolve()
const instance = crypto.randomUUID()
const app = new AppStore(chrome.storage.local)

// Connect at the top level, on every start: a worker woken by an alarm or a message re-attaches the stored session
// (no initialize), resumes the streams of the calls it left and hands the server's unanswered requests to the Client.
const transport = new ResumableHTTPClientTransport(new URL(MCP_SERVER_URL), {store: new IdbStore(), onEvent})
// The SDK validates tool output schemas with Ajv, which compiles with `new Function`: the extension CSP refuses it.
const client = new Client(
  {name: 'mv3-agent', version: '1.0.0'},
  {capabilities: {sampling: {}}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator()},
)
client.setRequestHandler(CreateMessageRequestSchema, sample)
client.onerror = (error) => void app.error(error)
let closed = Promise.resolve()
let ready = connect()

/** Connects the Client; a connect that fails (the server unreachable) closes it, to be made again by {@link connected}. */
function connect(): Promise<void> {
  closed = new Promise((resolve) => (client.onclose = resolve))
  return client.connect(transport).then(syncKeepAlive, async (error: unknown) => {
    await client.close()
    throw error
  })
}

/** Waits for the connect; one that failed is made again, once the Client is closed. */
async function connected(): Promise<void> {
  const attempt = ready
  await attempt.catch(() => {
    if (ready === attempt) ready = closed.then(connect)
    return ready
  })
}

// Listeners are registered synchronously, in the first turn: the event that woke the worker goes only to those.
// Their handlers wait for the connect.
chrome.runtime.onMessage.addListener((request: Request, _sender, reply: (answer: Reply) => void) => {
  handle(request).then(reply, (error: unknown) => reply({error: String(error)}))
  return true // the answer comes asynchronously
})
chrome.alarms.onAlarm.addListener((alarm) => {
  // Waking the worker was the point: the top-level connect resumes what is pending.
  if (alarm.name === keepAliveAlarm) connected().then(syncKeepAlive, (error: unknown) => app.error(error))
})

async function handle(request: Request): Promise<Reply> {
  await connected()
  switch (request.type) {
    case 'call':
      return {id: await startCall(request.tool, request.arguments ?? {})}
    case 'approve':
      await app.update((state) => {
        const approval = state.approvals[request.key]
        if (approval !== undefined) approval.status = 'approved'
      })
      approved.get(request.key)?.()
      return {ok: true}
    case 'tools':
      return {tools: (await client.listTools()).tools.map((tool) => tool.name)}
    case 'status':
      return {instance, sessionId: transport.sessionId, pending: transport.pendingRequests}
  }
}

/** Starts a tool call and answers at once with the app's ID of it; its progress and result go to the app state. */
async function startCall(tool: string, args: Record<string, unknown>): Promise<string> {
  const id = await app.started(tool, instance)
  client
    .callTool({name: tool, arguments: args}, undefined, {
      onprogress: ({progress}) => void app.progressed(id, progress),
      timeout: 600_000,
      resetTimeoutOnProgress: true,
    })
    .then(
      (result) => app.finished(id, outcomeOf(result)),
      (error: unknown) => app.finished(id, {text: String(error), failed: true}),
    )
    .catch((error: unknown) => app.error(error))
  return id
}

// Keep the worker alive while requests are pending: a 30 s periodic alarm is an extension event, which restarts
// the idle timer. Should the worker be stopped all the same (or killed), the next alarm wakes it, and the top-level
// connect resumes. The transport's `pending-changed` event says when to arm and clear it.
function syncKeepAlive(): void {
  keepAlive = keepAlive
    .then(async () => {
      const armed = (await chrome.alarms.get(keepAliveAlarm)) !== undefined
      const pending = transport.pendingRequests > 0
      if (pending && !armed) await chrome.alarms.create(keepAliveAlarm, {periodInMinutes: 0.5})
      if (!pending && armed) await chrome.alarms.clear(keepAliveAlarm)
    })
    .catch((error: unknown) => app.error(error))
}

function onEvent(event: TransportEvent): void {
  switch (event.type) {
    case 'pending-changed':
      syncKeepAlive()
      break
    // What an earlier instance's calls receive after it was stopped: this Client never made those calls.
    case 'orphaned-notification': {
      const params = (event.message as {params?: {progressToken?: string | number; progress?: number}}).params
      if (
        event.method === 'notifications/progress' &&
        params?.progressToken !== undefined &&
        params.progress !== undefined
      ) {
        void app.progressed({call: event.call, token: params.progressToken, instance}, params.progress)
      }
      break
    }
    case 'unmatched-response':
      void app.finished(
        {wireId: event.id},
        'result' in event.message
          ? outcomeOf(event.message.result)
          : {text: JSON.stringify(event.message), failed: true},
      )
      break
    case 'store-error':
      void app.error(event.error)
      break
  }
}

/** Sampling needs the user's approval (a human in the loop); a request an earlier instance left is asked again. */
const approved = new Map<string, () => void>()

async function sample(
  request: CreateMessageRequest,
  extra: {requestId: string | number},
): Promise<CreateMessageResult> {
  const key = String(extra.requestId)
  const content = request.params.messages[0]?.content
  const question = content !== undefined && 'text' in content ? content.text : '(no text)'
  const approval = new Promise<void>((resolve) => approved.set(key, resolve))
  const known = (await readState(chrome.storage.local)).approvals[key]
  if (known?.status === 'approved') approved.get(key)!()
  else await app.approval(key, {question, status: 'waiting'})
  await approval
  approved.delete(key)
  await app.approval(key, {question, status: 'answered'})
  // A real agent asks its model here.
  return {model: 'stand-in', role: 'assistant', content: {type: 'text', text: `answer to ${question}`}}
}

/** A tool result as the app shows it: its text content, and whether it is an error. */
function outcomeOf(result: unknown): {text: string; failed: boolean} {
  const {content, isError} = result as {content?: {type: string; text?: string}[]; isError?: boolean}
  const text = (content ?? []).map((part) => part.text ?? `[${part.type}]`).join('\n')
  return {text, failed: isError === true}
}
