/**
 * The simulation (docs/simulation.md) on its own terms: a seed replays the same run, trace included, whatever ran
 * before it; a short run passes; the schedules of the bugs it found pass now.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {installClock, uninstallClock, VirtualClock} from '../../sim/clock.ts'
import {describeFailure, emptyTally, judge, runSeeds} from '../../sim/runner.ts'
import {quiet, scheduleOf, type Schedule} from '../../sim/schedule.ts'

const clock = new VirtualClock()
beforeAll(() => installClock(clock))
afterAll(() => uninstallClock())

const traceOf = async (schedule: Schedule): Promise<string> => (await judge(schedule, clock)).ledger.trace.format()

describe('determinism', () => {
  it('a seed replays the same trace, before and after other schedules ran', async () => {
    const first = await traceOf(scheduleOf(40))
    await runSeeds([41, 42, 43], clock, emptyTally())
    expect(await traceOf(scheduleOf(40))).toBe(first)
    expect(first).toMatch(/POST tools\/call/)
  })
})

describe('a failing schedule, written out', () => {
  it('names the seed, the invariant, the schedule and the replay, then the trace with both headers of every reconnect', async () => {
    const {ledger} = await judge(
      {
        ...quiet,
        calls: [{at: 0, tool: 'slow', count: 1, steps: 2, stepMs: 10}],
        wire: [[4, {kind: 'cut', atByte: 90}]],
      },
      clock,
    )
    const text = describeFailure(
      5,
      {
        schedule: ledger.schedule,
        path: '1:2',
        ledger,
        violations: [{invariant: 'tools/call run at most once', detail: 'call1 ran 2 times'}],
      },
      'npm run sim',
    )
    expect(text).toContain('seed 5: "tools/call run at most once" broken')
    expect(text).toContain('  - tools/call run at most once: call1 ran 2 times')
    expect(text).toContain(`schedule: ${JSON.stringify(ledger.schedule)}`)
    expect(text).toContain('replay: npm run sim -- --seed 5 --path 1:2')
    expect(text).toMatch(/#4 c1 POST tools\/call slow #1 \(Mcp-Session-Id ref-1\) \[fault {"kind":"cut","atByte":90}\]/)
    expect(text).toMatch(/c1 GET {2}\(Mcp-Session-Id ref-1, Last-Event-ID p\d+_\d+\)/)
  })
})

describe('a short run', () => {
  it('40 schedules (seeds 400 to 439) break no invariant', async () => {
    const tally = await runSeeds(
      Array.from({length: 40}, (_, index) => 400 + index),
      clock,
      emptyTally(),
    )
    expect(tally.findings).toEqual([])
    expect(tally.schedules).toBe(40)
    expect(tally.calls).toBeGreaterThan(100)
    expect(tally.faults).toBeGreaterThan(50)
  })
})

/**
 * The schedules (shrunk by the simulation) that broke an invariant on main before a fix: each fails with that fix
 * reverted.
 */
const regressions: [string, Schedule][] = [
  [
    // close() while start() awaited the store's lease left the lease renewed for ever: the next process waited.
    'a Client closed to reconnect while its transport still leased the session',
    {
      ...quiet,
      storeLatencyMs: 2,
      calls: [{at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0}],
      clientFaults: [[1, 'reconnect']],
    },
  ],
  [
    // A call's resumed stream replayed another stream's progress: the Client got progress 1 twice.
    'a cursor-per-session server replaying the whole session on a resumed stream',
    {
      ...quiet,
      mode: 'cursor-per-session',
      calls: [
        {at: 1, tool: 'slow', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'slow', count: 1, steps: 1, stepMs: 2},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
      ],
      serverFaults: [[1, 'expire-streams']],
    },
  ],
  [
    // A previous process's progress, replayed on another stream, reached the Client as its own call's (4, then 1).
    "a cursor-per-session server replaying a previous process's progress on the next one's call",
    {
      ...quiet,
      mode: 'cursor-per-session',
      retryMs: 0,
      calls: [
        {at: 0, tool: 'slow', count: 1, steps: 4, stepMs: 132},
        {at: 528, tool: 'slow', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
      ],
      serverFaults: [[528, 'disconnect']],
      clientFaults: [[0, 'reconnect']],
    },
  ],
  [
    // A restored answer waited for the store while its session expired, then went out with no session at all.
    'a session lost at once, and the first process killed',
    {
      ...quiet,
      calls: [
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
      ],
      store: [[8, {kind: 'fail'}]],
      serverFaults: [[0, 'expire-session']],
      clientFaults: [[0, 'kill']],
    },
  ],
  [
    // A restored answer waited while the session expired, then went out with no session at all.
    "a session lost while a next process still restored its predecessor's answers",
    {
      ...quiet,
      latencyMs: 1,
      seed: 411242367,
      calls: [{at: 175, tool: 'ask', count: 2, steps: 1, stepMs: 0}],
      wire: [[3, {kind: 'status', status: 500, retryAfter: undefined, after: true}]],
      store: [[9, {kind: 'crash-after'}]],
      serverFaults: [[181, 'expire-session']],
    },
  ],
  [
    // A call whose POST failed after the tool ran: its progress, replayed on another stream, went to another call.
    'a cursor-per-session server replaying the progress of a call whose POST failed',
    {
      ...quiet,
      mode: 'cursor-per-session',
      calls: [
        {at: 1796, tool: 'slow', count: 1, steps: 2, stepMs: 104},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 1241, tool: 'slow', count: 1, steps: 4, stepMs: 165},
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        {at: 1451, tool: 'slow', count: 1, steps: 3, stepMs: 185},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
      ],
      wire: [[10, {kind: 'status', status: 500, retryAfter: undefined, after: true}]],
      serverFaults: [[2004, 'expire-streams']],
    },
  ],
  [
    // close() while start() read the store let start() go on: it resumed a call's stream after close() resolved.
    'a Client closed again while its new transport still read the store',
    {
      ...quiet,
      retryMs: 0,
      storeLatencyMs: 2,
      calls: [{at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0}],
      store: [[3, {kind: 'fail'}]],
      clientFaults: [
        [927, 'reconnect'],
        [933, 'reconnect'],
      ],
    },
  ],
  [
    // An answer whose first attempt the server took, its reply lost: a copy read while the POST waited to retry got
    // the cached answer beside the retry.
    'an answer whose reply was lost, the request re-emitted while its POST waited to retry',
    {
      retryMs: undefined,
      server: 'reference',
      client: 'v1',
      mode: 'correct',
      pendingOnAttach: 're-emit',
      latencyMs: 0,
      storeLatencyMs: 0,
      seed: 0,
      calls: [
        {at: 0, tool: 'ask', count: 2, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 34, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        {at: 33, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 33, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 154, tool: 'slow', count: 1, steps: 2, stepMs: 270},
        {at: 1882, tool: 'ask', count: 2, steps: 2, stepMs: 243},
        {at: 32, tool: 'ask', count: 1, steps: 2, stepMs: 227},
        {at: 518, tool: 'increment', count: 2, steps: 3, stepMs: 121},
        {at: 1021, tool: 'increment', count: 1, steps: 2, stepMs: 120},
        {at: 2972, tool: 'increment', count: 1, steps: 1, stepMs: 245},
        {at: 2233, tool: 'increment', count: 1, steps: 4, stepMs: 131},
        {at: 2455, tool: 'ask', count: 2, steps: 1, stepMs: 43},
        {at: 1108, tool: 'slow', count: 1, steps: 2, stepMs: 34},
        {at: 2844, tool: 'increment', count: 1, steps: 2, stepMs: 158},
        {at: 2067, tool: 'increment', count: 1, steps: 4, stepMs: 192},
      ],
      wire: [
        [49, {kind: 'status', status: 404, retryAfter: 3, after: false}],
        [10, {kind: 'status', status: 504, retryAfter: undefined, after: true}],
        [58, {kind: 'status', status: 500, retryAfter: undefined, after: true}],
        [25, {kind: 'half-open', atByte: 527}],
        [22, {kind: 'cut', atByte: 17}],
        [29, {kind: 'lose-answer'}],
      ],
      store: [[11, {kind: 'crash-after'}]],
      serverFaults: [
        [2301, 'expire-streams'],
        [2338, 'disconnect-close'],
      ],
      clientFaults: [],
    },
  ],
  [
    // The server took an answer; a next process resumed a stream from a cursor before a copy of the request and
    // handled it again.
    'a process killed after the server took its answer, the next one resuming from an older cursor',
    {
      server: 'reference',
      client: 'v1',
      mode: 'correct',
      pendingOnAttach: 're-emit',
      retryMs: 0,
      latencyMs: 1,
      storeLatencyMs: 0,
      seed: 26,
      calls: [
        {at: 1448, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 2910, tool: 'ask', count: 2, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 853, tool: 'slow', count: 1, steps: 3, stepMs: 253},
        {at: 0, tool: 'increment', count: 1, steps: 4, stepMs: 136},
        {at: 1103, tool: 'slow', count: 2, steps: 2, stepMs: 111},
        {at: 2474, tool: 'slow', count: 2, steps: 1, stepMs: 101},
        {at: 326, tool: 'increment', count: 1, steps: 3, stepMs: 237},
        {at: 1587, tool: 'ask', count: 1, steps: 2, stepMs: 83},
        {at: 93, tool: 'ask', count: 2, steps: 3, stepMs: 278},
        {at: 699, tool: 'increment', count: 1, steps: 1, stepMs: 11},
        {at: 2909, tool: 'increment', count: 2, steps: 4, stepMs: 66},
        {at: 2961, tool: 'slow', count: 2, steps: 1, stepMs: 147},
        {at: 665, tool: 'increment', count: 2, steps: 1, stepMs: 81},
        {at: 2872, tool: 'ask', count: 2, steps: 3, stepMs: 144},
        {at: 772, tool: 'increment', count: 2, steps: 4, stepMs: 114},
      ],
      wire: [
        [51, {kind: 'cut', atByte: 540}],
        [25, {kind: 'refuse'}],
        [18, {kind: 'slow', ms: 680}],
        [20, {kind: 'slow', ms: 1136}],
        [53, {kind: 'lose-answer'}],
        [53, {kind: 'status', status: 500, retryAfter: undefined, after: true}],
      ],
      store: [[46, {kind: 'crash-after'}]],
      serverFaults: [],
      clientFaults: [
        [324, 'reconnect'],
        [1447, 'kill'],
      ],
    },
  ],
  [
    // A request re-emitted to the standalone stream was answered from there; its copy on the call's stream, whose
    // headers came after the server took the answer, got the cached answer again.
    'an SDK server re-emitting to the standalone stream a request its call stream brings later',
    {
      retryMs: undefined,
      server: 'sdk',
      client: 'v1',
      mode: 'correct',
      pendingOnAttach: 're-emit',
      latencyMs: 8,
      storeLatencyMs: 0,
      seed: 1755255036,
      calls: [
        {at: 0, tool: 'ask', count: 2, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'slow', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 2501, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'slow', count: 1, steps: 1, stepMs: 0},
        {at: 2501, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'slow', count: 1, steps: 2, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'slow', count: 1, steps: 1, stepMs: 247},
      ],
      wire: [],
      store: [],
      serverFaults: [],
      clientFaults: [[2500, 'kill']],
    },
  ],
  [
    // A 404 the network made up ended a session the server kept; the process died before the store forgot the
    // session, after it forgot the answers: the next process resumed it and handled a re-emitted request again.
    'a process that dies while a session ends in the store, the server still holding it',
    {
      ...quiet,
      storeLatencyMs: 1,
      calls: [
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        ...Array.from({length: 7}, () => ({at: 0, tool: 'increment' as const, count: 1, steps: 1, stepMs: 0})),
        {at: 0, tool: 'ask', count: 2, steps: 1, stepMs: 0},
        {at: 0, tool: 'ask', count: 1, steps: 1, stepMs: 0},
        {at: 0, tool: 'increment', count: 1, steps: 1, stepMs: 0},
        {at: 5, tool: 'increment', count: 1, steps: 1, stepMs: 0},
      ],
      wire: [
        [1, {kind: 'status', status: 500, retryAfter: undefined, after: true}],
        [4, {kind: 'lose-answer'}],
        [21, {kind: 'status', status: 404, retryAfter: undefined, after: false}],
      ],
      store: [[24, {kind: 'crash-after'}]],
      serverFaults: [[134, 'disconnect-close']],
      clientFaults: [[4, 'kill']],
    },
  ],
  [
    // A session that ended in the store while its record was being written came back when that write landed: the
    // next process resumed it without the answers deleted, and a re-emitted request reached its Client again.
    'a session record written while the session ends, the network refusing its GET 410',
    {
      ...quiet,
      mode: 'live-result-only',
      storeLatencyMs: 5,
      seed: 2147483640,
      calls: [
        {at: 0, tool: 'slow', count: 1, steps: 1, stepMs: 5},
        {at: 14, tool: 'increment', count: 2, steps: 2, stepMs: 3},
        {at: 7, tool: 'ask', count: 1, steps: 1, stepMs: 293},
      ],
      wire: [
        [47, {kind: 'cut', atByte: 9}],
        [6, {kind: 'status', status: 410, retryAfter: 1, after: false}],
      ],
      store: [[4, {kind: 'crash-after'}]],
    },
  ],
]

describe('regression schedules', () => {
  it.each(regressions)('%s: every invariant holds', async (_name, schedule) => {
    const {violations} = await judge(schedule, clock)
    expect(violations).toEqual([])
  })
})
