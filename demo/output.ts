/**
 * What the demo prints: colours (only on a terminal, never with NO_COLOR), one line per thing the transport
 * did, counters, checks, and the summary table.
 */
import type {TransportEvent, TransportMetrics} from '../src/index.ts'
import {zeroMetrics} from '../src/events.ts'
import {builtinTools, type ReferenceServer, type ToolDefinition} from '../src/testing/node.ts'
import {messageOf, resultText} from './wording.ts'

const color = process.stdout.isTTY && process.env['NO_COLOR'] === undefined
type Paint = (text: string) => string
const paint =
  (code: number): Paint =>
  (text) =>
    color ? `\x1b[${code}m${text}\x1b[0m` : text
export const bold = paint(1)
export const dim = paint(2)
export const red = paint(31)
export const green = paint(32)
export const yellow = paint(33)
export const cyan = paint(36)
export const magenta = paint(35)

/** What each mark of a scene's lines means, printed before the first scene. */
export const legend = [
  '→ what the app does       · what the transport did       ✂ a fault: a connection cut, a process killed',
  '↻ a reconnect: the branch taken and both headers sent     ! an outcome the scene expects (a request settled, a session ended)',
  "⊘ a duplicate dropped     ← an earlier process's answer   ? a server request received",
  "⚠ what a faulty server does wrong, shown: not this transport's doing",
  '✓ a check that passed     ✗ a check that failed (the scene then fails)',
  "Σ client: the transport's metrics (replayed = events received after a Last-Event-ID; re-emitted = server requests",
  "  received on a stream attached without one). Σ server: the reference server's instrumentation.",
]

/** Prints a line of a scene, indented under its title. */
export function say(text: string): void {
  console.log(`   ${text}`)
}

/** The two headers exactly as sent; `—` for one not sent. */
function headers(sent: {'mcp-session-id': string | undefined; 'last-event-id': string | undefined}): string {
  return `Mcp-Session-Id: ${sent['mcp-session-id'] ?? '—'}   Last-Event-ID: ${sent['last-event-id'] ?? '—'}`
}

function streamName(stream: 'standalone' | 'request', requestId: unknown): string {
  return stream === 'standalone' ? 'standalone GET stream' : `response stream of request ${String(requestId)}`
}

const duplicateName = {
  event: 'event',
  response: 'the response to request',
  'server-request': 'server request',
  progress: 'a progress notification of request',
} as const

/** What a scene's transports did, summed for the summary table. */
export interface SceneStats {
  reconnects: Record<string, number>
  replayed: number
  reemitted: number
  dropped: number
  /** Tool runs on the server, each call the scene named apart; undefined without a reference server. */
  runs: string | undefined
}

/**
 * Every run of a tool on the reference server, with its arguments, so that two calls of one tool are told apart: a
 * scene names a call by its tool and arguments (`name`), and its runs are counted under that name.
 */
export class ToolRuns {
  readonly #runs: {tool: string; args: string}[] = []
  readonly #names = new Map<string, string>()

  /** The built-in tools of the reference server, each run recorded here. */
  tools(): ToolDefinition[] {
    return builtinTools().map((tool) => ({
      ...tool,
      handler: (args, context) => {
        this.#runs.push({tool: tool.name, args: JSON.stringify(args)})
        return tool.handler(args, context)
      },
    }))
  }

  /** Names the call of `tool` with `args` (as the call sends them) `name`. */
  name(name: string, tool: string, args: Record<string, unknown>): void {
    this.#names.set(`${tool} ${JSON.stringify(args)}`, name)
  }

  /** How often the call named `name` ran. */
  of(name: string): number {
    return this.#runs.filter((run) => this.#names.get(`${run.tool} ${run.args}`) === name).length
  }

  /** `slow×1`, or `slow×1 (X), slow×1 (Y)` for calls named apart. */
  text(): string {
    const counts = new Map<string, number>()
    for (const run of this.#runs) {
      const name = this.#names.get(`${run.tool} ${run.args}`)
      const key = name === undefined ? run.tool : `${run.tool}\u0000${name}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    if (counts.size === 0) return 'none'
    return [...counts]
      .map(([key, count]) => {
        const [tool, name] = key.split('\u0000')
        return name === undefined ? `${tool!}×${count}` : `${tool!}×${count} (${name})`
      })
      .join(', ')
  }
}

/**
 * Narrates one scene: prints the transport's events as they happen (`label` tells client processes apart),
 * keeps the reconnect branches taken, and prints the counters of every transport it was given.
 */
export class Narrator {
  readonly failures: string[] = []
  readonly reconnects: Record<string, number> = {}
  readonly #sources = new Map<string, () => TransportMetrics>()
  readonly #server: ReferenceServer | undefined
  /** The tool runs of the reference server, when there is one. */
  readonly runs: ToolRuns | undefined
  /** Notifications meant for an earlier process's Client, counted rather than printed one by one. */
  #orphaned = 0

  constructor(server?: {server: ReferenceServer; runs: ToolRuns}) {
    this.#server = server?.server
    this.runs = server?.runs
  }

  /** The `onEvent` of a transport, printing under `label` (a client process) when given. */
  listener(label = ''): (event: TransportEvent) => void {
    return (event) => {
      this.event(event, label)
    }
  }

  /** Counts `metrics` (read at each print) in this scene's counters, as the transport of `label`. */
  track(label: string, metrics: () => TransportMetrics): void {
    this.#sources.set(label, metrics)
  }

  event(event: TransportEvent, label = ''): void {
    const who = label === '' ? '' : `${dim(label)} `
    switch (event.type) {
      case 'session-started':
        say(`${who}${dim(`· initialize → ${event.sessionId}`)}`)
        break
      case 'stream-opened':
        if (event.stream === 'standalone')
          say(`${who}${dim(`· standalone GET stream opened   ${headers(event.headers)}`)}`)
        break
      case 'reconnect': {
        this.reconnects[event.branch] = (this.reconnects[event.branch] ?? 0) + 1
        const branch =
          event.branch === 'stream-resumption'
            ? green(event.branch)
            : event.branch === 'session-resumption'
              ? yellow(event.branch)
              : magenta(event.branch)
        const attempt = event.attempt > 1 ? dim(` (attempt ${event.attempt})`) : ''
        say(
          `${who}${cyan('↻')} ${bold(branch)}${' '.repeat(Math.max(1, 20 - event.branch.length))}${streamName(event.stream, event.requestId)}${attempt}`,
        )
        say(`${who}    GET  ${headers(event.headers)}`)
        break
      }
      case 'reconnect-failed':
        // attempt 0: a connection that broke while being read; later ones: a reconnect that failed.
        if (event.attempt === 0)
          say(
            `${who}${red('✂')} ${streamName(event.stream, event.requestId)} broke ${dim(`(${messageOf(event.error)})`)}`,
          )
        else say(`${who}${dim(`· attempt ${event.attempt} failed: ${messageOf(event.error)}`)}`)
        break
      case 'cursor-rejected':
        say(
          `${who}${yellow('!')} the server refused Last-Event-ID ${event.lastEventId} (HTTP ${event.status}): the cursor is dropped`,
        )
        break
      case 'session-expired':
        say(
          `${who}${yellow('!')} session ${event.sessionId} expired (HTTP 404): session and cursors cleared, ${event.settledRequests} pending request(s) settled`,
        )
        break
      case 'request-settled': {
        const resend = event.code === 'session-expired' || event.code === 'outcome-unknown' ? ': not sent again' : ''
        say(`${who}${yellow('!')} request ${String(event.requestId)} settled with '${event.code}'${resend}`)
        break
      }
      case 'duplicate-dropped':
        say(`${who}${magenta('⊘')} duplicate dropped: ${duplicateName[event.what]} ${String(event.id)}`)
        break
      case 'cached-answer-resent':
        say(
          `${who}${magenta('⊘')} server request ${String(event.requestId)} came again: the cached answer re-sent, the handler not run twice`,
        )
        break
      case 'unmatched-response':
        say(`${who}← the answer to request ${String(event.id)} of an earlier process: ${resultText(event.message)}`)
        break
      case 'orphaned-notification':
        this.#orphaned++
        break
      case 'stream-closed':
        if (event.reason === 'given-up' || event.reason === 'not-offered')
          say(`${who}${yellow('!')} ${streamName(event.stream, event.requestId)} closed: ${event.reason}`)
        break
      case 'store-error':
        say(`${who}${yellow('!')} store error on ${event.key}: ${messageOf(event.error)}`)
        break
      case 'session-terminated':
        say(`${who}${dim(`· session ${event.sessionId} terminated (HTTP ${event.status})`)}`)
        break
    }
  }

  /** Notifications for an earlier process's Client, not delivered, since the last call. */
  takeOrphaned(): number {
    const count = this.#orphaned
    this.#orphaned = 0
    return count
  }

  /** The counters of every tracked transport, summed. */
  metrics(): TransportMetrics {
    const sum = zeroMetrics()
    for (const read of this.#sources.values()) {
      const metrics = read()
      for (const key of Object.keys(sum) as (keyof TransportMetrics)[]) sum[key] += metrics[key]
    }
    return sum
  }

  /** Prints the client's counters, and the server's when it is the reference server. */
  counters(): void {
    const m = this.metrics()
    say(
      `${cyan('Σ')} client  replayed events ${bold(String(m.replayedEvents))} · re-emitted requests ${bold(String(m.reemittedRequests))} · duplicates dropped ${bold(String(m.duplicatesDropped))}`,
    )
    const server = this.#server
    if (server === undefined) return
    const s = serverCounters(server)
    say(
      `  server  tool runs ${bold(this.runs?.text() ?? 'n/a')} · buffered events replayed ${s.replayed} · pending requests re-emitted ${s.reemitted} · cursors refused ${s.refused}`,
    )
  }

  /** Prints a check; a failed one makes the scene fail. */
  check(ok: boolean, what: string): void {
    say(`${ok ? green('✓') : red('✗')} ${what}`)
    if (!ok) this.failures.push(what)
  }

  stats(): SceneStats {
    const m = this.metrics()
    return {
      reconnects: {...this.reconnects},
      replayed: m.replayedEvents,
      reemitted: m.reemittedRequests,
      dropped: m.duplicatesDropped,
      runs: this.runs?.text(),
    }
  }
}

/** What the reference server counted: events replayed (live sessions), pending requests re-emitted, cursors refused. */
function serverCounters(server: ReferenceServer): {replayed: number; reemitted: number; refused: number} {
  const replayed = server
    .sessions()
    .reduce((sum, session) => sum + session.streams.reduce((total, stream) => total + stream.replayed, 0), 0)
  return {replayed, reemitted: server.counters.reemittedRequests, refused: server.counters.refusedResumptions}
}

/** A plain-text table: column widths from the content, colour applied after padding. */
export function table(
  header: string[],
  rows: string[][],
  tint: (row: number, column: number, text: string) => string,
): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)))
  const line = (cells: string[], row: number): string =>
    cells
      .map((cell, column) =>
        row < 0 ? bold(cell.padEnd(widths[column]!)) : tint(row, column, cell.padEnd(widths[column]!)),
      )
      .join('  ')
      .trimEnd()
  return [line(header, -1), ...rows.map(line)]
}
