/**
 * The playground page: the SDK Client on ResumableHTTPClientTransport with an IdbStore, against the reference
 * server served on the same origin (`/mcp`). The buttons break things; the panels show what the transport
 * decided and what the server saw.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema, ElicitRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {ResumableHTTPClientTransport, type JournaledCall, type TransportEvent} from '../src/index.ts'
import {codeOf, resultText} from '../demo/wording.ts'
import {IdbStore} from '../src/idb.ts'
import {byId, h} from './dom.ts'
import {clearLogs, decisions, describe, laneOf, timeline, type Tone} from './log.ts'
import {renderCalls, renderCounters, renderServer, type Call} from './panels.ts'
import {control, type PlaygroundState} from './state.ts'

const endpoint = new URL('/mcp', location.href)
/** The keys IdbStore holds for this server (see the transport's `storeKey`). */
const namespace = `mcp-resumable-http:${endpoint.origin}${endpoint.pathname}`
const keys = {session: `${namespace}#session`, streams: `${namespace}#stream:`, calls: `${namespace}#call:`}
const load = Number(sessionStorage.getItem('playground:load') ?? '0') + 1
sessionStorage.setItem('playground:load', String(load))

const store = new IdbStore()
/**
 * Calls of this load and the finished ones of earlier loads (kept in sessionStorage). Those running when the page
 * went away come back from the transport's call journal, by name, with their progress.
 */
const calls: Call[] = (JSON.parse(sessionStorage.getItem('playground:calls') ?? '[]') as Call[]).filter(
  (call) => call.status !== 'running',
)
let serverState: PlaygroundState | undefined
/** Set when the page is about to reload: the calls it closes go on in the next load, not failed. */
let leaving = false
let callKeys = Math.max(0, ...calls.map((call) => call.key))

function note(lane: string, tone: Tone, text: string): void {
  timeline.add({time: Date.now(), load, lane, tone, text})
}

function onEvent(event: TransportEvent): void {
  const entry = describe(event)
  if (entry !== undefined) timeline.add({time: Date.now(), load, ...entry})
  if (event.type === 'reconnect') {
    decisions.add({
      time: Date.now(),
      load,
      stream: laneOf(event.stream, event.requestId),
      branch: event.branch,
      attempt: event.attempt,
      sessionId: event.headers['mcp-session-id'],
      lastEventId: event.headers['last-event-id'],
    })
  }
  if (event.type === 'call-changed' && event.call.inherited) showEarlier(event.call)
  // [docs/errors.md] a session that expired is re-initialized by connecting the Client again.
  if (event.type === 'session-expired') setTimeout(() => void reinitialize(), 0)
  schedule()
}

/** An earlier page's call, from the journal: its name and progress, then how it ended (the page then forgets it). */
function showEarlier(call: JournaledCall): void {
  let entry = calls.find((candidate) => candidate.callId === call.callId)
  if (entry === undefined) {
    entry = {
      key: ++callKeys,
      load,
      label: call.name,
      progress: 0,
      total: undefined,
      status: 'earlier',
      text: '',
      callId: call.callId,
    }
    calls.push(entry)
  }
  entry.progress = call.progress?.progress ?? entry.progress
  entry.total = call.progress?.total ?? entry.total
  if (call.state === 'completed' || call.state === 'failed')
    entry.text = resultText(call.state === 'completed' ? {result: call.result} : {error: call.error})
  else if (call.state === 'outcome-unknown') entry.text = `outcome unknown: ${call.reason ?? ''}`
  if (entry.text !== '') setTimeout(() => void transport.calls.forget(call.callId), 0)
}

const transport = new ResumableHTTPClientTransport(endpoint, {
  store,
  onEvent,
  callJournal: true,
  reconnect: {minDelayMs: 100, maxDelayMs: 2000},
})
const client = new Client(
  {name: 'mcp-resumable-http-playground', version: '1.0.0'},
  {capabilities: {sampling: {}, elicitation: {}}},
)
client.onerror = (error) => note('page', 'bad', `client.onerror: ${error.message}`)

// The server asks mid-call: the question waits in the page until it is answered there.
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  const content = request.params.messages[0]?.content
  const answer = await ask('sampling', content !== undefined && 'text' in content ? content.text : '?')
  return {model: 'you', role: 'assistant', content: {type: 'text', text: answer ?? '(declined)'}}
})
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const answer = await ask('elicitation', request.params.message)
  return answer === undefined ? {action: 'decline'} : {action: 'accept', content: {answer}}
})

let questions = 0
/** Shows a question card; resolves with the answer typed (undefined: declined). */
function ask(kind: 'sampling' | 'elicitation', question: string): Promise<string | undefined> {
  const number = ++questions
  note('page', 'info', `? ${kind} request: "${question}"`)
  return new Promise((resolve) => {
    const input = h('input', {type: 'text', value: `answer ${number}`, 'aria-label': 'answer'})
    const finish = (answer: string | undefined): void => {
      card.remove()
      note('page', 'good', answer === undefined ? `${kind} request declined` : `${kind} request answered: "${answer}"`)
      resolve(answer)
    }
    const answerButton = h('button', {'data-action': 'answer'}, 'Answer')
    const declineButton = h('button', {'data-action': 'decline'}, 'Decline')
    answerButton.addEventListener('click', () => finish(input.value))
    declineButton.addEventListener('click', () => finish(undefined))
    const card = h(
      'div',
      {class: 'question', 'data-kind': kind},
      h('div', {}, h('strong', {}, `The server asks (${kind}): `), question),
      input,
      answerButton,
      declineButton,
    )
    byId('questions').append(card)
  })
}

async function call(label: string, name: string, args: Record<string, unknown>): Promise<void> {
  const entry: Call = {key: ++callKeys, load, label, progress: 0, total: undefined, status: 'running', text: ''}
  calls.push(entry)
  note('page', 'info', `→ tools/call ${name} ${JSON.stringify(args)}`)
  schedule()
  try {
    const result = await client.callTool({name, arguments: args}, undefined, {
      timeout: 600_000,
      onprogress: ({progress, total}) => {
        entry.progress = progress
        entry.total = total
        note('page', 'muted', `${name}: progress ${progress}/${String(total)}`)
        schedule()
      },
    })
    entry.status = 'done'
    entry.text = resultText(result)
    note('page', 'good', `${name} → "${entry.text}"`)
  } catch (error) {
    if (leaving) return
    const code = codeOf(error)
    entry.status = 'failed'
    entry.text = code === undefined ? String(error) : `${code}: not sent again`
    note('page', 'bad', `${name} failed: ${entry.text}`)
  }
  schedule()
}

async function post(path: string, body: object = {}): Promise<Record<string, unknown>> {
  const response = await fetch(path, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  return (await response.json()) as Record<string, unknown>
}

async function reinitialize(): Promise<void> {
  note('page', 'info', 'the app re-initializes: client.close(), then client.connect(transport)')
  await client.close()
  await client.connect(transport)
  showSession()
}

const actions: Record<string, () => Promise<void>> = {
  slow: () => call('slow tool', 'slow', {steps: 10, delayMs: 400}),
  'ask-sampling': () => call('ask (sampling)', 'ask', {count: 1}),
  'ask-elicitation': () => call('ask (elicitation)', 'ask', {count: 1, kind: 'elicitation'}),
  cut: async () => {
    const {cut} = await post(control.cut)
    note('server', 'fault', `✂ the server broke ${String(cut)} live connection(s), as a network drop`)
  },
  reload: () => {
    note('page', 'fault', '⟳ the page reloads: every connection dropped, the page starts from IndexedDB')
    location.reload()
    return Promise.resolve()
  },
  'clear-cursor': async () => {
    note('page', 'fault', '⌫ the stored cursors are deleted, then the page reloads: it keeps the session ID alone')
    leaving = true
    await client.close()
    for (const key of await store.list(keys.streams)) await store.delete(key)
    location.reload()
  },
  expire: async () => {
    const answer = (await post(control.expire, {sessionId: transport.sessionId})) as {expired?: string; error?: string}
    note('server', 'fault', answer.error ?? `✂ the server forgot ${answer.expired ?? '?'}`)
  },
}

function bindControls(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('#toolbar button[data-action]')) {
    const action = actions[button.dataset['action'] ?? '']
    if (action === undefined) continue
    button.addEventListener('click', () => {
      action().catch((error: unknown) => note('page', 'bad', String(error)))
    })
  }
  byId('clear-timeline').addEventListener('click', () => {
    clearLogs()
    calls.length = 0
    timeline.show()
    decisions.show()
    schedule()
  })
  const mode = byId('mode') as HTMLSelectElement
  mode.addEventListener('change', () => {
    void post(control.mode, {mode: mode.value}).then(() => note('server', 'fault', `server mode → ${mode.value}`))
  })
}

let scheduled = false
/** Redraws the panels drawn from state, once per frame at most. */
function schedule(): void {
  if (scheduled) return
  scheduled = true
  requestAnimationFrame(() => {
    scheduled = false
    sessionStorage.setItem('playground:calls', JSON.stringify(calls.slice(-20)))
    renderCalls(calls)
    renderCounters(transport.metrics, serverState)
    renderServer(serverState)
    if (serverState !== undefined && document.activeElement !== byId('mode'))
      (byId('mode') as HTMLSelectElement).value = serverState.mode
  })
}

async function poll(): Promise<void> {
  for (;;) {
    try {
      const response = await fetch(control.state, {cache: 'no-store'})
      serverState = (await response.json()) as PlaygroundState
    } catch {
      // The playground server stopped: keep trying.
    }
    // Also redraws the client's counters, whether the server answered or not.
    schedule()
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

function showSession(): void {
  byId('session').textContent = transport.sessionId ?? '–'
}

/** What IndexedDB holds for this server before the transport reads it. */
async function describeStore(): Promise<string> {
  const session = (await store.get(keys.session)) as {sessionId?: string} | undefined
  if (session?.sessionId === undefined) return 'nothing: a new session'
  const list: string[] = []
  for (const key of await store.list(keys.streams)) {
    const cursor = (await store.get(key)) as {lastEventId?: string} | undefined
    list.push(`${key.slice(keys.streams.length).replace('request:', 'req ')} → ${cursor?.lastEventId ?? '?'}`)
  }
  const journaled: string[] = []
  for (const key of await store.list(keys.calls)) {
    const call = (await store.get(key)) as JournaledCall | undefined
    if (call !== undefined)
      journaled.push(
        `${call.name} ${call.progress === undefined ? call.state : `${call.progress.progress}/${String(call.progress.total)}`}`,
      )
  }
  return `${session.sessionId}; cursors: ${list.length === 0 ? 'none' : list.join(', ')}; calls: ${journaled.length === 0 ? 'none' : journaled.join(', ')}`
}

async function main(): Promise<void> {
  timeline.show()
  decisions.show()
  bindControls()
  byId('load').textContent = `#${load}`
  const stored = await describeStore()
  byId('stored').textContent = stored
  note('page', 'info', `page load #${load} · IndexedDB holds ${stored}`)
  schedule()
  void poll()
  await client.connect(transport)
  showSession()
  note(
    'page',
    'good',
    transport.metrics.newSessions > 0
      ? `connected: new session ${String(transport.sessionId)}`
      : `connected: session ${String(transport.sessionId)} resumed from IndexedDB, no initialize`,
  )
  document.body.dataset['ready'] = 'true'
}

main().catch((error: unknown) => {
  note('page', 'bad', `the page failed to start: ${String(error)}`)
  document.body.dataset['ready'] = 'failed'
})
