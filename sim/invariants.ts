/**
 * The invariants, each named, each checked on every schedule's ledger. An invariant that a faulty server mode
 * breaks by design lists that mode in `exempt` (docs/simulation.md says why); nothing else excuses a violation.
 */
import type {Message, WireEvent} from './trace.ts'
import {settleBoundMs, type Ledger} from './world.ts'

export interface Violation {
  invariant: InvariantName
  detail: string
}

export const invariantNames = [
  'tools/call POSTed at most once',
  'tools/call run at most once',
  'every call settles within the bound',
  'progress delivered at most once and in order',
  'no server request handled twice',
  'no answer POSTed twice',
  'no answer POSTed outside its session',
  'no server request lost',
  'no Last-Event-ID sent in another session',
  'no request ID reused in a session',
  'nothing left running after close()',
] as const

export type InvariantName = (typeof invariantNames)[number]

const isResponse = (message: Message): boolean =>
  message.method === undefined && message.id !== undefined && message.id !== null
const isRequest = (message: Message): boolean => message.method !== undefined && message.id !== undefined
const callKeyOf = (message: Message): string | undefined => {
  const args = message.params?.['arguments'] as {call?: unknown} | undefined
  return message.method === 'tools/call' && typeof args?.call === 'string' ? args.call : undefined
}
const ok = (wire: WireEvent): boolean => wire.status !== undefined && wire.status >= 200 && wire.status < 300
const sessionOf = (wire: WireEvent): string => wire.answerSessionId ?? wire.sessionId ?? '-'

function counted<K>(keys: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

const overOne = <K>(counts: Map<K, number>): [K, number][] => [...counts].filter(([, count]) => count > 1)

type Check = (ledger: Ledger) => string[]

/** Whether a connection of `process` was left half-open before `by`. */
const halfOpen = (wire: readonly WireEvent[], process: string, by: number): boolean =>
  wire.some((event) => event.process === process && event.ended === 'half-open' && event.endedAt! <= by)

/** Statuses that refuse an answer for good: the transport does not send it again (408, 425, 429 and 5xx it does). */
const refusals = new Set([400, 409, 410])

/** Whether an answer POST of `process` was refused for good before `by`: the tool that asked waits for ever. */
const answerRefused = (wire: readonly WireEvent[], process: string, by: number): boolean =>
  wire.some(
    (event) =>
      event.process === process &&
      event.method === 'POST' &&
      event.messages.some(isResponse) &&
      refusals.has(event.status ?? 0) &&
      event.answeredAt! <= by,
  )

/** Why a call or a server request of `process` may not end by `by`, though the transport did its part. */
const stuckByDesign = (wire: readonly WireEvent[], process: string, by: number): boolean =>
  halfOpen(wire, process, by) || answerRefused(wire, process, by)

/** The answer POSTs of each server request, by `session|id`. */
function answersOf(wire: readonly WireEvent[]): Map<string, WireEvent[]> {
  const answers = new Map<string, WireEvent[]>()
  for (const event of wire) {
    if (event.method !== 'POST') continue
    for (const message of event.messages) {
      if (!isResponse(message)) continue
      const key = `${event.sessionId ?? '-'}|${String(message.id)}`
      answers.set(key, [...(answers.get(key) ?? []), event])
    }
  }
  return answers
}

/** Each copy of a server request the client read: `session|id` to the connections that delivered it, and when. */
function copiesOf(wire: readonly WireEvent[]): Map<string, {connection: WireEvent; at: number}[]> {
  const copies = new Map<string, {connection: WireEvent; at: number}[]>()
  for (const connection of wire)
    for (const event of connection.events) {
      if (event.message === undefined || !isRequest(event.message)) continue
      const key = `${sessionOf(connection)}|${String(event.message.id)}`
      copies.set(key, [...(copies.get(key) ?? []), {connection, at: event.at}])
    }
  return copies
}

const checks: Record<InvariantName, Check> = {
  'tools/call POSTed at most once': ({trace}) =>
    overOne(
      counted(
        trace.wire
          .filter((wire) => wire.method === 'POST')
          .flatMap((wire) => wire.messages.map(callKeyOf).filter((key) => key !== undefined)),
      ),
    ).map(([key, count]) => `${key} POSTed ${count} times`),

  'tools/call run at most once': ({server}) =>
    overOne(server.executions).map(([key, count]) => `${key} ran ${count} times on the server`),

  // Excused: a call of a process with a connection left half-open before the call settled (the transport never
  // times out a POST's own connection nor the standalone stream: the app's request timeout ends such a call), or
  // whose answer to a server request was refused for good (the tool that asked waits for it).
  'every call settles within the bound': ({calls, endedAt, trace}) =>
    calls
      .filter((call) => !call.abandoned)
      .filter((call) => !stuckByDesign(trace.wire, call.process, call.settledAt ?? endedAt))
      .filter((call) => (call.settledAt ?? endedAt) - call.startedAt > settleBoundMs || call.settledAt === undefined)
      .map((call) =>
        call.settledAt === undefined
          ? `${call.key} (${call.tool}) never settled (started at ${call.startedAt - calls[0]!.startedAt} ms)`
          : `${call.key} settled ${call.settledAt - call.startedAt} ms after it started`,
      ),

  'progress delivered at most once and in order': ({calls}) =>
    calls
      .filter((call) => call.progress.some((value, index) => index > 0 && value <= call.progress[index - 1]!))
      .map((call) => `${call.key} got progress ${call.progress.join(', ')}`),

  // Excused: a second time in a later process, when the earlier one died before it POSTed the answer (nothing
  // recorded that the Client had it), or when the store failed a write (the transport then goes on without it,
  // and a later process reads records it could not update).
  'no server request handled twice': ({handled, processes, storeFailures, trace}) => {
    const killed = new Set(processes.filter((process) => process.killed).map((process) => process.name))
    const answers = answersOf(trace.wire)
    return [...handled]
      .filter(([key, by]) =>
        by.some((process, index) => {
          if (index === 0) return false
          const earlier = by[index - 1]!
          if (earlier === process) return true
          const posted = (answers.get(key) ?? []).some((wire) => wire.process === earlier)
          return !(killed.has(earlier) && !posted) && storeFailures === 0
        }),
      )
      .map(([key, by]) => `server request ${key} handled ${by.length} times (by ${by.join(', ')})`)
  },

  // The rule: an answer the server took (and the client heard so) after the connection that re-emitted its request
  // opened is never sent again; one taken before that connection opened, or never confirmed, may be.
  'no answer POSTed twice': ({trace, processes, storeFailures}) => {
    const killed = new Set(processes.filter((process) => process.killed).map((process) => process.name))
    const copies = copiesOf(trace.wire)
    const found: string[] = []
    for (const [key, posts] of answersOf(trace.wire)) {
      for (const later of posts.slice(1)) {
        const confirmed = posts.find(
          (earlier) =>
            earlier.n < later.n &&
            earlier.taken &&
            ok(earlier) &&
            earlier.answeredAt !== undefined &&
            earlier.answeredAt <= later.at &&
            // A process killed after it heard, or whose store failed the write, may not have recorded it: its
            // successor may send again.
            (earlier.process === later.process || (!killed.has(earlier.process) && storeFailures === 0)),
        )
        if (confirmed === undefined) continue
        const fresh = (copies.get(key) ?? []).some(
          ({connection, at}) => (connection.takenAt ?? 0) > confirmed.takenAt! && at <= later.at,
        )
        if (!fresh)
          found.push(
            `answer to ${key} POSTed again (#${later.n}) after the server took it (#${confirmed.n}), with no re-emission from a connection opened after that`,
          )
      }
    }
    return found
  },

  // An answer goes in the session whose stream brought its request: never without one, nor in the next.
  'no answer POSTed outside its session': ({trace}) => {
    const copies = copiesOf(trace.wire)
    return trace.wire
      .filter((wire) => wire.method === 'POST')
      .flatMap((wire) =>
        wire.messages
          .filter((message) => isResponse(message) && !copies.has(`${wire.sessionId ?? '-'}|${String(message.id)}`))
          .map(
            (message) =>
              `#${wire.n} POSTed the answer to ${String(message.id)} in ${wire.sessionId === undefined ? 'no session' : `session ${wire.sessionId}`}, where no such request came`,
          ),
      )
  },

  // Excused as above: the request may sit in a half-open connection, or its answer was refused.
  'no server request lost': ({unended, trace, endedAt}) =>
    unended
      .filter(({process}) => !stuckByDesign(trace.wire, process, endedAt))
      .map(({call, sessionId}) => `a server request of ${call} never ended, in live session ${sessionId}`),

  'no Last-Event-ID sent in another session': ({trace}) => {
    // A server may number events per session (cursor-per-session): one ID may come in several sessions.
    const sessionsOfEvent = new Map<string, Set<string>>()
    for (const connection of trace.wire)
      for (const event of connection.events) {
        if (event.id === undefined) continue
        const sessions = sessionsOfEvent.get(event.id) ?? new Set()
        sessions.add(sessionOf(connection))
        sessionsOfEvent.set(event.id, sessions)
      }
    return trace.wire
      .filter((wire) => wire.lastEventId !== undefined)
      .filter((wire) => sessionsOfEvent.get(wire.lastEventId!)?.has(wire.sessionId ?? '-') !== true)
      .map((wire) => {
        const came = [...(sessionsOfEvent.get(wire.lastEventId!) ?? [])]
        return `#${wire.n} sent Last-Event-ID ${wire.lastEventId} in session ${wire.sessionId}; it came in ${came.length === 0 ? 'none (never received)' : came.join(', ')}`
      })
  },

  // Excused across processes after a failed store write: the transport goes on in memory and a restart resumes
  // from what the store held before (docs/options.md#storetimeoutms), the request IDs it had reserved included.
  'no request ID reused in a session': ({trace, storeFailures}) => {
    const seen = new Map<string, {text: string; process: string}>()
    const found: string[] = []
    for (const wire of trace.wire) {
      if (wire.method !== 'POST' || wire.sessionId === undefined) continue
      for (const message of wire.messages) {
        if (!isRequest(message)) continue
        const key = `${wire.sessionId}|${String(message.id)}`
        const text = JSON.stringify(message)
        const before = seen.get(key)
        const excused = before?.process !== wire.process && storeFailures > 0
        if (before !== undefined && before.text !== text && !excused)
          found.push(`#${wire.n} reused request ID ${key} (first used by ${before.process})`)
        seen.set(key, {text, process: wire.process})
      }
    }
    return found
  },

  'nothing left running after close()': ({trace, leftTimers, leftBodies, errors}) => [
    ...trace.afterClose.map(({process, n}) => `${process} fetched (#${n}) after its close() resolved`),
    ...(leftTimers > 0 ? [`${leftTimers} timers still pending an hour after close()`] : []),
    ...(leftBodies > 0 ? [`${leftBodies} response bodies still open after close()`] : []),
    ...errors,
  ],
}

/**
 * The faulty server modes an invariant does not hold under, by design (docs/simulation.md#what-a-faulty-server-breaks):
 * `cursor-per-session` re-emits nothing on attach, so a request whose stream was lost is lost with it.
 */
const exempt: Partial<Record<InvariantName, readonly string[]>> = {
  'no server request lost': ['cursor-per-session'],
}

/** Every invariant the ledger breaks. */
export function check(ledger: Ledger, only: readonly InvariantName[] = invariantNames): Violation[] {
  const mode = ledger.schedule.server === 'reference' ? ledger.schedule.mode : 'correct'
  return only
    .filter((name) => !(exempt[name] ?? []).includes(mode))
    .flatMap((invariant) => checks[invariant](ledger).map((detail) => ({invariant, detail})))
}
