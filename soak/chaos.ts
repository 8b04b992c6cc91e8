/**
 * The seeded fault schedule: every few hundred milliseconds one fault, drawn by weight, hits the wire or the
 * server. Each fault made is written down with when it acted and whom it hit, so that every `outcome-unknown`
 * can be put next to the fault that caused it.
 */
import {afterHeaders} from '../test/fixtures/tcp-proxy.ts'
import {sleep} from './agent.ts'
import type {Random} from './random.ts'
import type {SoakServer} from './server.ts'

/**
 * - `cut-before-first-event`: a `tools/call` POST cut before its stream's first event ID reached the client
 *   (nothing to resume from: `outcome-unknown` is unavoidable);
 * - `cut-after-first-event`, `cut-resume` (a GET with `Last-Event-ID`), `cut-get`, `cut-any`: cuts at a random
 *   byte offset, after which the stream can be resumed;
 * - `close-with-retry`: the server ends a POST stream after a few events, with `retry` (a polling server);
 * - `burst-get`, `burst-call`, `burst-post`: 429 and 5xx answers with `Retry-After` to the next GETs, the next
 *   `tools/call` POSTs, or the next POST of any kind (answers to server requests included);
 * - `restart-kept`: the server process down for under a second, its sessions and event log kept;
 * - `outage`: connections refused for longer than the fast retry window;
 * - `restart-lost`: the server loses every session; `session-expired`: one session garbage-collected;
 * - `drop-all`: every connection cut at once; `kill`: a client process killed (SIGKILL) and restarted.
 */
export type FaultKind =
  | 'cut-before-first-event'
  | 'cut-after-first-event'
  | 'cut-resume'
  | 'cut-get'
  | 'cut-any'
  | 'close-with-retry'
  | 'burst-get'
  | 'burst-call'
  | 'burst-post'
  | 'restart-kept'
  | 'outage'
  | 'restart-lost'
  | 'session-expired'
  | 'drop-all'
  | 'kill'

export interface Fault {
  kind: FaultKind
  /** When it started and ended acting (ms since the epoch). */
  from: number
  until: number
  /** The call whose POST was cut, the session expired. */
  callId?: string | undefined
  sessionId?: string | undefined
}

/** How long the server stays away: a restart, and an outage beyond the clients' fast retries (about 2 s). */
export const restartMs = [100, 700] as const
export const outageMs = [3_000, 5_000] as const

export interface ChaosTargets {
  server: SoakServer
  /** The live sessions of the clients, to garbage-collect one. */
  sessions: () => string[]
  /** Kills a client process and starts it again; false when there is none. */
  kill: () => boolean
}

export class Chaos {
  readonly faults: Fault[] = []
  readonly #random: Random
  readonly #targets: ChaosTargets
  readonly #armed = new Set<Fault>()
  #stopped = false
  #running: Promise<void> | undefined

  constructor(random: Random, targets: ChaosTargets) {
    this.#random = random
    this.#targets = targets
  }

  start(): void {
    this.#running = this.#loop()
  }

  /** Stops drawing faults and brings the server and the network back. */
  async stop(): Promise<void> {
    this.#stopped = true
    await this.#running
    const {server} = this.#targets
    server.reference.faults.clear()
    this.#taken()
    await server.up()
    await server.proxyUp()
  }

  async #loop(): Promise<void> {
    for (;;) {
      await sleep(this.#random.int(100, 400))
      this.#taken()
      if (this.#stopped) return
      await this.#one()
    }
  }

  /**
   * Writes down a one-shot fault of the server, which acts when a request takes it, maybe long after: it is
   * taken to act until it is no longer armed. Returns the tag that finds it among the armed ones.
   */
  #arm(kind: FaultKind): {soakFault: Fault} {
    const fault: Fault = {kind, from: Date.now(), until: Number.POSITIVE_INFINITY}
    this.faults.push(fault)
    this.#armed.add(fault)
    return {soakFault: fault}
  }

  /** Closes the window of every one-shot fault taken since the last look. */
  #taken(): void {
    const {cuts, failures} = this.#targets.server.reference.faults.armed
    const still = new Set([...cuts, ...failures].map((fault) => (fault as {soakFault?: Fault}).soakFault))
    for (const fault of this.#armed) {
      if (still.has(fault)) continue
      fault.until = Date.now()
      this.#armed.delete(fault)
    }
  }

  async #one(): Promise<void> {
    const random = this.#random
    const {server, sessions} = this.#targets
    const faults = server.reference.faults
    const now = Date.now()
    const note = (kind: FaultKind, extra: Partial<Fault> = {}): void => {
      this.faults.push({kind, from: now, until: Date.now(), ...extra})
    }
    const roll = random.next() * 100
    if (roll < 34) {
      this.#cut()
      return
    }
    if (roll < 42) {
      const tag = this.#arm('close-with-retry')
      faults.cutNext(
        Object.assign(
          {after: random.int(1, 4), how: 'close' as const, retryMs: random.int(20, 300), on: 'POST' as const},
          tag,
        ),
      )
      return
    }
    if (roll < 60) {
      const status = [429, 500, 502, 503][random.int(0, 3)]!
      const kind = roll < 52 ? 'burst-get' : roll < 57 ? 'burst-call' : 'burst-post'
      const count = random.int(1, kind === 'burst-get' ? 5 : 2)
      const tag = this.#arm(kind)
      for (let i = 0; i < count; i++) {
        if (kind === 'burst-get') faults.failNext(Object.assign({method: 'GET' as const, status}, tag))
        else
          faults.failNext(
            Object.assign(
              {method: 'POST' as const, status, rpcMethod: kind === 'burst-call' ? 'tools/call' : undefined},
              tag,
            ),
          )
      }
      return
    }
    if (roll < 67.5) {
      // The server process restarts (its sockets reset, state kept), or the network refuses every connection.
      const outage = roll >= 66
      await (outage ? server.proxyDown() : server.down())
      const [shortest, longest] = outage ? outageMs : restartMs
      await sleep(random.int(shortest, longest))
      await (outage ? server.proxyUp() : server.up())
      note(outage ? 'outage' : 'restart-kept')
      return
    }
    if (roll < 69) {
      faults.restart()
      note('restart-lost')
      return
    }
    if (roll < 75) {
      const live = sessions().filter((id) => server.reference.sessions().some((session) => session.id === id))
      if (live.length === 0) return
      const sessionId = live[random.int(0, live.length - 1)]!
      faults.expireSession(sessionId)
      note('session-expired', {sessionId})
      return
    }
    if (roll < 79) {
      server.proxy?.cutAll()
      note('drop-all')
      return
    }
    if (roll < 90 && this.#targets.kill()) note('kill')
  }

  /** Arms a TCP cut at a random byte offset of the next matching connection; written down once it happens. */
  #cut(): void {
    const proxy = this.#targets.server.proxy
    if (proxy === undefined) return
    const random = this.#random
    const target = (['call', 'call', 'call', 'resume', 'resume', 'get', 'any'] as const)[random.int(0, 6)]!
    const offset = random.int(1, 1_200)
    let callId: string | undefined
    let kind: FaultKind = target === 'resume' ? 'cut-resume' : target === 'get' ? 'cut-get' : 'cut-any'
    void proxy
      .cutNext({
        request: (chunk) => {
          if (target === 'call') {
            callId = /"method":"tools\/call".*"callId":"([^"]+)"/.exec(chunk)?.[1]
            return callId !== undefined
          }
          if (target === 'resume') return chunk.startsWith('GET') && /\r\nlast-event-id:/i.test(chunk)
          return target === 'any' || chunk.startsWith('GET')
        },
        at: (received) => {
          if (received.length < offset) return undefined
          if (target === 'call')
            kind = firstEventBefore(received, offset) ? 'cut-after-first-event' : 'cut-before-first-event'
          return offset
        },
      })
      .then(() => {
        this.faults.push({kind, from: Date.now(), until: Date.now(), callId})
      })
  }
}

/** True when a whole event with an ID lies in the first `offset` bytes of a response (headers included). */
function firstEventBefore(received: string, offset: number): boolean {
  const text = received.slice(0, offset)
  const body = afterHeaders(text)
  if (body === undefined) return false
  const id = text.indexOf('\nid:', body - 1)
  return id >= 0 && text.indexOf('\n\n', id) >= 0
}
