/// <reference types="node" />
import {mkdir, unlink} from 'node:fs/promises'
import {dirname, resolve} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {acquireLease, fenceHolds, releaseLease, renewLease, type EntriesOperation} from './file-leases.ts'
import {FileLock, LOCK_RETRY_MAX_MS, temporaryFiles, type Lock} from './file-lock.ts'
import {LoggedFile} from './logged-file.ts'
import {checkTtl, LeaseLostError, type Fence, type Lease} from './lease.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import type {ResumptionStore} from './store.ts'

export interface FileStoreOptions {
  /**
   * Receives the problems the store handles without failing the call: a file that is unreadable, not JSON, or
   * not a JSON object (`get` then resolves `undefined` for every key, and the next write replaces the file), a
   * log line that is not a list of changes (skipped, and the next write replaces the log), and a lock
   * file that could not be removed.
   * @defaultValue none: such problems are handled silently
   */
  onError?: ((error: Error) => void) | undefined
  /**
   * How old a lock file may get before another writer breaks it. A lock whose process is dead on this host is
   * broken at once, whatever its age. A write holds the lock for a few milliseconds; back-to-back writes keep it
   * and keep it young, and look for waiting writers every quarter of this, or 50 ms if sooner.
   * @defaultValue `10_000`
   */
  staleLockMs?: number | undefined
  /**
   * Aborting it makes writes that wait for the lock, and every later write, reject with its reason. Reads go on.
   * @defaultValue none
   */
  signal?: AbortSignal | undefined
}

const REMOVED = Symbol('removed')
type Change = JsonValue | typeof REMOVED

/** Writes that have not started yet: later calls join it, so back-to-back writes cost one file write. */
interface Batch {
  readonly changes: Map<string, {change: Change; fence: Fence | undefined}>
  /** Lease operations, run under the lock after the changes. */
  readonly operations: EntriesOperation[]
  /** Keys whose change was refused: its fence was no longer the latest lease. */
  readonly refused: Set<string>
  readonly done: Promise<void>
}

/** The lock, kept across back-to-back writes, with the entries as written under it: nobody else wrote since. */
interface Hold extends Lock {
  readonly entries: Map<string, JsonValue>
  /** `Date.now()` past which the next write also looks for writers waiting for the lock. */
  checkAt: number
}

// How often a writer keeping the lock looks for others waiting for it: about how long they may wait.
const HOLD_CHECK_MS = 50
// How long a writer that gave the lock up to waiting ones stays away: past their retry pause, even one run late.
const STEP_ASIDE_MS = 2 * LOCK_RETRY_MAX_MS
// While writes of several keys keep coming, one flush to disk per this many ms at most: a flush costs the system far
// more than the line it writes, and a thousand streams' cursors then share a few flushes instead of taking one each.
const GATHER_MS = 5

/**
 * A {@link ResumptionStore} in a JSON file and its log of changes, so a Node process that restarts
 * finds its session and cursors again. Exported from `mcp-resumable-http/node`.
 *
 * - **A write costs what it changed:** it appends one line (the keys it set or deleted) to `<path>.journal` and
 *   flushes it to disk (fdatasync), however many keys the file holds. Once the log outgrows the file (or
 *   64 KiB), the next write folds it into a new `<path>`: a temporary file in the same directory, flushed, renamed
 *   over it, then the log removed. A reader, a crash or a power loss never sees a half write: a torn last line
 *   of the log is left out (on power loss the last write may be lost; the directory is not flushed, which
 *   would double the cost of a write). Only the flush is awaited; the other system calls are quick and synchronous
 *   on a local disk (on a network file system, each is a round trip the event loop waits for).
 * - **Several processes** may share the file, all of them on a version of this store with the log. Each write
 *   reads what others wrote since and applies its changes under a lock file (`<path>.lock`), so writers of
 *   different keys never lose each other's keys; for one key, the last writer wins. A lock left by a crashed
 *   process is broken (see {@link FileStoreOptions.staleLockMs}).
 * - **In one process**, writes are serialized, and those issued while a write is under way are coalesced into
 *   the next one. A write waits for the end of the turn of the event loop that issued it, and while writes of
 *   several keys keep coming, until 5 ms after the previous one ended: a thousand streams' cursors then share a
 *   few flushes instead of taking one each (the flush is what costs), for at most 5 ms more per write. A value is
 *   copied when `set` is called; `get` sees every earlier `set` and `delete` of this instance. A write issued
 *   before the event loop's next turn after the previous one keeps the lock and skips the re-read, so that a
 *   stream's back-to-back cursor writes cost a log line each. Such a writer looks for others waiting for the
 *   lock every 50 ms, and lets them go first. The lock is released at the next turn once writes stop, and at
 *   process exit.
 * - **A corrupt file** (or log line) is reported through {@link FileStoreOptions.onError}, never thrown at
 *   `get`, and replaced by the next write. A file that cannot be read for another reason (permissions, I/O) makes
 *   writes reject rather than replace what they could not read.
 *
 * The file and its log are created with mode 0600 (they hold session IDs), the directory with the parents it
 * lacks.
 *
 * @example
 * ```ts
 * import {FileStore} from 'mcp-resumable-http/node'
 * new ResumableHTTPClientTransport(url, {store: new FileStore('.mcp/resumption.json')})
 * ```
 */
export class FileStore implements ResumptionStore {
  readonly #path: string
  readonly #lock: FileLock
  readonly #file: LoggedFile
  readonly #onError: (error: Error) => void
  readonly #staleLockMs: number
  readonly #signal: AbortSignal | undefined
  #tail: Promise<void> = Promise.resolve()
  #next: Batch | undefined
  /** Until when (`Date.now()`) the next batch gathers writes: set when a write of several keys ends; see {@link #gather}. */
  #gatherUntil = 0
  #hold: Hold | undefined
  /** Set when writers were seen waiting for the lock: it is taken again only after they had their turn. */
  #stepAside = false
  #directoryReady = false

  /** @param path - the JSON file, resolved against the current directory now */
  constructor(path: string, options: FileStoreOptions = {}) {
    if (typeof path !== 'string' || path === '') throw new TypeError('FileStore: path must be a non-empty string')
    const {onError, staleLockMs = 10_000, signal} = options
    if (onError !== undefined && typeof onError !== 'function') {
      throw new TypeError('FileStore: options.onError must be a function')
    }
    if (!Number.isFinite(staleLockMs) || staleLockMs <= 0) {
      throw new TypeError('FileStore: options.staleLockMs must be a positive number')
    }
    this.#path = resolve(path)
    this.#onError = (error) => {
      try {
        // Stryker disable next-line OptionalChaining: the missing listener throws into the catch
        onError?.(error)
      } catch {
        // The listener's own bug must not fail the store call it observes.
      }
    }
    this.#staleLockMs = staleLockMs
    this.#signal = signal
    this.#file = new LoggedFile(this.#path, this.#onError)
    this.#lock = new FileLock(`${this.#path}.lock`, {
      staleMs: staleLockMs,
      pause: (ms) => this.#pause(ms),
      signal,
      onError: this.#onError,
    })
  }

  async get(key: string): Promise<JsonValue | undefined> {
    checkKey(key)
    return (await this.#read())?.get(key)
  }

  /** The keys that start with `prefix`, as the file holds them once this instance's earlier writes are done. */
  async list(prefix: string): Promise<string[]> {
    const entries = await this.#read()
    return [...(entries?.keys() ?? [])].filter((key) => key.startsWith(prefix))
  }

  /** The entries once this instance's earlier writes are done; undefined, reported, when the file is unreadable. */
  async #read(): Promise<Map<string, JsonValue> | undefined> {
    await this.#tail
    try {
      return await this.#file.read()
    } catch (error) {
      this.#onError(new Error(`FileStore: cannot read ${this.#path}`, {cause: error}))
      return undefined
    }
  }

  /** Resolves once the file holds `value` (or a later value written by another process). */
  async set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    checkKey(key)
    return this.#enqueue(key, copy(key, value), fence)
  }

  async delete(key: string, fence?: Fence): Promise<void> {
    checkKey(key)
    return this.#enqueue(key, REMOVED, fence)
  }

  /**
   * Leases are records of the file, taken under its lock (see file-leases.ts); one held by a process found dead
   * on this host is taken over at once, whatever its TTL.
   */
  async acquire(name: string, ttlMs: number): Promise<Lease | undefined> {
    checkTtl(ttlMs)
    // Left 0 when a live owner holds it.
    let token = 0
    const batch = this.#batch()
    batch.operations.push(acquireLease(name, ttlMs, (given) => (token = given)))
    await batch.done
    if (token === 0) return undefined
    return {
      token,
      renew: async () => {
        // Stryker disable next-line BooleanLiteral: renewLease's operation reports before the batch resolves
        let kept = false
        const batch = this.#batch()
        batch.operations.push(renewLease(name, token, ttlMs, (renewed) => (kept = renewed)))
        await batch.done
        return kept
      },
      release: () => {
        const batch = this.#batch()
        batch.operations.push(releaseLease(name, token))
        return batch.done
      },
    }
  }

  async #enqueue(key: string, change: Change, fence: Fence | undefined): Promise<void> {
    const batch = this.#batch()
    batch.changes.set(key, {change, fence})
    await batch.done
    if (batch.refused.has(key)) throw new LeaseLostError(fence!)
  }

  /** The batch that the next write will carry. */
  #batch(): Batch {
    if (this.#next === undefined) {
      const changes: Batch['changes'] = new Map()
      const operations: EntriesOperation[] = []
      const refused = new Set<string>()
      const done = this.#tail
        .then(() => this.#gather())
        .then(() => {
          this.#next = undefined
          return this.#write(changes, operations, refused)
        })
      this.#next = {changes, operations, refused, done}
      // A failed write rejects its own callers only; the next batch still runs.
      this.#tail = done.catch(() => {})
    }
    return this.#next
  }

  async #write(changes: Batch['changes'], operations: EntriesOperation[], refused: Set<string>): Promise<void> {
    let hold = this.#hold
    this.#hold = undefined
    let kept = false
    try {
      this.#signal?.throwIfAborted()
      if (!this.#directoryReady) {
        await mkdir(dirname(this.#path), {recursive: true})
        this.#directoryReady = true
        await this.#sweep()
      }
      // Kept young, a held lock is at most about half of staleLockMs old. Older, the process was suspended or its
      // event loop blocked, and another writer may have broken it as stale: it is given up (removed only if still
      // ours) and taken again.
      if (hold !== undefined && Date.now() - hold.freshAt > (this.#staleLockMs * 3) / 4) {
        const suspect = hold
        hold = undefined
        await suspect.release()
      }
      hold ??= await this.#acquire()
      const due = Date.now() >= hold.checkAt
      // Looked for while the write goes on: listing the directory takes less time than the flush to disk.
      const othersWaiting = due ? this.#othersWaiting() : undefined
      const {entries} = hold
      const written = new Set<string>()
      for (const [key, {change, fence}] of changes) {
        if (!fenceHolds(entries, fence)) refused.add(key)
        else if (change !== REMOVED) {
          entries.set(key, change)
          written.add(key)
        } else if (entries.delete(key)) written.add(key)
      }
      for (const operation of operations) {
        const key = operation(entries)
        if (key !== undefined) written.add(key)
      }
      await this.#file.write(written)
      this.#stepAside = (await othersWaiting) === true
      kept = !this.#stepAside
      if (kept && due) kept = await this.#refresh(hold)
    } catch (error) {
      // The entries may hold changes the file does not: read it whole next time.
      this.#file.forget()
      throw error
    } finally {
      this.#gatherUntil = changes.size + operations.length > 1 ? Date.now() + GATHER_MS : 0
      // A failed write gives the lock up too.
      if (kept) this.#keep(hold!)
      else await hold?.release()
    }
  }

  async #acquire(): Promise<Hold> {
    // Without this, a writer that never stops would take the lock back before a waiting one tries again. The write
    // that takes the lock sets #stepAside again from what it sees.
    if (this.#stepAside) await this.#pause(STEP_ASIDE_MS)
    const lock = await this.#lock.acquire()
    try {
      // Re-read under the lock: another process may have written other keys since our last read.
      const entries = await this.#file.readLocked()
      return {...lock, entries, checkAt: Date.now() + this.#holdCheckMs}
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  get #holdCheckMs(): number {
    return Math.min(HOLD_CHECK_MS, this.#staleLockMs / 4)
  }

  /** Schedules the next look for waiting writers, and keeps the held lock young; false when it cannot. */
  async #refresh(hold: Hold): Promise<boolean> {
    const now = Date.now()
    hold.checkAt = now + this.#holdCheckMs
    if (now - hold.freshAt < this.#staleLockMs / 4) return true
    // Gone, or not ours to touch: the lock is given up and taken again by the next write.
    if (!(await this.#lock.touch(now))) return false
    hold.freshAt = now
    return true
  }

  /**
   * Lets a batch gather writes before it starts: until the end of the turn that made it, so that the writes of
   * every callback in it (the cursors of many streams whose data arrived together) share one flush; and while
   * writes of several keys keep coming, until {@link GATHER_MS} after the previous write ended. One key's writes
   * never wait longer: they are coalesced already (one in flight, the next gathered meanwhile), and its writer may
   * be waiting for each.
   */
  #gather(): Promise<void> {
    const wait = this.#gatherUntil - Date.now()
    return new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)))
  }

  /** Keeps the lock for a write issued before the next turn of the event loop; releases it then otherwise. */
  #keep(hold: Hold): void {
    this.#hold = hold
    setImmediate(() => {
      // Taken by a write under way, which decides again when it ends. A write queued behind this one took it
      // already: a batch starts in the same run of reactions as the write before it ends, before this turn. A batch
      // waiting for the end of its turn will take it.
      // Stryker disable next-line ConditionalExpression: a guard: writes start only after this callback
      if (this.#hold !== hold || this.#next !== undefined) return
      this.#hold = undefined
      this.#tail = this.#tail.then(hold.release)
    })
  }

  // A writer killed between creating a temporary file (data or lock draft) and removing it leaves it behind.
  // Judged by age only: a live writer's temporary file lasts milliseconds, and its pid may be another host's.
  async #sweep(): Promise<void> {
    for (const {path, ageMs} of await temporaryFiles(this.#path)) {
      // Best effort: a leftover temporary file wastes space, nothing else; another writer may be removing it too.
      if (ageMs > this.#staleLockMs) await unlink(path).catch(() => {})
    }
  }

  /** True when another writer waits for the lock: its draft is there, kept young while it waits. */
  async #othersWaiting(): Promise<boolean> {
    const files = await temporaryFiles(this.#path)
    return files.some(({draft, ageMs}) => draft && ageMs <= this.#staleLockMs / 2)
  }

  /** Waits `ms`; rejects with the signal's reason when it aborts. */
  async #pause(ms: number): Promise<void> {
    // Stryker disable next-line BlockStatement: the lock's own check of the signal throws as well
    await sleep(ms, undefined, {signal: this.#signal}).catch((error: unknown) => {
      // Stryker disable next-line OptionalChaining: only an abort rejects the sleep
      this.#signal?.throwIfAborted()
      throw error
    })
  }
}

function checkKey(key: string): void {
  if (typeof key !== 'string') throw new TypeError('FileStore: a key must be a string')
}

// A copy taken now: a value the caller mutates before the write starts is stored as it was at the call.
function copy(key: string, value: JsonValue): JsonValue {
  const text = JSON.stringify(value) as string | undefined
  if (text === undefined) throw new TypeError(`FileStore: the value of ${key} is not JSON`)
  return JSON.parse(text) as JsonValue
}
