/**
 * What the soak saw, call by call, and the figures it is judged on: duplicate executions and deliveries, lost
 * server requests and hung calls (each must be 0), and every `outcome-unknown` by its cause.
 */
import {reconnect, type Report} from './agent.ts'
import {outageMs, type Fault, type FaultKind} from './chaos.ts'
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
  /** How a failed call failed (see the `settled` report). */
  via?: 'post' | 'stream' | undefined
  status?: number | undefined
}

/**
 * Why an `outcome-unknown` came, by what the client saw of its call: its POST failed (`via: 'post'`, with the status if
 * there was one), or its response stream ended without the answer (the `stream-closed` reason). `why` says why that
 * answer cannot be had; a row without one is an answer the server still held and the transport should have
 * recovered: it must stay at 0. `kinds` are the faults that bring a row about, counted beside it.
 */
const causes = {
  postLost: {
    cause: 'its POST lost with its connection, before any answer',
    why: 'no answer began: the client cannot tell whether the request reached the server, and a POST is never sent twice',
    kinds: ['restart-kept', 'outage', 'drop-all', 'cut-before-first-event', 'cut-any'],
  },
  postFailed: {
    cause: 'its POST answered 500 or 502',
    why: 'the server, or one behind a gateway, failed and may have run it (RFC 9110 15.6): no answer comes with the status',
    kinds: ['burst-call', 'burst-post'],
  },
  noCursor: {
    cause: 'its stream broke before its first event ID',
    why: "nothing to resume from: a GET without Last-Event-ID never brings a request's answer",
    kinds: ['restart-kept', 'drop-all', 'cut-before-first-event', 'cut-any'],
  },
  outage: {
    cause: 'its resumption given up: an outage longer than the reconnect policy',
    why: `the soak's reconnect policy (attempts ${reconnect.minDelayMs} - ${reconnect.maxDelayMs} ms apart, about 3 s in all) ends before its outages (${outageMs[0] / 1000} - ${outageMs[1] / 1000} s) on purpose: waiting longer is the app's choice (the default policy waits about 4 minutes)`,
    kinds: ['outage'],
  },
  givenUp: {
    cause: 'its resumption given up while the server was reachable',
    why: undefined,
    kinds: ['restart-kept', 'burst-get', 'cut-resume', 'cut-get', 'drop-all'],
  },
  silent: {
    cause: 'its resumed stream silent for resumeTimeoutMs',
    why: undefined,
    kinds: ['restart-kept', 'cut-resume'],
  },
} as const satisfies Record<string, {cause: string; why: string | undefined; kinds: readonly FaultKind[]}>

type Cause = keyof typeof causes | 'unexplained'

/**
 * Faults that destroy every connection, the idle ones of the clients' pools included. A client learns of it only
 * when its event loop reads the close: a call started meanwhile may go out on a connection already gone. Such a fault
 * acts that much longer.
 */
const destroysPools: ReadonlySet<FaultKind> = new Set(['drop-all', 'restart-kept', 'outage'])
const noticeMs = 500

/**
 * The fault a call is put next to, among those acting while it ran: its own cut first, then one of the kinds that
 * bring its row about, then any, in this order. A cut left armed on a keep-alive connection may fall on the next
 * call's response: another call's cut counts.
 */
const blame: readonly FaultKind[] = [
  'restart-kept',
  'outage',
  'drop-all',
  'burst-call',
  'burst-post',
  'burst-get',
  'cut-before-first-event',
  'cut-after-first-event',
  'cut-resume',
  'cut-get',
  'cut-any',
  'close-with-retry',
  'restart-lost',
  'session-expired',
]

export interface CauseRow {
  cause: string
  /** Faults of the kinds that bring it about, made during the run. */
  faults: number
  outcomeUnknown: number
  /** Of those calls, how many the server had an answer for (their tool returned). */
  answered: number
  /** Why that answer cannot be had; undefined for a row that must be 0. */
  why: string | undefined
  /** The same calls by the fault acting while they ran (`none` when none was). */
  byFault: Record<string, number>
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
  /** `outcome-unknown`s in the rows that must be 0, unexplained ones included: answers the transport should have recovered. */
  recoverableLost: number
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
  /** How request streams ended without their answer, by `<session> <wire request ID>`. */
  readonly #streamEnds = new Map<string, string>()
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
        call.via = report.via
        call.status = report.status
        this.#trace?.line(
          owner,
          `${call.sessionId ?? '-'} end ${report.callId} ${report.outcome} ${report.via ?? ''} ${report.status ?? ''}`,
        )
        break
      }
      case 'duplicate':
        this.duplicates[report.what]++
        if (report.what !== 'progress') this.#example(`${owner}: ${report.what} ${report.key} delivered twice`)
        break
      case 'handled':
        this.handled++
        break
      case 'stream-closed':
        this.#streamEnds.set(`${report.sessionId} ${report.requestId}`, report.reason)
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

  /**
   * The cause of one `outcome-unknown` call, from how it failed; `streamEnd` is how its response stream ended (the
   * server knows which wire request was which call).
   */
  causeOf(callId: string, faults: readonly Fault[], streamEnd: string | undefined): Cause {
    const call = this.calls.get(callId)
    if (call === undefined) return 'unexplained'
    if (call.via === 'post')
      return call.status === undefined
        ? 'postLost'
        : call.status === 500 || call.status === 502
          ? 'postFailed'
          : 'unexplained'
    if (call.via !== 'stream') return 'unexplained'
    switch (streamEnd) {
      case 'abandoned':
        return 'noCursor'
      case 'given-up': {
        const end = call.settled ?? Date.now()
        const outage = faults.some(
          (fault) => fault.kind === 'outage' && fault.until + noticeMs >= call.started && fault.from <= end,
        )
        return outage ? 'outage' : 'givenUp'
      }
      case 'silent':
        return 'silent'
      default:
        return 'unexplained'
    }
  }

  /** The fault acting while `call` ran that it is put next to (`kinds`: those of its row), or `none`. */
  #faultOf(callId: string, call: CallRecord, faults: readonly Fault[], kinds: readonly FaultKind[]): string {
    const end = call.settled ?? Date.now()
    const during = faults.filter(
      (fault) => fault.until + (destroysPools.has(fault.kind) ? noticeMs : 0) >= call.started && fault.from <= end,
    )
    const own = during.find((fault) => fault.callId === callId)
    if (own !== undefined) return own.kind
    const acts = (kind: FaultKind): boolean =>
      during.some((fault) => fault.kind === kind && (kind !== 'session-expired' || fault.sessionId === call.sessionId))
    return blame.find((kind) => kinds.includes(kind) && acts(kind)) ?? blame.find(acts) ?? 'none'
  }

  figures(input: {
    seed: number
    durationMs: number
    faults: readonly Fault[]
    runs: ReadonlyMap<string, number>
    /** Calls whose tool returned. */
    answered: ReadonlySet<string>
    /** The soak's call ID of wire request `requestId` in `sessionId`. */
    callOf: (sessionId: string | undefined, requestId: string) => string | undefined
    lost: readonly {callId: string | undefined; method: string; sessionId: string | undefined; id: string | number}[]
  }): SoakFigures {
    const outcomes: Record<string, number> = {}
    const unknownByCause = new Map<Cause, {count: number; answered: number; byFault: Record<string, number>}>()
    const streamEnds = new Map<string, string>()
    for (const [key, reason] of this.#streamEnds) {
      const [sessionId, requestId] = key.split(' ') as [string, string]
      const callId = input.callOf(sessionId, requestId)
      if (callId !== undefined) streamEnds.set(callId, reason)
    }
    let hung = 0
    for (const [id, call] of this.calls) {
      const outcome = call.outcome ?? 'hung'
      // A refusal names its status: a 429 or 503 says the server did not run the call.
      const named = outcome === 'http' ? `http ${call.status ?? '?'}` : outcome
      outcomes[named] = (outcomes[named] ?? 0) + 1
      if (outcome === 'hung') {
        hung++
        this.#example(`${id} (${call.tool}) hung`)
      }
      if (outcome === 'outcome-unknown') {
        const cause = this.causeOf(id, input.faults, streamEnds.get(id))
        const row = unknownByCause.get(cause) ?? {count: 0, answered: 0, byFault: {}}
        row.count++
        if (input.answered.has(id)) row.answered++
        const known = cause === 'unexplained' ? undefined : causes[cause]
        const fault = this.#faultOf(id, call, input.faults, known?.kinds ?? [])
        row.byFault[fault] = (row.byFault[fault] ?? 0) + 1
        unknownByCause.set(cause, row)
        if (known?.why === undefined) {
          const how = `${call.via ?? '?'} ${call.status ?? ''} ${streamEnds.get(id) ?? ''}`
          this.#example(
            `${id} of ${call.owner} (${call.tool}, ${call.sessionId}, ran ${input.runs.get(id) ?? 0}×, ${how}) outcome-unknown: ${known?.cause ?? cause}`,
          )
        }
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
      const cause =
        request.callId === undefined
          ? 'its call unknown'
          : `${request.callId} of ${call?.owner ?? '?'}: ${call?.outcome ?? 'open'}`
      this.#example(`${request.method} ${request.sessionId} ${String(request.id)} never answered (${cause})`)
    }
    const faults: Partial<Record<FaultKind, number>> = {}
    for (const fault of input.faults) faults[fault.kind] = (faults[fault.kind] ?? 0) + 1
    const outcomeUnknown: CauseRow[] = Object.entries(causes).map(([key, {cause, kinds, why}]) => ({
      cause,
      faults: kinds.reduce((sum, kind) => sum + (faults[kind] ?? 0), 0),
      outcomeUnknown: unknownByCause.get(key as Cause)?.count ?? 0,
      answered: unknownByCause.get(key as Cause)?.answered ?? 0,
      why,
      byFault: unknownByCause.get(key as Cause)?.byFault ?? {},
    }))
    const unexplained = unknownByCause.get('unexplained')
    outcomeUnknown.push({
      cause: 'unexplained',
      faults: 0,
      outcomeUnknown: unexplained?.count ?? 0,
      answered: unexplained?.answered ?? 0,
      why: undefined,
      byFault: unexplained?.byFault ?? {},
    })
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
      recoverableLost: outcomeUnknown.reduce((sum, row) => sum + (row.why === undefined ? row.outcomeUnknown : 0), 0),
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
