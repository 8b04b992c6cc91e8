/**
 * One schedule's run: a server, the client processes (each an SDK `Client` on `ResumableHTTPClientTransport`, over
 * the simulated network and the process's view of the store), the calls and faults at their virtual times, then
 * close() and a wait for anything left running. What happened is kept in a {@link Ledger} for the invariants.
 */
import {Client as ClientV2} from '@modelcontextprotocol/client'
import {Client as ClientV1} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {isTransportError, ResumableHTTPClientTransport} from '../src/index.ts'
import {seededRandom, type VirtualClock} from './clock.ts'
import {Network, type Endpoint} from './network.ts'
import type {Schedule} from './schedule.ts'
import {noSchemas, referenceServer, sdkServer, type SimServer} from './servers.ts'
import {Disk, ProcessStore} from './store.ts'
import {Trace} from './trace.ts'

/** How long a call may take, in virtual time, before it counts as hung: the transport's bounds below, and room. */
export const settleBoundMs = 300_000
/** The transport options of every process: bounded outages, so that every call settles well within the bound. */
const reconnect = {minDelayMs: 100, maxDelayMs: 2_000, maxAttempts: 6, maxOutageMs: 60_000}
const resumeTimeoutMs = 10_000
/** Longer than the bound: a call that hangs is found by the bound, not ended by the SDK's timeout. */
const requestTimeout = 3_600_000

export interface CallRecord {
  key: string
  tool: string
  process: string
  startedAt: number
  settledAt: number | undefined
  outcome: string | undefined
  /** Its process died first: it can no longer settle. */
  abandoned: boolean
  progress: number[]
}

export interface Process {
  name: string
  endpoint: Endpoint
  transport: ResumableHTTPClientTransport
  close: () => Promise<void>
  /** When its close() resolved. */
  closedAt: number | undefined
  /** It died, rather than closed. */
  killed: boolean
}

export interface Ledger {
  schedule: Schedule
  trace: Trace
  server: SimServer
  calls: CallRecord[]
  /** Server requests handed to a Client's handler, by `session|id`: the process of each time. */
  handled: Map<string, string[]>
  processes: Process[]
  /** Server requests a tool asked and never saw end, in a session a live process still held at the end. */
  unended: {call: string; sessionId: string | undefined; process: string}[]
  /** After every process closed and the server with them: timers pending, bodies open. */
  leftTimers: number
  leftBodies: number
  /** The faults that hit: wire and store faults reached, server and client faults fired. */
  faults: number
  /** Store writes that failed: what a process could not record, its successor may do again. */
  storeFailures: number
  /** Errors the sim itself met (a Client that failed to connect, say): a finding too. */
  errors: string[]
  endedAt: number
}

const url = new URL('http://sim.test/mcp')
const sampling = {model: 'sim', role: 'assistant' as const, content: {type: 'text' as const, text: 'answer'}}

function outcomeOf(error: unknown): string {
  if (isTransportError(error)) return error.code
  const data = (error as {data?: {code?: unknown}} | undefined)?.data
  if (typeof data?.code === 'string') return data.code
  const code = (error as {code?: unknown} | undefined)?.code
  return typeof code === 'number' ? `jsonrpc ${code}` : 'error'
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export async function runSchedule(schedule: Schedule, clock: VirtualClock): Promise<Ledger> {
  clock.reset(schedule.seed)
  const random = seededRandom(schedule.seed ^ 0x5bd1e995)
  const trace = new Trace()
  const network: Network = new Network({
    handle: () => Promise.reject(new Error('no server')),
    faults: new Map(schedule.wire),
    random,
    latencyMs: schedule.latencyMs,
    trace,
  })
  const server =
    schedule.server === 'reference'
      ? referenceServer(schedule)
      : sdkServer({retryInterval: schedule.retryMs ?? 50, dropConnections: () => network.dropAll()})
  network.handle = server.handle
  const disk = new Disk(new Map(schedule.store), () => Math.floor(random() * (schedule.storeLatencyMs + 1)))
  const ledger: Ledger = {
    schedule,
    trace,
    server,
    calls: [],
    handled: new Map(),
    processes: [],
    unended: [],
    leftTimers: 0,
    leftBodies: 0,
    errors: [],
    endedAt: 0,
    storeFailures: 0,
    faults: 0,
  }

  let current: {process: Process; client: ClientV1 | ClientV2; ready: Promise<boolean>} | undefined
  let generation = 0
  let failedConnects = 0
  /** Set once the schedule is over and everything closes: no process starts after it. */
  let ending = false
  let reconnecting: Promise<void> | undefined

  const start = (): void => {
    if (ending) return
    const name = `c${++generation}`
    const endpoint: Endpoint = {name, alive: true, closed: false}
    const store = new ProcessStore(
      disk,
      () => endpoint.alive,
      () => kill(),
    )
    const transport = new ResumableHTTPClientTransport(url, {
      fetch: network.fetchFor(endpoint),
      store,
      reconnect,
      resumeTimeoutMs,
      ownership: 'wait',
      onEvent: (event) => trace.note(name, event),
    })
    const handled = (id: unknown): void => {
      const key = `${transport.sessionId ?? '-'}|${String(id)}`
      ledger.handled.set(key, [...(ledger.handled.get(key) ?? []), name])
      trace.note(name, `handles server request ${key}`)
    }
    let client: ClientV1 | ClientV2
    if (schedule.client === 'v1') {
      const v1 = new ClientV1(
        {name: 'sim', version: '1.0.0'},
        {capabilities: {sampling: {}}, jsonSchemaValidator: noSchemas},
      )
      v1.setRequestHandler(CreateMessageRequestSchema, (_request, extra) => {
        handled(extra.requestId)
        return sampling
      })
      client = v1
    } else {
      const v2 = new ClientV2(
        {name: 'sim', version: '2.0.0'},
        {capabilities: {sampling: {}}, jsonSchemaValidator: noSchemas},
      )
      v2.setRequestHandler('sampling/createMessage', (_request, ctx) => {
        handled(ctx.mcpReq.id)
        return sampling
      })
      client = v2
    }
    client.onerror = () => undefined
    const process: Process = {
      name,
      endpoint,
      transport,
      close: async () => {
        await client.close()
        process.closedAt = Date.now()
        endpoint.closed = true
      },
      closedAt: undefined,
      killed: false,
    }
    ledger.processes.push(process)
    const ready = client.connect(transport).then(
      () => true,
      (error: unknown) => {
        trace.note(name, `connect failed: ${outcomeOf(error)}`)
        // The app tries again a second later, with a new transport on the store.
        void sleep(1_000).then(async () => {
          if (current?.process !== process || !endpoint.alive || ++failedConnects > 5) return
          await process.close().catch(() => undefined)
          if (current.process === process) start()
        })
        return false
      },
    )
    current = {process, client, ready}
  }

  /** The current process dies (its calls abandoned), and a new one starts on the store. */
  const kill = (): void => {
    const dying = current
    if (dying === undefined || !dying.process.endpoint.alive) return
    trace.note(dying.process.name, 'killed')
    dying.process.killed = true
    network.kill(dying.process.endpoint)
    for (const call of ledger.calls)
      if (call.process === dying.process.name && call.settledAt === undefined) call.abandoned = true
    // Its timers die with it: close() stops them, and reaches nothing (its network and store are dead).
    void dying.process.close().catch(() => undefined)
    start()
  }

  const reconnectClient = (why: string): Promise<void> => {
    const closing = current
    if (closing === undefined || reconnecting !== undefined) return reconnecting ?? Promise.resolve()
    trace.note(closing.process.name, `the Client closes, to connect anew (${why})`)
    reconnecting = closing.process
      .close()
      .catch((error: unknown) => void ledger.errors.push(`close: ${outcomeOf(error)}`))
      .then(() => {
        reconnecting = undefined
        if (current === closing) start()
      })
    return reconnecting
  }

  const call = async (index: number): Promise<void> => {
    const spec = schedule.calls[index]!
    const key = `call${index + 1}`
    for (;;) {
      const at = current!
      if (!(await at.ready)) {
        if (at === current && failedConnects > 5) {
          trace.note(at.process.name, `${key} not made: no connection`)
          return
        }
        await sleep(1_000)
        continue
      }
      if (at !== current || !at.process.endpoint.alive) continue
      const record: CallRecord = {
        key,
        tool: spec.tool,
        process: at.process.name,
        startedAt: Date.now(),
        settledAt: undefined,
        outcome: undefined,
        abandoned: false,
        progress: [],
      }
      ledger.calls.push(record)
      const params = {
        name: spec.tool,
        arguments: {call: key, count: spec.count, steps: spec.steps, stepMs: spec.stepMs},
      }
      const options = {
        timeout: requestTimeout,
        onprogress: ({progress}: {progress: number}) => void record.progress.push(progress),
      }
      const settle = (outcome: string): void => {
        if (record.abandoned) return
        record.settledAt = Date.now()
        record.outcome = outcome
        trace.note(at.process.name, `${key} settled: ${outcome}`)
        // The app's answer to an ended session: a Client connected anew, which initializes a new one.
        if (outcome === 'session-expired' && at === current) void reconnectClient('its session expired')
      }
      trace.note(at.process.name, `${key} ${spec.tool} starts`)
      const result =
        at.client instanceof ClientV1
          ? at.client.callTool(params, undefined, options)
          : at.client.callTool(params, options)
      await result.then(
        (value) => settle(value.isError === true ? 'tool-error' : 'result'),
        (error: unknown) => settle(outcomeOf(error)),
      )
      return
    }
  }

  const scenario = async (): Promise<void> => {
    start()
    const tasks: Promise<void>[] = []
    const at = (ms: number, run: () => Promise<void> | void): void => {
      tasks.push(sleep(ms).then(run))
    }
    schedule.calls.forEach((spec, index) => at(spec.at, () => call(index)))
    for (const [ms, fault] of schedule.serverFaults)
      at(ms, () => {
        trace.note('server', `fault: ${fault}`)
        server.fault(fault)
      })
    for (const [ms, fault] of schedule.clientFaults)
      at(ms, () => (fault === 'kill' ? kill() : reconnectClient('the schedule says so')))
    await Promise.all(tasks)
  }

  const allSettled = (): boolean => ledger.calls.every((record) => record.abandoned || record.settledAt !== undefined)
  let scheduled = false
  void scenario().then(
    () => (scheduled = true),
    (error: unknown) => {
      ledger.errors.push(`scenario: ${String(error)}`)
      scheduled = true
    },
  )
  const lastStart = Math.max(0, ...schedule.calls.map((spec) => spec.at), ...schedule.clientFaults.map(([ms]) => ms))
  await clock.run(clock.now + lastStart + settleBoundMs * 2, () => scheduled && allSettled())
  // Room for answers and re-emissions still on their way, then: what did the server never see end?
  await clock.run(clock.now + 30_000)
  const live = current?.process
  for (const asked of server.asked) {
    if (asked.ended !== undefined || asked.sessionId === undefined) continue
    if (live?.endpoint.alive === true && live.transport.sessionId === asked.sessionId && server.live(asked.sessionId))
      ledger.unended.push({call: asked.call, sessionId: asked.sessionId, process: live.name})
  }
  ledger.endedAt = clock.now
  ledger.storeFailures = disk.failed
  ledger.faults =
    trace.wire.filter((wire) => wire.fault !== undefined).length +
    disk.hit +
    schedule.serverFaults.length +
    schedule.clientFaults.length
  // close(), the server after it; then whatever still runs is left behind.
  ending = true
  const closing = {done: false}
  void Promise.all(
    ledger.processes.filter((process) => process.closedAt === undefined).map((process) => process.close()),
  )
    .catch((error: unknown) => ledger.errors.push(`close: ${outcomeOf(error)}`))
    .then(() => server.close())
    .finally(() => (closing.done = true))
  await clock.run(clock.now + 60_000, () => closing.done)
  if (!closing.done) ledger.errors.push('close() did not resolve within 60 s')
  await clock.run(clock.now + 3_600_000)
  ledger.leftTimers = clock.pending
  ledger.leftBodies = network.openBodies
  return ledger
}
