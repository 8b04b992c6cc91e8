/**
 * Each invariant of the simulation (docs/simulation.md#the-invariants) finds a violation built by hand into the
 * ledger of a run that broke nothing, and only that invariant does; the exemptions the page lists hold.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {installClock, uninstallClock, VirtualClock} from '../../sim/clock.ts'
import {check, invariantNames, type InvariantName} from '../../sim/invariants.ts'
import {judge} from '../../sim/runner.ts'
import {quiet, type Schedule} from '../../sim/schedule.ts'
import type {WireEvent} from '../../sim/trace.ts'
import type {Ledger} from '../../sim/world.ts'

const clock = new VirtualClock()
beforeAll(() => installClock(clock))
afterAll(() => uninstallClock())

/**
 * No fault: a tool that asks twice, one with progress, one with a side effect; made once the standalone stream is
 * attached (a GET that reaches the server after a tool asked gets the requests again: the race of
 * docs/simulation.md#found-on-main).
 */
const calm: Schedule = {
  ...quiet,
  latencyMs: 3,
  storeLatencyMs: 1,
  seed: 7,
  calls: [
    {at: 50, tool: 'ask', count: 2, steps: 1, stepMs: 0},
    {at: 60, tool: 'slow', count: 1, steps: 3, stepMs: 20},
    {at: 70, tool: 'increment', count: 1, steps: 1, stepMs: 0},
  ],
}

const cleanLedger = async (): Promise<Ledger> => {
  const {ledger, violations} = await judge(calm, clock)
  expect(violations).toEqual([])
  return ledger
}

const copy = (wire: WireEvent, changes: Partial<WireEvent>, ledger: Ledger): WireEvent => {
  const made = {...wire, n: ledger.trace.wire.length + 1, ...changes}
  ledger.trace.wire.push(made)
  return made
}

const posts = (ledger: Ledger, what: (wire: WireEvent) => boolean): WireEvent[] =>
  ledger.trace.wire.filter((wire) => wire.method === 'POST' && what(wire))

const isAnswer = (wire: WireEvent): boolean => wire.messages.some((message) => 'result' in message)
const isCall = (wire: WireEvent): boolean => wire.messages.some((message) => message.method === 'tools/call')

/** One violation of each invariant, built into a clean ledger. */
const breakers: Record<InvariantName, (ledger: Ledger) => void> = {
  'tools/call POSTed at most once': (ledger) => void copy(posts(ledger, isCall)[0]!, {}, ledger),
  'tools/call run at most once': (ledger) => void ledger.server.executions.set('call1', 2),
  'every call settles within the bound': (ledger) => {
    ledger.calls[0]!.settledAt = undefined
  },
  'progress delivered at most once and in order': (ledger) => {
    const slow = ledger.calls.find((call) => call.tool === 'slow')!
    slow.progress = [1, 2, 2, 3]
  },
  'no server request handled twice': (ledger) => {
    const [key, by] = [...ledger.handled][0]!
    ledger.handled.set(key, [...by, by[0]!])
  },
  'no answer POSTed twice': (ledger) => {
    const answer = posts(ledger, isAnswer)[0]!
    copy(answer, {at: answer.answeredAt! + 1, seq: ledger.trace.wire.length + 1000}, ledger)
  },
  'no answer POSTed outside its session': (ledger) =>
    void copy(posts(ledger, isAnswer)[0]!, {sessionId: undefined, at: ledger.endedAt}, ledger),
  'no server request lost': (ledger) =>
    void ledger.unended.push({call: 'call1', sessionId: ledger.processes[0]!.transport.sessionId, process: 'c1'}),
  'no Last-Event-ID sent in another session': (ledger) => {
    const get = ledger.trace.wire.find((wire) => wire.method === 'GET')!
    const received = ledger.trace.wire.flatMap((wire) => wire.events).find((event) => event.id !== undefined)!
    copy(get, {lastEventId: received.id, sessionId: 'another-session', events: []}, ledger)
  },
  'no request ID reused in a session': (ledger) => {
    const call = posts(ledger, isCall)[0]!
    copy(call, {messages: [{...call.messages[0]!, method: 'tools/list', params: {}}]}, ledger)
  },
  'nothing left running after close()': (ledger) => {
    ledger.leftTimers = 1
  },
}

describe('each invariant', () => {
  it('holds on a run without faults', async () => {
    expect(check(await cleanLedger())).toEqual([])
  })

  it.each(invariantNames)('"%s" finds a violation built by hand, and no other invariant does', async (name) => {
    const ledger = await cleanLedger()
    breakers[name](ledger)
    const found = check(ledger)
    expect(found.length).toBeGreaterThan(0)
    expect(new Set(found.map((violation) => violation.invariant))).toEqual(new Set([name]))
  })
})

describe('what the invariants excuse, as docs/simulation.md says', () => {
  it('a server request handled again by the next process, when the one before died before it POSTed the answer', async () => {
    const ledger = await cleanLedger()
    const [key] = [...ledger.handled][0]!
    ledger.handled.set(key, ['c0', 'c1'])
    ledger.processes.push({...ledger.processes[0]!, name: 'c0', killed: true})
    expect(check(ledger, ['no server request handled twice'])).toEqual([])
    ledger.processes.at(-1)!.killed = false
    expect(check(ledger, ['no server request handled twice'])).toHaveLength(1)
  })

  it('an answer POSTed again after a re-emission on a connection the server opened after it took the answer', async () => {
    const ledger = await cleanLedger()
    const answer = posts(ledger, isAnswer)[0]!
    const id = answer.messages[0]!.id
    const request = ledger.trace.wire.flatMap((wire) => wire.events).find((event) => event.message?.id === id)!
    const get = ledger.trace.wire.find((wire) => wire.method === 'GET')!
    const later = answer.answeredAt! + 5
    copy(get, {takenAt: answer.takenAt! + 1, events: [{...request, at: later - 1}]}, ledger)
    copy(answer, {at: later}, ledger)
    expect(check(ledger, ['no answer POSTed twice'])).toEqual([])
  })

  it('a call that never settles while a connection of its process was left half-open', async () => {
    const ledger = await cleanLedger()
    ledger.calls[0]!.settledAt = undefined
    ledger.trace.wire[0]!.ended = 'half-open'
    ledger.trace.wire[0]!.endedAt = ledger.calls[0]!.startedAt
    expect(check(ledger, ['every call settles within the bound'])).toEqual([])
  })

  it('no server request lost is not asked of a cursor-per-session server, which re-emits nothing', async () => {
    const ledger = await cleanLedger()
    breakers['no server request lost'](ledger)
    ledger.schedule = {...ledger.schedule, mode: 'cursor-per-session'}
    expect(check(ledger, ['no server request lost'])).toEqual([])
  })
})
