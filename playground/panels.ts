/** The panels redrawn from state: calls, counters (client and server), and the server's sessions and log. */
import type {TransportMetrics} from '../src/index.ts'
import {byId, fill, h} from './dom.ts'
import {laneOf} from './log.ts'
import type {PlaygroundState} from './state.ts'

export interface Call {
  key: number
  /** The page load that made the call. */
  load: number
  label: string
  progress: number
  total: number | undefined
  /**
   * `earlier`: a call of an earlier page load, as the transport's call journal (in IndexedDB) tells this load: its
   * name and progress, then its result, replayed on the stream this load resumed.
   */
  status: 'running' | 'done' | 'failed' | 'earlier'
  text: string
  /** The journal's call ID of an earlier page's call. */
  callId?: string
}

const statusText: Record<Call['status'], string> = {
  running: 'running',
  done: 'done',
  failed: 'failed',
  earlier: "an earlier page's call",
}

export function renderCalls(calls: readonly Call[]): void {
  const items = calls
    .slice(-6)
    .reverse()
    .map((call) => {
      const percent =
        call.total === undefined || call.total === 0
          ? call.text === ''
            ? 0
            : 100
          : Math.round((100 * call.progress) / call.total)
      const progress = call.total === undefined ? '' : `${call.progress}/${call.total}`
      return h(
        'li',
        {class: `call ${call.status}`, 'data-status': call.status},
        h(
          'div',
          {class: 'call-head'},
          h('strong', {}, call.label),
          h('span', {class: 'status'}, statusText[call.status]),
          h('span', {class: 'numbers'}, progress),
        ),
        h('div', {class: 'bar'}, h('div', {style: `width: ${percent}%`})),
        call.text !== '' && h('div', {class: 'call-text', 'data-result': call.text}, call.text),
      )
    })
  fill(byId('calls'), ...items)
  if (items.length === 0)
    fill(byId('calls'), h('li', {class: 'empty'}, 'No call yet: start a slow tool, or make the server ask.'))
}

const clientCounters: [keyof TransportMetrics, string][] = [
  ['replayedEvents', 'replayed events'],
  ['reemittedRequests', 're-emitted requests'],
  ['duplicatesDropped', 'duplicates dropped'],
  ['streamResumptions', 'stream resumptions'],
  ['sessionResumptions', 'session resumptions'],
  ['newSessions', 'new sessions'],
  ['unmatchedResponses', "earlier calls' answers"],
]

function row(key: string, label: string, value: number | string, title: string): HTMLTableRowElement {
  return h('tr', {title}, h('th', {}, label), h('td', {'data-counter': key}, value))
}

const clientTitles: Record<keyof TransportMetrics, string> = {
  replayedEvents: 'events received on streams reopened with Last-Event-ID (stream resumption)',
  reemittedRequests: 'server requests received on streams attached without Last-Event-ID (session resumption)',
  duplicatesDropped: 'events, responses, progress and server requests dropped because they were delivered already',
  streamResumptions: 'reconnects that sent Last-Event-ID',
  sessionResumptions: 'reconnects that attached a fresh stream to the held session',
  newSessions: 'sessions established by initialize',
  unmatchedResponses: 'answers to requests of an earlier page load, replayed on the streams it left',
}

export function renderCounters(metrics: TransportMetrics, server: PlaygroundState | undefined): void {
  const client = h(
    'table',
    {class: 'counters'},
    h('caption', {}, 'client (this page load)'),
    ...clientCounters.map(([key, label]) => row(`client.${key}`, label, metrics[key], clientTitles[key])),
  )
  const rows: HTMLTableRowElement[] = []
  if (server !== undefined) {
    const tools = Object.entries(server.executions)
    if (tools.length === 0) rows.push(row('server.executions', 'tool runs', 'none', 'tool executions on the server'))
    for (const [tool, count] of tools)
      rows.push(row(`server.executions.${tool}`, `${tool} runs`, count, `executions of the ${tool} tool on the server`))
    rows.push(
      row(
        'server.posts.tools/call',
        'tools/call POSTs',
        server.posts['tools/call'] ?? 0,
        'tools/call requests the server received',
      ),
    )
    rows.push(
      row(
        'server.posts.initialize',
        'initialize POSTs',
        server.posts['initialize'] ?? 0,
        'initialize requests the server received',
      ),
    )
    rows.push(
      row(
        'server.replayedEvents',
        'events replayed',
        server.counters.replayedEvents,
        'buffered events written again after a Last-Event-ID (live sessions)',
      ),
    )
    rows.push(
      row(
        'server.reemittedRequests',
        'requests re-emitted',
        server.counters.reemittedRequests,
        'pending server requests written again on a stream attached without Last-Event-ID',
      ),
    )
    rows.push(
      row(
        'server.refusedResumptions',
        'cursors refused',
        server.counters.refusedResumptions,
        'Last-Event-IDs refused with 422',
      ),
    )
    rows.push(
      row(
        'server.unmatchedAnswers',
        'unmatched answers',
        server.counters.unmatchedAnswers,
        'answers to server requests it did not hold (already answered, or of another session)',
      ),
    )
  }
  fill(
    byId('counters'),
    client,
    h('table', {class: 'counters'}, h('caption', {}, 'server (since it started)'), ...rows),
  )
}

export function renderServer(state: PlaygroundState | undefined): void {
  if (state === undefined) {
    fill(byId('server'), h('p', {class: 'empty'}, 'waiting for /__playground/state…'))
    return
  }
  const sessions = [...state.sessions]
    .reverse()
    .map((session) =>
      h(
        'div',
        {class: 'session'},
        h(
          'div',
          {class: 'session-head'},
          h('strong', {}, session.id ?? '(no session ID)'),
          ` · ${session.protocolVersion}`,
          session.pending.length > 0 &&
            h('span', {class: 'pending'}, ` · ${session.pending.length} server request(s) pending`),
        ),
        h(
          'table',
          {class: 'streams'},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['stream', 'for', 'events', 'last ID', 'sent', 'replayed', ''].map((title) => h('th', {}, title)),
            ),
          ),
          h(
            'tbody',
            {},
            ...session.streams.map((stream) =>
              h(
                'tr',
                {'data-stream': stream.id},
                h('td', {}, stream.id),
                h('td', {}, laneOf(stream.kind, stream.requestId)),
                h('td', {}, stream.events),
                h('td', {class: 'header'}, stream.lastEventId ?? '—'),
                h('td', {}, stream.sent),
                h('td', {}, stream.replayed),
                h(
                  'td',
                  {class: stream.connected ? 'live' : 'idle'},
                  stream.connected ? '● live' : stream.finished ? '✓ done' : '○',
                ),
              ),
            ),
          ),
        ),
      ),
    )
  fill(
    byId('server'),
    h('div', {class: 'mode'}, 'mode ', h('strong', {'data-mode': state.mode}, state.mode)),
    ...(sessions.length === 0 ? [h('p', {class: 'empty'}, 'no live session')] : sessions),
  )
  const log = state.log
    .slice(-5)
    .map((entry) =>
      h(
        'tr',
        {},
        h('td', {}, entry.method),
        h(
          'td',
          {},
          (entry.rpcMethod ?? (entry.method === 'POST' ? 'response' : '')).replace('notifications/', 'notif/'),
        ),
        h('td', {class: 'header'}, entry.sessionId ?? '—'),
        h('td', {class: 'header'}, entry.lastEventId ?? '—'),
        h('td', {class: entry.status >= 400 ? 'bad' : ''}, entry.status),
      ),
    )
  fill(
    byId('requests'),
    h(
      'table',
      {class: 'log'},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['', 'JSON-RPC', 'Mcp-Session-Id', 'Last-Event-ID', 'status'].map((title) => h('th', {}, title)),
        ),
      ),
      h('tbody', {}, ...log),
    ),
  )
}
