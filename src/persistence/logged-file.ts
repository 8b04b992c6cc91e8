/// <reference types="node" />
import {closeSync, openSync, unlinkSync, writeFileSync} from 'node:fs'
import {open, readFile, stat} from 'node:fs/promises'
import {flushToDisk, replaceFile} from './atomic-file.ts'
import {errorCode} from './file-lock.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'

/*
 * FileStore's data on disk: a snapshot of every key, replaced atomically, and a log of the changes since, one
 * line per write, appended and flushed, so that a write costs what changed rather than the size of the file. The
 * log is folded into a new snapshot once it outgrows the snapshot (or 64 KiB): each byte of the snapshot is
 * written again only after as many bytes of changes, so a write costs at most a constant times what it changed.
 * The log's file keeps the name it has always had on disk, `<path>.journal`.
 *
 *     <path>            {"key": value, ...}
 *     <path>.journal    [["key", value], ["deleted key"], ...]\n     one line per write
 *
 * Crash-safe at every step: a write is one line, and a torn last line (a writer killed mid-append) is ignored, so a
 * write lands whole or not at all (its fence check and its changes together); the next write under the lock folds
 * the log away. A compaction renames the new snapshot over the old before it removes the log, and
 * replaying a log over the snapshot made from it changes nothing.
 */

/** The log is folded into the snapshot past the snapshot's size, and never below this. */
const minLogBytes = 64 * 1024
/** A read without the lock that kept meeting another writer's compaction gives up after this many tries. */
const maxReadAttempts = 10

/** The entries as this instance last read or wrote them under the lock, and where the files then stood. */
interface Image {
  readonly entries: Map<string, JsonValue>
  /** The snapshot's inode, size and mtime: another writer's compaction changes them. `none`: no snapshot. */
  snapshot: string
  snapshotBytes: number
  /** Bytes of whole log lines applied to {@link entries}. */
  logBytes: number
  /** The snapshot is missing or damaged, or the log holds a damaged or torn line: the next write replaces both. */
  rewrite: boolean
}

/** One change of a log line: a key and its new value, or the key alone when it was deleted. */
type Change = [key: string, value: JsonValue] | [key: string]

export class LoggedFile {
  readonly #path: string
  readonly #log: string
  readonly #onError: (error: Error) => void
  #image: Image | undefined

  constructor(path: string, onError: (error: Error) => void) {
    this.#path = path
    this.#log = `${path}.journal`
    this.#onError = onError
  }

  /**
   * The entries, read without the lock: the snapshot, then the log, read again when another writer replaced
   * the snapshot meanwhile. Unparseable content is reported and skipped; an I/O error is thrown.
   */
  async read(): Promise<Map<string, JsonValue>> {
    return (await this.#readAll(false)).entries
  }

  /**
   * Under the lock: the entries to change and write. Only the log lines appended since this instance's last
   * read or write under the lock are read, unless another writer replaced the snapshot since.
   */
  async readLocked(): Promise<Map<string, JsonValue>> {
    const image = this.#image
    if (image !== undefined && (await identity(this.#path)) === image.snapshot && (await this.#readAppended(image)))
      return image.entries
    this.#image = await this.#readAll(true)
    return this.#image.entries
  }

  /** A write failed: the entries held may differ from the files, which are read whole next time. */
  forget(): void {
    this.#image = undefined
  }

  /**
   * Under the lock, after {@link readLocked}: makes the current values of `keys` durable (a key missing from the
   * entries is deleted). Appended to the log, or folded with it into a new snapshot when it has grown too long.
   */
  async write(keys: Iterable<string>): Promise<void> {
    const image = this.#image
    // Stryker disable next-line ConditionalExpression,StringLiteral: FileStore writes only after readLocked
    if (image === undefined) throw new Error('FileStore: a write without reading the file under its lock')
    const changes: Change[] = []
    for (const key of keys) {
      const value = image.entries.get(key)
      changes.push(value === undefined ? [key] : [key, value])
    }
    if (changes.length === 0) return
    const line = `${JSON.stringify(changes)}\n`
    const bytes = Buffer.byteLength(line)
    if (image.rewrite || image.logBytes + bytes > Math.max(minLogBytes, image.snapshotBytes)) {
      await this.#compact(image)
      return
    }
    await append(this.#log, line)
    image.logBytes += bytes
  }

  async #compact(image: Image): Promise<void> {
    const text = JSON.stringify(Object.fromEntries(image.entries))
    await replaceFile(this.#path, text)
    // After the rename: a crash in between leaves a log whose replay over the new snapshot changes nothing.
    try {
      unlinkSync(this.#log)
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error
    }
    image.snapshot = await identity(this.#path)
    image.snapshotBytes = Buffer.byteLength(text)
    image.logBytes = 0
    image.rewrite = false
  }

  async #readAll(forWrite: boolean): Promise<Image> {
    for (let attempt = 1; ; attempt++) {
      const before = await identity(this.#path)
      // Stryker disable next-line StringLiteral: a Buffer reads as UTF-8 all the same
      const text = await readOrNone(this.#path, 'utf8')
      const log = await readOrNone(this.#log)
      // Replaced meanwhile by another writer's compaction: this log may not follow this snapshot.
      if ((await identity(this.#path)) === before) return this.#parse(before, text, log, forWrite)
      if (attempt === maxReadAttempts) throw new Error(`FileStore: ${this.#path} kept being replaced while it was read`)
    }
  }

  #parse(snapshot: string, text: string | undefined, log: Buffer | undefined, forWrite: boolean): Image {
    const image: Image = {entries: new Map(), snapshot, snapshotBytes: 0, logBytes: 0, rewrite: text === undefined}
    if (text !== undefined) {
      image.snapshotBytes = Buffer.byteLength(text)
      const problem = this.#parseSnapshot(image.entries, text)
      if (problem !== undefined) {
        image.rewrite = true
        const effect = forWrite ? 'it is being replaced' : 'it is read as empty until the next write replaces it'
        this.#onError(new Error(`FileStore: ${this.#path} ${problem.what}; ${effect}`, {cause: problem.cause}))
      }
    }
    if (log !== undefined) this.#replay(image, log, forWrite)
    return image
  }

  /** Fills `entries` from the snapshot's text; what is wrong with it, if anything (the entries then stay empty). */
  #parseSnapshot(entries: Map<string, JsonValue>, text: string): {what: string; cause?: unknown} | undefined {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (cause) {
      return {what: 'is not valid JSON', cause}
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return {what: 'does not hold a JSON object'}
    // A Map, so that a key such as `__proto__` is data, never a prototype.
    for (const [key, value] of Object.entries(parsed as {[key: string]: JsonValue})) entries.set(key, value)
    return undefined
  }

  /** Applies the whole lines of `bytes`, log content that follows what `image` holds. */
  #replay(image: Image, bytes: Buffer, forWrite: boolean): void {
    const end = bytes.lastIndexOf(0x0a) + 1
    // A torn last line: a writer killed mid-append, or (read without the lock) one appending now. Left out; under
    // the lock, the next write folds the log into a new snapshot, which removes it.
    if (end < bytes.length && forWrite) image.rewrite = true
    for (const line of bytes.toString('utf8', 0, end).split('\n')) {
      if (line === '') continue
      const changes = parseLine(line)
      if (changes === undefined) {
        image.rewrite = true
        this.#onError(new Error(`FileStore: ${this.#log} holds a line that is not a list of changes; it is skipped`))
        continue
      }
      for (const [key, value] of changes) {
        if (value === undefined) image.entries.delete(key)
        else image.entries.set(key, value)
      }
    }
    image.logBytes += end
  }

  /** Applies the log lines appended since `image`; false when the log is not the one `image` followed. */
  async #readAppended(image: Image): Promise<boolean> {
    let handle
    try {
      handle = await open(this.#log, 'r')
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return image.logBytes === 0
      throw error
    }
    try {
      const {size} = await handle.stat()
      if (size < image.logBytes) return false
      // Nothing appended since: no read at all (this runs per write).
      if (size === image.logBytes) return true
      // Stryker disable next-line ArithmeticOperator: read only as far as the file goes (bytesRead)
      const bytes = Buffer.alloc(size - image.logBytes)
      const {bytesRead} = await handle.read(bytes, 0, bytes.length, image.logBytes)
      this.#replay(image, bytes.subarray(0, bytesRead), true)
      return true
    } finally {
      await handle.close()
    }
  }
}

/** Appends `text` to `path` (created with mode 0600) and flushes it to disk. */
async function append(path: string, text: string): Promise<void> {
  const fd = openSync(path, 'a', 0o600)
  try {
    writeFileSync(fd, text)
    await flushToDisk(fd)
  } finally {
    closeSync(fd)
  }
}

/** Tells one version of the file from another: a rename or a rewrite changes it. `none`: there is no file. */
async function identity(path: string): Promise<string> {
  try {
    const {ino, size, mtimeNs} = await stat(path, {bigint: true})
    return `${String(ino)}:${String(size)}:${String(mtimeNs)}`
  } catch (error) {
    // Stryker disable next-line StringLiteral: a mark compared only with itself
    if (errorCode(error) === 'ENOENT') return 'none'
    throw error
  }
}

function readOrNone(path: string): Promise<Buffer | undefined>
function readOrNone(path: string, encoding: 'utf8'): Promise<string | undefined>
async function readOrNone(path: string, encoding?: 'utf8'): Promise<Buffer | string | undefined> {
  try {
    return await readFile(path, encoding)
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined
    throw error
  }
}

/** The changes of one log line; undefined when it is not a list of `[key, value]` and `[key]`. */
function parseLine(line: string): [string, JsonValue | undefined][] | undefined {
  let changes: unknown
  try {
    changes = JSON.parse(line)
    // Stryker disable next-line BlockStatement: changes stays undefined, which the next line refuses
  } catch {
    return undefined
  }
  if (!Array.isArray(changes)) return undefined
  const valid = changes.every(
    (change) => Array.isArray(change) && typeof change[0] === 'string' && (change.length === 1 || change.length === 2),
  )
  return valid ? (changes as [string, JsonValue | undefined][]) : undefined
}
