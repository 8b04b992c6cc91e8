/// <reference types="node" />
import {randomBytes} from 'node:crypto'
import {readFileSync, unlinkSync} from 'node:fs'
import {link, open, readdir, readFile, stat, unlink, utimes, writeFile, type FileHandle} from 'node:fs/promises'
import {hostname} from 'node:os'
import {basename, dirname, join} from 'node:path'

/**
 * The lock file a {@link FileStore} takes around each write (`<path>.lock`), so that several processes can share
 * one file: created exclusively with the owner's pid, host and a token inside, broken when its owner is dead on
 * this host or when it went unrefreshed longer than `staleMs`.
 */

interface LockOwner {
  pid: number
  host: string
  token: string
}

/** A lock taken, with when its mtime (by which others judge its age) was last set. */
export interface Lock {
  freshAt: number
  readonly release: () => Promise<void>
}

// A writer waiting for the lock tries again after a random pause up to this long.
export const LOCK_RETRY_MAX_MS = 10
// Where hard links are missing, a lock file is created empty, then written: one still empty after this long lost
// its writer.
const EMPTY_LOCK_GRACE_MS = 1_000
// What link() fails with on file systems without hard links (FAT, some network shares).
const NO_HARD_LINKS = new Set<string | undefined>(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'])

export interface FileLockOptions {
  /** How old an unrefreshed lock may get before another writer breaks it. */
  staleMs: number
  /** Waits `ms`, rejecting when the store's signal aborts. */
  pause: (ms: number) => Promise<void>
  signal: AbortSignal | undefined
  onError: (error: Error) => void
}

export class FileLock {
  readonly #path: string
  readonly #staleMs: number
  readonly #pause: (ms: number) => Promise<void>
  readonly #signal: AbortSignal | undefined
  readonly #onError: (error: Error) => void

  constructor(path: string, {staleMs, pause, signal, onError}: FileLockOptions) {
    this.#path = path
    this.#staleMs = staleMs
    this.#pause = pause
    this.#signal = signal
    this.#onError = onError
  }

  /** Sets the lock's mtime to now, keeping it young; false when it is gone or not ours to touch. */
  async touch(now: number): Promise<boolean> {
    try {
      await utimes(this.#path, now / 1000, now / 1000)
      return true
    } catch {
      return false
    }
  }

  /** Takes `<path>.lock` (created exclusively), waiting for its holder or breaking it when stale. */
  async acquire(): Promise<Lock> {
    const owner: LockOwner = {pid: process.pid, host: ownHost(), token: randomBytes(8).toString('hex')}
    const content = JSON.stringify(owner)
    // The lock appears with its owner already in it, as a hard link to this complete draft: a writer killed at any
    // point leaves no lock, or one naming a dead process, never an empty one that only its age can break.
    const draft = `${this.#path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
    await writeFile(draft, content, {flag: 'wx', mode: 0o600})
    let draftAt = Date.now()
    try {
      for (;;) {
        this.#signal?.throwIfAborted()
        // The lock shares the draft's mtime, by which others judge its age: keep it young while we wait.
        if (Date.now() - draftAt > this.#staleMs / 4) {
          draftAt = Date.now()
          await utimes(draft, draftAt / 1000, draftAt / 1000)
        }
        if (await this.#tryLock(draft, content)) {
          heldLocks.set(owner.token, this.#path)
          removeHeldLocksAtExit()
          return {freshAt: draftAt, release: () => this.#unlock(owner.token)}
        }
        if (await this.#breakIfStale()) continue
        // Jittered, so that two waiting writers do not retry in step.
        await this.#pause(2 + Math.random() * (LOCK_RETRY_MAX_MS - 2))
      }
    } finally {
      await unlink(draft).catch(() => {})
    }
  }

  /** False when another writer holds the lock. link() and open('wx') both create exclusively (EEXIST). */
  async #tryLock(draft: string, content: string): Promise<boolean> {
    try {
      await link(draft, this.#path)
      return true
    } catch (error) {
      const code = errorCode(error)
      if (code === 'EEXIST') return false
      if (!NO_HARD_LINKS.has(code)) throw error
    }
    let handle: FileHandle
    try {
      handle = await open(this.#path, 'wx', 0o600)
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return false
      throw error
    }
    try {
      await handle.writeFile(content)
    } catch (error) {
      await unlink(this.#path).catch(() => {})
      throw error
    } finally {
      await handle.close()
    }
    return true
  }

  async #unlock(token: string): Promise<void> {
    heldLocks.delete(token)
    try {
      // Only our own lock: if ours was broken as stale, the file now belongs to another writer.
      // Stryker disable next-line StringLiteral: a Buffer parses as UTF-8 all the same
      if (parseLock(await readFile(this.#path, 'utf8'))?.token === token) await unlink(this.#path)
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return
      this.#onError(new Error(`FileStore: cannot remove the lock ${this.#path}`, {cause: error}))
    }
  }

  /** True when the lock is gone or was stale and removed: try again at once. */
  async #breakIfStale(): Promise<boolean> {
    let seen: Awaited<ReturnType<typeof stat>>
    let owner: LockOwner | undefined
    try {
      seen = await stat(this.#path)
      // Stryker disable next-line StringLiteral: a Buffer parses as UTF-8 all the same
      owner = parseLock(await readFile(this.#path, 'utf8'))
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return true
      throw error
    }
    const age = Date.now() - seen.mtimeMs
    const stale =
      age > this.#staleMs || (owner === undefined ? age > EMPTY_LOCK_GRACE_MS : foundDead(owner.pid, owner.host))
    if (!stale) return false
    // Remove only the lock we judged: another writer may have broken it and taken a new one meanwhile.
    const now = await stat(this.#path).catch(() => undefined)
    if (now?.ino !== seen.ino || now.mtimeMs !== seen.mtimeMs) return true
    await unlink(this.#path).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw error
    })
    return true
  }
}

/** The temporary files next to `path`: data files being written, and lock drafts (`.lock.<pid>.<hex>.tmp`). */
export async function temporaryFiles(path: string): Promise<{path: string; draft: boolean; ageMs: number}[]> {
  const directory = dirname(path)
  const prefix = `${basename(path)}.`
  const files = []
  // Stryker disable next-line ArrayDeclaration: a name not starting with the file's is skipped
  for (const name of await readdir(directory).catch(() => [])) {
    const match = name.startsWith(prefix) ? /^(lock\.)?\d+\.[0-9a-f]{12}\.tmp$/.exec(name.slice(prefix.length)) : null
    if (match === null) continue
    const file = join(directory, name)
    // Gone meanwhile: its writer finished.
    const seen = await stat(file).catch(() => undefined)
    if (seen !== undefined) files.push({path: file, draft: match[1] !== undefined, ageMs: Date.now() - seen.mtimeMs})
  }
  return files
}

/** The locks this process holds, by token: a hold outlives its write by a turn, and `process.exit()` may come first. */
const heldLocks = new Map<string, string>()
let exitHookInstalled = false

function removeHeldLocksAtExit(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  const removeHeld = (): void => {
    for (const [token, lockPath] of heldLocks) {
      try {
        // Stryker disable next-line StringLiteral,OptionalChaining: UTF-8 all the same; null lands in the catch
        if (parseLock(readFileSync(lockPath, 'utf8'))?.token === token) unlinkSync(lockPath)
      } catch {
        // Gone already, or unreadable: a lock naming a dead process is broken by the next writer anyway.
      }
    }
    heldLocks.clear()
  }
  process.once('exit', removeHeld)
  // Deno.exit() fires the global `unload` event, not the process's 'exit'; Node has no global addEventListener.
  ;(
    globalThis as {addEventListener?: (type: string, listener: () => void, options: {once: boolean}) => void}
  ).addEventListener?.('unload', removeHeld, {once: true})
}

function parseLock(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner> | null
    // Stryker disable next-line OptionalChaining: null throws into the catch, which returns undefined
    if (typeof value?.pid === 'number' && typeof value.host === 'string' && typeof value.token === 'string') {
      return {pid: value.pid, host: value.host, token: value.token}
    }
  } catch {
    // Empty (its writer is between create and write, or died there) or foreign: judged by age alone.
  }
  return undefined
}

/**
 * True only when process `pid` of `host` is known to be gone: `host` is this host and the system says there is
 * no such process (ESRCH). Anything else says it may live, and its lock or lease is judged by its age: EPERM (a
 * process of another user), and an error without a code (Deno without `--allow-run` throws `NotCapable`).
 */
export function foundDead(pid: number, host: string): boolean {
  const here = thisHost()
  if (here === undefined || host !== here) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return errorCode(error) === 'ESRCH'
  }
}

/** The host written into a lock or a lease: empty when this host's name cannot be read, which no host matches. */
export function ownHost(): string {
  return thisHost() ?? ''
}

// Process IDs are only comparable on one host: a lock from another host is judged by its age.
// null: the name cannot be read (Deno without `--allow-sys=hostname` throws) or is empty.
let host: string | null | undefined
function thisHost(): string | undefined {
  if (host === undefined) {
    try {
      host = hostname() || null
    } catch {
      host = null
    }
  }
  return host ?? undefined
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined
}
