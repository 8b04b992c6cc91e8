/**
 * The store of the client processes: one `MemoryStore` that outlives them (what a disk would be), seen by each
 * process through its own wrapper, which adds the schedule's latency and failures and dies with the process. A
 * crash between two writes kills the process right after the write the schedule names.
 */
import {MemoryStore, type Fence, type JsonValue, type Lease, type ResumptionStore} from '../src/index.ts'

/** What one store operation suffers (the nth write of the schedule, over every process). */
export type StoreFault = {kind: 'fail'} | {kind: 'crash-after'}

/** The shared state: the records, the write count that picks each fault. */
export class Disk {
  readonly memory = new MemoryStore()
  writes = 0
  /** Writes failed by the schedule's faults. */
  failed = 0
  /** The schedule's store faults that were hit. */
  hit = 0

  readonly faults: ReadonlyMap<number, StoreFault>
  readonly latency: () => number

  constructor(faults: ReadonlyMap<number, StoreFault>, latency: () => number) {
    this.faults = faults
    this.latency = latency
  }
}

const dead = (): Error => new Error('the process is dead')

function later<T>(ms: number, run: () => Promise<T>): Promise<T> {
  return ms <= 0 ? run() : new Promise<void>((resolve) => setTimeout(resolve, ms)).then(run)
}

/** One process's view of the disk. */
export class ProcessStore implements ResumptionStore {
  readonly disk: Disk
  readonly isAlive: () => boolean
  /** Kills the process (a crash between two writes). */
  readonly crash: () => void

  constructor(disk: Disk, isAlive: () => boolean, crash: () => void) {
    this.disk = disk
    this.isAlive = isAlive
    this.crash = crash
  }

  #op<T>(run: () => Promise<T>): Promise<T> {
    return later(this.disk.latency(), () => (this.isAlive() ? run() : Promise.reject(dead())))
  }

  #write(run: () => Promise<void>): Promise<void> {
    return this.#op(async () => {
      const fault = this.disk.faults.get(++this.disk.writes)
      if (fault !== undefined) this.disk.hit++
      if (fault?.kind === 'fail') {
        this.disk.failed++
        throw new Error('the store failed a write')
      }
      await run()
      if (fault?.kind === 'crash-after') this.crash()
    })
  }

  get(key: string): Promise<JsonValue | undefined> {
    return this.#op(() => this.disk.memory.get(key))
  }

  set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    return this.#write(() => this.disk.memory.set(key, value, fence))
  }

  delete(key: string, fence?: Fence): Promise<void> {
    return this.#write(() => this.disk.memory.delete(key, fence))
  }

  list(prefix: string): Promise<string[]> {
    return this.#op(() => this.disk.memory.list(prefix))
  }

  /** A dead process renews and releases nothing: its lease runs out, as a killed one's does. */
  async acquire(name: string, ttlMs: number): Promise<Lease | undefined> {
    const lease = await this.#op(() => this.disk.memory.acquire(name, ttlMs))
    if (lease === undefined) return undefined
    return {
      token: lease.token,
      renew: () => this.#op(() => lease.renew()),
      release: () => this.#op(() => lease.release()),
    }
  }
}
