/**
 * The virtual clock: `setTimeout`, `setInterval`, `Date.now`, `performance.now` and `Math.random` of the whole
 * process, replaced while a schedule runs. Time moves only when nothing else can run: `run` lets every pending
 * microtask finish (one real `setImmediate`), then jumps to the next timer. The same schedule gives the same order
 * of timers, so the same run.
 */

/** A virtual timer: what `setTimeout` hands back here. Node's `ref`/`unref` do nothing on a virtual clock. */
export interface VirtualTimer {
  readonly id: number
  at: number
  readonly callback: () => void
  readonly every: number | undefined
  ref(): VirtualTimer
  unref(): VirtualTimer
  hasRef(): boolean
  [Symbol.toPrimitive](): number
}

/** The wall-clock time a schedule starts at (2027-01-15): fixed, so that IDs made of `Date.now()` repeat. */
export const epoch = 1_800_000_000_000

const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  dateNow: Date.now.bind(Date),
  performanceNow: performance.now.bind(performance),
  random: Math.random.bind(Math),
  dateNowItself: Date.now,
  randomItself: Math.random,
  stackTraceLimit: Error.stackTraceLimit,
}

/** The real `setImmediate`, for what must wait outside virtual time (the runner's own yields). */
export const realSetImmediate = real.setImmediate

/** mulberry32: a seeded pseudo-random source in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const drained = (): Promise<void> => new Promise((resolve) => real.setImmediate(resolve))

export class VirtualClock {
  now = epoch
  /** Pending timers, by due time then creation: a small sorted array beats a heap at these sizes. */
  readonly #timers: VirtualTimer[] = []
  #nextId = 1
  #random: () => number = seededRandom(0)

  /** Timers still pending. */
  get pending(): number {
    return this.#timers.length
  }

  /** Starts a schedule: time back at {@link epoch}, no timer, randomness from `seed`. */
  reset(seed: number): void {
    this.now = epoch
    this.#timers.length = 0
    this.#nextId = 1
    this.#random = seededRandom(seed)
  }

  random(): number {
    return this.#random()
  }

  schedule(callback: () => void, ms: number | undefined, every?: number): VirtualTimer {
    const delay = Math.max(0, Math.floor(Number(ms) || 0))
    const timer: VirtualTimer = {
      id: this.#nextId++,
      at: this.now + delay,
      callback,
      every: every === undefined ? undefined : Math.max(1, delay),
      ref: () => timer,
      unref: () => timer,
      hasRef: () => true,
      [Symbol.toPrimitive]: () => timer.id,
    }
    this.#insert(timer)
    return timer
  }

  cancel(timer: unknown): void {
    const index = this.#timers.indexOf(timer as VirtualTimer)
    if (index !== -1) this.#timers.splice(index, 1)
  }

  /**
   * Runs until `done()` holds or no timer is due before `until`: microtasks first, then the earliest timer.
   * Resolves the virtual time it stopped at.
   */
  async run(until: number, done: () => boolean = () => false): Promise<number> {
    for (;;) {
      await drained()
      if (done()) return this.now
      const next = this.#timers[0]
      if (next === undefined || next.at > until) return this.now
      this.#timers.shift()
      this.now = Math.max(this.now, next.at)
      if (next.every !== undefined) {
        next.at = this.now + next.every
        this.#insert(next)
      }
      next.callback()
    }
  }

  #insert(timer: VirtualTimer): void {
    const timers = this.#timers
    let index = timers.length
    while (index > 0 && timers[index - 1]!.at > timer.at) index--
    timers.splice(index, 0, timer)
  }
}

/**
 * Puts `clock` in place of the process's timers, `Date.now`, `performance.now` and `Math.random` (p-retry's jitter
 * and the transport's first backoff draw from it), and turns stack traces off. A simulation owns its process (or
 * worker) while it runs; {@link uninstallClock} gives the originals back.
 */
export function installClock(clock: VirtualClock): void {
  const timeout = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): VirtualTimer =>
    clock.schedule(() => callback(...args), ms)
  const interval = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): VirtualTimer =>
    clock.schedule(() => callback(...args), ms, ms ?? 1)
  const cancel = (timer: unknown): void => clock.cancel(timer)
  Object.assign(globalThis, {
    setTimeout: timeout,
    setInterval: interval,
    clearTimeout: cancel,
    clearInterval: cancel,
  })
  // Errors are data here: capturing their stacks (DOMException's above all) was a tenth of the time.
  Error.stackTraceLimit = 0
  Date.now = () => clock.now
  performance.now = () => clock.now - epoch
  Math.random = () => clock.random()
  const bytes = (array: Uint8Array): Uint8Array => {
    for (let index = 0; index < array.length; index++) array[index] = Math.floor(clock.random() * 256)
    return array
  }
  Object.defineProperty(globalThis.crypto, 'getRandomValues', {
    value: <T extends ArrayBufferView | null>(array: T): T => {
      if (array !== null) bytes(new Uint8Array(array.buffer, array.byteOffset, array.byteLength))
      return array
    },
    configurable: true,
  })
  Object.defineProperty(globalThis.crypto, 'randomUUID', {
    value: (): string => {
      const hex = Array.from(bytes(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
    },
    configurable: true,
  })
}

/** Puts back what {@link installClock} replaced. */
export function uninstallClock(): void {
  Object.assign(globalThis, {
    setTimeout: real.setTimeout,
    setInterval: real.setInterval,
    clearTimeout: real.clearTimeout,
    clearInterval: real.clearInterval,
  })
  Error.stackTraceLimit = real.stackTraceLimit
  Date.now = real.dateNowItself
  Reflect.deleteProperty(performance, 'now')
  Math.random = real.randomItself
  // The own properties installClock put on these instances shadow their prototypes': deleting them brings those back.
  Reflect.deleteProperty(globalThis.crypto, 'getRandomValues')
  Reflect.deleteProperty(globalThis.crypto, 'randomUUID')
}

/** What the clock replaced, for a runner that must measure real time. */
export const realTime = {now: real.dateNow, performanceNow: real.performanceNow}
