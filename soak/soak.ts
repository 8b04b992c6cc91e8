/**
 * The soak: seeded chaos over real sockets on 127.0.0.1 against the reference server, with SDK Clients on
 * `ResumableHTTPClientTransport` in this process (`MemoryStore`) and in child processes that get killed
 * (`FileStore`). It stops drawing faults once `calls` calls have started or `minutes` have passed, lets the
 * run settle (every call settled, every server request answered, within `hangMs`), and returns its figures.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Agent, sleep} from './agent.ts'
import {Chaos} from './chaos.ts'
import {Children} from './children.ts'
import {Ledger, type SoakFigures} from './ledger.ts'
import {Random} from './random.ts'
import {RequestWatch} from './requests.ts'
import {SoakServer} from './server.ts'
import {Trace} from './trace.ts'

export interface SoakOptions {
  seed: number
  /** Stop starting calls after this many. */
  calls: number
  /** ... or after this long. */
  minutes: number
  /** Clients in this process, each with `concurrency` calls at a time. */
  clients: number
  concurrency: number
  /** Client processes killed and restarted (each with 2 calls at a time); 0 for none. */
  children: number
  /** The compiled `child.js`; needed when `children` > 0. */
  childEntry: string | undefined
  /** A call not settled this long after the run stopped is hung; the same bound waits for server requests. */
  hangMs: number
  /** Where to write the trace (see soak/trace.ts), if anywhere. */
  trace?: string | undefined
  /** Progress lines, e.g. to stderr. */
  log?: ((line: string) => void) | undefined
}

export async function runSoak(options: SoakOptions): Promise<SoakFigures> {
  const began = Date.now()
  const log = options.log ?? (() => {})
  const random = new Random(options.seed)
  const trace = options.trace === undefined ? undefined : new Trace(options.trace)
  const ledger = new Ledger(trace)
  const server = await SoakServer.start(trace)
  const directory = await mkdtemp(join(tmpdir(), 'mcp-soak-'))
  const agents: Agent[] = []
  const children =
    options.children > 0 && options.childEntry !== undefined
      ? new Children({
          count: options.children,
          entry: options.childEntry,
          url: server.url,
          directory,
          random: random.fork(),
          ledger,
          trace: trace !== undefined,
        })
      : undefined
  const deadline = began + options.minutes * 60_000
  const done = (): boolean => ledger.calls.size >= options.calls || Date.now() >= deadline
  const chaos = new Chaos(random.fork(), {
    server,
    sessions: () =>
      [...agents.map((agent) => agent.transport.sessionId), ...(children?.sessions() ?? [])].filter(
        (id) => id !== undefined,
      ),
    kill: () => children?.kill() ?? false,
  })
  try {
    const loops: Promise<void>[] = []
    for (let index = 0; index < options.clients; index++) {
      const agentRandom = random.fork()
      const agent = new Agent(server.url, {
        random: agentRandom,
        sink: (report) => ledger.record(`w${index}`, report),
        name: `soak-${index}`,
        trace: trace !== undefined,
      })
      agents.push(agent)
      await agent.connect()
      let next = 0
      for (let lane = 0; lane < options.concurrency; lane++) {
        loops.push(
          (async () => {
            while (!done()) {
              // A hung call must not stop its lane: it is counted at the end.
              const outcome = await Promise.race([
                agent.call(`w${index}-${next++}`),
                sleep(options.hangMs).then(() => 'hung'),
              ])
              // After a failure, an app waits a little before its next call.
              await sleep(outcome === 'result' ? agentRandom.int(0, 30) : agentRandom.int(100, 500))
            }
          })(),
        )
      }
    }
    children?.start()
    const requests = new RequestWatch(server, trace)
    chaos.start()
    const progress = setInterval(
      () =>
        log(`${ledger.calls.size} calls, ${chaos.faults.length} faults, ${Math.round((Date.now() - began) / 1000)} s`),
      10_000,
    )
    while (!done()) await sleep(100)
    clearInterval(progress)
    log('stopping the faults; settling')
    await chaos.stop()
    children?.stopCalling()
    await Promise.all(loops)
    const settleBy = Date.now() + options.hangMs
    const settled = (): boolean => ledger.unsettled() === 0 && server.reference.pendingRequests().length === 0
    // The client processes stay up until every call is settled and the server asks for nothing more.
    while (Date.now() < settleBy && !settled()) await sleep(100)
    await children?.stop(Math.max(1_000, settleBy - Date.now()))
    const lost = requests.stop()
    return ledger.figures({
      seed: options.seed,
      durationMs: Date.now() - began,
      faults: chaos.faults,
      runs: server.runs,
      answered: server.answered,
      callOf: (sessionId, requestId) => server.calls.get(`${sessionId} ${requestId}`),
      lost,
    })
  } finally {
    await Promise.all(agents.map((agent) => agent.close().catch(() => {})))
    await children?.stop(1_000)
    await server.close()
    await rm(directory, {recursive: true, force: true})
    for (const fault of chaos.faults)
      trace?.line(
        'chaos',
        `${fault.kind} ${fault.callId ?? fault.sessionId ?? ''} until +${fault.until - fault.from} ms`,
        fault.from,
      )
    await trace?.close()
  }
}
