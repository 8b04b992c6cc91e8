/**
 * Client processes on a `FileStore`, one per slot: each is killed (SIGKILL) on the chaos's command and a new
 * one started on the same file, which picks the session, the streams and the unanswered server requests up.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {sleep, type Report} from './agent.ts'
import type {Ledger} from './ledger.ts'
import type {Random} from './random.ts'

interface Slot {
  index: number
  life: number
  process: ChildProcess | undefined
  exited: Promise<void>
  /** Calls started by the live process and not settled yet. */
  open: Set<string>
  sessionId: string | undefined
}

export class Children {
  readonly #slots: Slot[]
  readonly #entry: string
  readonly #url: string
  readonly #directory: string
  readonly #random: Random
  readonly #ledger: Ledger
  readonly #trace: boolean
  /** No more calls and no more kills; a killed process is still followed by the next (it has answers to give). */
  #stopping = false
  #closing = false

  constructor(options: {
    count: number
    entry: string
    url: string
    directory: string
    random: Random
    ledger: Ledger
    trace: boolean
  }) {
    this.#trace = options.trace
    this.#entry = options.entry
    this.#url = options.url
    this.#directory = options.directory
    this.#random = options.random
    this.#ledger = options.ledger
    this.#slots = Array.from({length: options.count}, (_, index) => ({
      index,
      life: 0,
      process: undefined,
      exited: Promise.resolve(),
      open: new Set<string>(),
      sessionId: undefined,
    }))
  }

  start(): void {
    for (const slot of this.#slots) this.#spawn(slot)
  }

  sessions(): string[] {
    return this.#slots.flatMap((slot) => (slot.sessionId === undefined ? [] : [slot.sessionId]))
  }

  /**
   * Kills one process (SIGKILL), one with a call open if there is one, and starts the next one on its file a
   * little later.
   */
  kill(): boolean {
    if (this.#stopping) return false
    const live = this.#slots.filter((slot) => slot.process !== undefined)
    const busy = live.filter((slot) => slot.open.size > 0)
    const candidates = busy.length > 0 ? busy : live
    if (candidates.length === 0) return false
    const slot = candidates[this.#random.int(0, candidates.length - 1)]!
    const process = slot.process!
    slot.process = undefined
    process.kill('SIGKILL')
    this.#ledger.killed(slot.open)
    slot.open.clear()
    const delay = this.#random.int(20, 300)
    void slot.exited.then(async () => {
      await sleep(delay)
      if (!this.#closing) this.#spawn(slot)
    })
    return true
  }

  /** Every process stops starting calls (and no process is killed any more). */
  stopCalling(): void {
    this.#stopping = true
    for (const slot of this.#slots) slot.process?.stdin?.write('stop\n')
  }

  /** Ends every process's stdin: each stops starting calls, waits for its own and exits; killed after `boundMs`. */
  async stop(boundMs: number): Promise<void> {
    this.#stopping = true
    this.#closing = true
    await Promise.all(
      this.#slots.map(async (slot) => {
        const process = slot.process
        if (process === undefined) return
        process.stdin?.end()
        const exited = await Promise.race([slot.exited.then(() => true), sleep(boundMs).then(() => false)])
        if (!exited) {
          process.kill('SIGKILL')
          await slot.exited
        }
      }),
    )
  }

  #spawn(slot: Slot): void {
    const life = ++slot.life
    const args = {
      url: this.#url,
      file: join(this.#directory, `client-${slot.index}.json`),
      seed: this.#random.int(0, 2 ** 31),
      prefix: `k${slot.index}.${life}-`,
      concurrency: 2,
      trace: this.#trace,
    }
    const child = spawn(process.execPath, [this.#entry, JSON.stringify(args)], {stdio: ['pipe', 'pipe', 'inherit']})
    child.stdin.on('error', () => {}) // a killed process's stdin
    if (this.#stopping) child.stdin.write('stop\n')
    slot.process = child
    slot.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    const owner = `k${slot.index}.${life}`
    createInterface({input: child.stdout}).on('line', (line) => {
      if (slot.process !== child) return // a killed process's last words: its calls are counted as killed
      let report: Report
      try {
        report = JSON.parse(line) as Report
      } catch {
        return
      }
      if (report.t === 'ready') slot.sessionId = report.sessionId
      if (report.t === 'start') slot.open.add(report.callId)
      if (report.t === 'settled') slot.open.delete(report.callId)
      this.#ledger.record(owner, report)
    })
  }
}
