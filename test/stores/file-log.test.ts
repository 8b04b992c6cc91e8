/**
 * Issue #18: FileStore's snapshot and log (src/persistence/logged-file.ts) in one process. What another process
 * does to the files (an append, a fold, a torn line) is done here by hand, between this instance's writes, once
 * its lock is free: the tests of test/stores/file-store.test.ts that run real processes are out of reach of the
 * mutation run.
 */
import {existsSync, readdirSync} from 'node:fs'
import {mkdtemp, readFile, rename, rm, stat, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {FileStore} from '../../src/node.ts'

/** An I/O error as Node gives it, for the faults below. */
const fault = vi.hoisted(
  () =>
    (path: unknown, syscall: string): Error =>
      Object.assign(new Error(`EIO: i/o error, ${syscall} '${String(path)}'`), {code: 'EIO', syscall}),
)

// The snapshot's identity as stat tells it: `replaced` makes it change at each of the next stats of `path`;
// `failed` makes the next stat of `path` fail. `reads` counts the reads of `path`; `open` fails the next opening of
// that path to read.
const statFaults = vi.hoisted(() => ({path: '', replaced: 0, stats: 0, failed: false, reads: 0, open: ''}))
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...actual,
    readFile: (...args: Parameters<typeof actual.readFile>) => {
      if (args[0] === statFaults.path) statFaults.reads++
      return actual.readFile(...args)
    },
    open: (...args: Parameters<typeof actual.open>) => {
      if (String(args[0]) !== statFaults.open) return actual.open(...args)
      statFaults.open = ''
      return Promise.reject(fault(args[0], 'open'))
    },
    stat: async (...args: Parameters<typeof actual.stat>) => {
      if (String(args[0]) === statFaults.path && statFaults.failed) {
        statFaults.failed = false
        throw fault(args[0], 'stat')
      }
      const stats = await actual.stat(...args)
      if (String(args[0]) !== statFaults.path || statFaults.replaced === 0) return stats
      statFaults.replaced--
      statFaults.stats++
      Object.defineProperty(stats, 'ino', {value: (stats.ino as bigint) + BigInt(statFaults.stats)})
      return stats
    },
  }
})

// Failures of the calls that write: the log's append (openSync) and its removal after a fold (unlinkSync).
const writeFaults = vi.hoisted(() => ({open: '', unlink: ''}))
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return {
    ...actual,
    openSync: (...args: Parameters<typeof actual.openSync>) => {
      if (String(args[0]) === writeFaults.open) throw fault(args[0], 'open')
      return actual.openSync(...args)
    },
    unlinkSync: (...args: Parameters<typeof actual.unlinkSync>) => {
      if (String(args[0]) === writeFaults.unlink) throw fault(args[0], 'unlink')
      actual.unlinkSync(...args)
    },
  }
})

let dir = ''
let file = ''

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-log-'))
  file = join(dir, 'resumption.json')
  Object.assign(statFaults, {path: '', replaced: 0, stats: 0, failed: false, reads: 0, open: ''})
  Object.assign(writeFaults, {open: '', unlink: ''})
})

afterEach(async () => {
  await rm(dir, {recursive: true, force: true})
})

async function lockReleased(): Promise<void> {
  await vi.waitFor(() => expect(existsSync(`${file}.lock`)).toBe(false))
}

/** A FileStore that wrote `entries` one by one (the first folds, the others append), its lock then free. */
async function wrote(entries: {[key: string]: number}): Promise<FileStore> {
  const store = new FileStore(file)
  for (const [key, value] of Object.entries(entries)) await store.set(key, value)
  await lockReleased()
  return store
}

/** Another process's fold, by hand: a new snapshot renamed over the file, the log removed. */
async function foldedByAnother(entries: object): Promise<void> {
  await writeFile(`${file}.other`, JSON.stringify(entries))
  await rename(`${file}.other`, file)
  await rm(`${file}.journal`, {force: true})
}

/** A value large enough that writing it folds the log into a new snapshot (past 64 KiB). */
const large = 'x'.repeat(70 * 1024)

describe('the snapshot and the log as another process leaves them', () => {
  it('a key another process folded into the file since this instance last wrote is kept when this instance folds', async () => {
    const store = await wrote({a: 1})
    await foldedByAnother({a: 1, theirs: 2})
    await store.set('large', large)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({a: 1, theirs: 2, large})
  })

  it('lines another process appended since this instance last wrote are applied before this instance folds', async () => {
    const store = await wrote({a: 1, b: 2})
    await new FileStore(file).set('theirs', 3)
    await lockReleased()
    await store.set('large', large)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({a: 1, b: 2, theirs: 3, large})
  })

  it('a log removed since this instance appended to it is not written back from memory: the file is read again', async () => {
    const store = await wrote({a: 1, gone: 2})
    await rm(`${file}.journal`)
    await store.set('large', large)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({a: 1, large})
  })

  it('a log cut shorter than this instance last saw it is read again whole, and the write lands', async () => {
    const store = await wrote({a: 1, b: 2, c: 3})
    const lines = (await readFile(`${file}.journal`, 'utf8')).split('\n')
    await writeFile(`${file}.journal`, `${lines[0]!}\n`)
    await store.set('d', 4)
    expect(await new FileStore(file).list('')).toEqual(['a', 'b', 'd'])
    await lockReleased()
    await store.set('large', large)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({a: 1, b: 2, d: 4, large})
  })

  it('writes of one instance, with or without lines of another process between them, read only the lines appended: never the snapshot again', async () => {
    const store = await wrote({a: 1})
    statFaults.path = file
    await store.set('b', 2)
    await lockReleased()
    await new FileStore(file).set('theirs', 3)
    await lockReleased()
    const reads = statFaults.reads
    await store.set('c', 4)
    await lockReleased()
    await store.set('d', 5)
    expect(statFaults.reads).toBe(reads)
    expect(await new FileStore(file).list('')).toEqual(['a', 'b', 'theirs', 'c', 'd'])
  })

  it('a log that cannot be opened to read fails the write under the lock', async () => {
    const store = await wrote({a: 1})
    statFaults.open = `${file}.journal`
    await expect(store.set('b', 2)).rejects.toMatchObject({code: 'EIO', syscall: 'open'})
  })

  it('a snapshot whose identity cannot be read fails the read, reported with its cause', async () => {
    await new FileStore(file).set('a', 1)
    await lockReleased()
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    Object.assign(statFaults, {path: file, failed: true})
    expect(await store.get('a')).toBeUndefined()
    expect(errors.map(({message, cause}) => [message, (cause as {code?: unknown}).code])).toEqual([
      [`FileStore: cannot read ${file}`, 'EIO'],
    ])
    expect(await store.get('a')).toBe(1)
  })

  it('a torn line another process left at the end of the log makes the next write fold, so that the write is not lost after it', async () => {
    const store = await wrote({a: 1, b: 2})
    await writeFile(`${file}.journal`, '[["torn",3', {flag: 'a'})
    await store.set('d', 4)
    expect(await new FileStore(file).get('d')).toBe(4)
    expect(existsSync(`${file}.journal`)).toBe(false)
  })

  it('whole lines appended by another process cost no fold: the next write appends its line to them', async () => {
    const store = await wrote({a: 1})
    const {ino} = await stat(file)
    await new FileStore(file).set('theirs', 2)
    await lockReleased()
    await store.set('b', 3)
    expect((await stat(file)).ino).toBe(ino)
    expect((await readFile(`${file}.journal`, 'utf8')).split('\n')).toEqual(['[["theirs",2]]', '[["b",3]]', ''])
  })

  it("a new instance's first write on a sound file appends a line: it folds nothing", async () => {
    await new FileStore(file).set('a', 1)
    await lockReleased()
    const {ino} = await stat(file)
    await new FileStore(file).set('b', 2)
    expect((await stat(file)).ino).toBe(ino)
    expect(await readFile(`${file}.journal`, 'utf8')).toBe('[["b",2]]\n')
  })

  it('writes that each read what another process appended leave no file open', async () => {
    const store = await wrote({a: 0})
    const open = readdirSync('/proc/self/fd').length
    for (let i = 1; i <= 5; i++) {
      await store.set('a', i)
      await lockReleased()
    }
    expect(readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(open)
  })

  it('a log that cannot be removed after a fold fails the write; one that is not there is no failure', async () => {
    const store = await wrote({a: 1, b: 2})
    writeFaults.unlink = `${file}.journal`
    await expect(store.set('large', large)).rejects.toMatchObject({code: 'EIO', syscall: 'unlink'})
  })

  it('a write that failed is not written later from memory: the next fold holds only what the file held', async () => {
    const store = await wrote({a: 1})
    writeFaults.open = `${file}.journal`
    await expect(store.set('failed', 2)).rejects.toMatchObject({code: 'EIO'})
    writeFaults.open = ''
    await lockReleased()
    await store.set('large', large)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({a: 1, large})
  })
})

describe('a damaged snapshot', () => {
  it.each([
    ['not JSON', 'not json', 'is not valid JSON', SyntaxError],
    ['a JSON array', '[1, 2]', 'does not hold a JSON object', undefined],
    ['JSON null', 'null', 'does not hold a JSON object', undefined],
    ['a JSON number', '7', 'does not hold a JSON object', undefined],
  ])(
    '%s is read as empty until the next write, which replaces it: each says so once, with the cause',
    async (_name, text, what, cause) => {
      await writeFile(file, text)
      const errors: Error[] = []
      const store = new FileStore(file, {onError: (error) => errors.push(error)})
      expect(await store.list('')).toEqual([])
      await store.set('a', 1)
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({a: 1})
      expect(errors.map(({message}) => message)).toEqual([
        `FileStore: ${file} ${what}; it is read as empty until the next write replaces it`,
        `FileStore: ${file} ${what}; it is being replaced`,
      ])
      for (const error of errors) {
        if (cause === undefined) expect(error.cause).toBeUndefined()
        else expect(error.cause).toBeInstanceOf(cause)
      }
    },
  )
})

describe('a damaged log line', () => {
  it.each([
    ['an object', '{"a": 1}'],
    ['a list of no lists', '["ab"]'],
    ['a change of a key that is no string', '[[7, 1]]'],
    ['a change of three items', '[["a", 1, 2]]'],
    ['an empty change', '[[]]'],
    ['a good change beside a bad one', '[["a", 1], [7]]'],
  ])('%s is reported, skipped, and the lines around it apply', async (_name, line) => {
    await new FileStore(file).set('before', 1)
    await lockReleased()
    await writeFile(`${file}.journal`, `[["b", 2]]\n${line}\n[["c", 3]]\n`, {flag: 'a'})
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    expect((await store.list('')).sort()).toEqual(['b', 'before', 'c'])
    expect(errors.map(({message}) => message)).toEqual([
      `FileStore: ${file}.journal holds a line that is not a list of changes; it is skipped`,
    ])
  })

  it('a line of a deletion and a setting, both well formed, applies both', async () => {
    await new FileStore(file).set('a', 1)
    await lockReleased()
    await writeFile(`${file}.journal`, '[["a"], ["b", 2]]\n', {flag: 'a'})
    const errors: Error[] = []
    expect(await new FileStore(file, {onError: (error) => errors.push(error)}).list('')).toEqual(['b'])
    expect(errors).toEqual([])
  })
})

describe('a snapshot replaced at every look', () => {
  it('a read gives up after ten tries, reported with why, and resolves nothing; a file that settles is read', async () => {
    await wrote({a: 1})
    const errors: Error[] = []
    const reader = new FileStore(file, {onError: (error) => errors.push(error)})
    Object.assign(statFaults, {path: file, replaced: 100})
    expect(await reader.get('a')).toBeUndefined()
    // Two looks a try: before and after reading.
    expect(statFaults.stats).toBe(20)
    expect(errors.map(({message, cause}) => [message, (cause as Error).message])).toEqual([
      [`FileStore: cannot read ${file}`, `FileStore: ${file} kept being replaced while it was read`],
    ])
    statFaults.replaced = 0
    expect(await reader.get('a')).toBe(1)
  })
})
