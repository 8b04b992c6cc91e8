/**
 * What the soak saw, call by call, and the figures it is judged on: duplicate executions and deliveries, lost
 * server requests and hung calls (each must be 0), and every `outcome-unknown` put next to the fault that
 * caused it.
 */
import type {Report} from './agent.ts'
import type {Fault, FaultKind} from './chaos.ts'
import type {Trace} from './trace.ts'

export interface CallRecord {
  /** The agent that made it (`w0`, `k1.3`). */
  owner: string
  tool: string
  sessionId: string | undefined
  started: number
  settled?: number | undefined
  /** `result`, `tool-error`, a transport code, or `killed` (its process was killed first). */
  outcome?: string | undefined
}

/** Why an `outcome-unknown` came, most specific first; the first fault that touched the call names it. */
const causes: readonly {cause: string; kinds: readonly FaultKind[]; own: boolean; unavoidable: boolean}[] = [
  {cause: 'its POST cut before the first event ID', kinds: ['cut-before-first-event'], own: true, unavoidable: true},
  {cause: 'its session expired or the server lost it', kinds: ['session-expired', 'restart-lost'], own: false, unavoidable: true},
  {cause: 'an outage longer than the fast retries', kinds: ['outage'], own: false, unavoidable: false},
  {cause: 'a 429/5xx burst (with Retry-After)', kinds: ['burst-get', 'burst-call', 'burst-post'], own: false, unavoidable: false},
  {cause: 'a server restart that kept its state', kinds: ['restart-kept'], own: false, unavoidable: false},
  {cause: 'its POST cut after the first event ID', kinds: ['cut-after-first-event'], own: true, unavoidable: false},
  {
    cause: 'another cut while it ran',
    // A call's cut left armed on its keep-alive connection may fall on the next call's response.
    kinds: ['cut-resume', 'cut-get', 'cut-any', 'cut-after-first-event', 'cut-before-first-event', 'close-with-retry', 'drop-all'],
    own: false,
    unavoidable: false,
  },
]

/**
 * Faults that destroy every connection, the idle ones of the clients' pools included. A client learns of it only
 * when its event loop reads the close: a call started meanwhile may go out on a connection already gone, and
 * must report `outcome-unknown` (it cannot know whether the request left). Such a fault acts that much longer.
 */
const destroysPools: ReadonlySet<FaultKind> = new Set(['drop-all', 'restart-kept', 'outage'])
const noticeMs = 500

export interface CauseRow {
  cause: string
  /** Faults of these kinds made during the run. */
  faults: number
  outcomeUnknown: number
  unavoidable: boolean
}

export interface SoakFigures {
  seed: number
  durationMs: number
  calls: number
  outcomes: Record<string, number>
  executions: number
  duplicateExecutions: number
  duplicateDeliveries: {response: number; 'server-request': number; progress: number}
  serverRequestsHandled: number
  lostServerRequests: number
  hungCalls: number
  outcomeUnknown: CauseRow[]
  faults: Partial<Record<FaultKind, number>>
  killedCalls: number
  recoveredAfterKill: number
  /** The calls behind any non-zero figure, to start a replay's investigation. */
  examples: string[]
}

export class Ledger {
  readonly calls = new Map<string, CallRecord>()
  readonly duplicates = {response: 0, 'server-request': 0, progress: 0}
  readonly examples: string[] = []
  handled = 0
  recoveredAfterKill = 0
  readonly #trace: Trace | undefined

  constructor(trace?: Trace) {
    this.#trace = trace
  }

  /** Records one agent's report; `owner` names the agent (e.g. `w0`, `k1`). */
  record(owner: string, report: Report): void {
    switch (report.t) {
      case 'start':
        this.calls.set(report.callId, {owner, tool: report.tool, sessionId: report.sessionId, started: Date.now()})
        this.#trace?.line(owner, `${report.sessionId ?? '-'} start ${report.callId} ${report.tool}`)
        break
      case 'settled': {
        const call = this.calls.get(report.callId)
        if (call === undefined || call.outcome !== undefined) break
        call.settled = Date.now()
        call.outcome = report.outcome
        this.#trace?.line(owner, `${call.sessionId ?? '-'} end ${report.callId} ${report.outcome}`)
        break
      }
      case 'duplicate':
        this.duplicates[report.what]++
        if (report.what !== 'progress') this.#example(`${owner}: ${report.what} ${report.key} delivered twice`)
        break
      case 'handled':
        this.handled++
        break
      case 'unmatched':
        this.recoveredAfterKill++
        break
      case 'trace':
        this.#trace?.line(owner, report.line)
        break
      case 'ready':
        this.#trace?.line(owner, `${report.sessionId ?? '-'} ready`)
        break
    }
  }

  /** Calls still open in a process that was killed: their caller is gone. */
  killed(callIds: Iterable<string>): void {
    for (const id of callIds) {
      const call = this.calls.get(id)
      if (call !== undefined && call.outcome === undefined) call.outcome = 'killed'
    }
  }

  unsettled(): number {
    return [...this.calls.values()].filter((call) => call.outcome === undefined).length
  }

  /** The cause of one `outcome-unknown` call, from the faults that touched it. */
  causeOf(callId: string, faults: readonly Fault[]): string {
    const call = this.calls.get(callId)
    if (call === undefined) return 'unexplained'
    const end = call.settled ?? Date.now()
    const during = faults.filter((fault) => fault.until + (destroysPools.has(fault.kind) ? noticeMs : 0) >= call.started && fault.from <= end)
    for (const {cause, kinds, own} of causes) {
      const hit = during.some((fault) => {
        if (!kinds.includes(fault.kind)) return false
        if (own) return fault.callId === callId
        if (fault.kind === 'session-expired') return fault.sessionId === call.sessionId
        return true
      })
      if (hit) return cause
    }
    return 'unexplained'
  }

  figures(input: {
    seed: number
    durationMs: number
    faults: readonly Fault[]
    runs: ReadonlyMap<string, number>
    lost: readonly {callId: string | undefined; method: string; sessionId: string | undefined; id: string | number}[]
  }): SoakFigures {
    const outcomes: Record<string, number> = {}
    const unknownByCause = new Map<string, number>()
    let hung = 0
    for (const [id, call] of this.calls) {
      const outcome = call.outcome ?? 'hung'
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
      if (outcome === 'hung') {
        hung++
        this.#example(`${id} (${call.tool}) hung`)
      }
      if (outcome === 'outcome-unknown') {
        const cause = this.causeOf(id, input.faults)
        unknownByCause.set(cause, (unknownByCause.get(cause) ?? 0) + 1)
        if (cause === 'unexplained') this.#example(`${id} of ${call.owner} (${call.tool}, ${call.sessionId}, ran ${input.runs.get(id) ?? 0}×) outcome-unknown, no fault to explain it`)
      }
    }
    let duplicateExecutions = 0
    let executions = 0
    for (const [id, runs] of input.runs) {
      executions += runs
      if (runs > 1) {
        duplicateExecutions += runs - 1
        this.#example(`${id} (${this.calls.get(id)?.tool}) ran ${runs} times`)
      }
    }
    for (const request of input.lost) {
      const call = request.callId === undefined ? undefined : this.calls.get(request.callId)
      const cause = request.callId === undefined ? 'its call unknown' : `${request.callId} of ${call?.owner ?? '?'}: ${call?.outcome ?? 'open'}`
      this.#example(`${request.method} ${request.sessionId} ${String(request.id)} never answered (${cause})`)
    }
    const faults: Partial<Record<FaultKind, number>> = {}
    for (const fault of input.faults) faults[fault.kind] = (faults[fault.kind] ?? 0) + 1
    const outcomeUnknown: CauseRow[] = causes.map(({cause, kinds, unavoidable}) => ({
      cause,
      faults: kinds.reduce((sum, kind) => sum + (faults[kind] ?? 0), 0),
      outcomeUnknown: unknownByCause.get(cause) ?? 0,
      unavoidable,
    }))
    outcomeUnknown.push({cause: 'unexplained', faults: 0, outcomeUnknown: unknownByCause.get('unexplained') ?? 0, unavoidable: false})
    return {
      seed: input.seed,
      durationMs: input.durationMs,
      calls: this.calls.size,
      outcomes,
      executions,
      duplicateExecutions,
      duplicateDeliveries: {...this.duplicates},
      serverRequestsHandled: this.handled,
      lostServerRequests: input.lost.length,
      hungCalls: hung,
      outcomeUnknown,
      faults,
      killedCalls: outcomes['killed'] ?? 0,
      recoveredAfterKill: this.recoveredAfterKill,
      examples: this.examples,
    }
  }

  #example(line: string): void {
    if (this.examples.length < 20) this.examples.push(line)
  }
}
