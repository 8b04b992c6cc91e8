/**
 * FileStore's log, seen from its files: when a write is appended as a line and when the log is folded into
 * the file, what a write reads again, and what is reported on the way. node:fs/promises is wrapped to record the
 * whole-file reads and node:fs to make the removal of a folded log fail; the calls themselves are the real ones.
 */
import {existsSync, statSync, truncateSync, unlinkSync, writeFileSync} from 'node:fs'
import {mkdtemp, readFile, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, test, vi} from 'vitest'
import {FileStore} from '../../src/node.ts'

/** `reads`: the reads of the store's file and log (not its lock): whole, or of the lines appended since. */
const io = vi.hoisted(() => ({reads: [] as string[], logUnlinkError: undefined as Error | undefined}))
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...actual,
    readFile: (...args: Parameters<typeof actual.readFile>) => {
      const path = args[0] as string
      if (!path.endsWith('.lock')) io.reads.push(path)
      return actual.readFile(...args)
    },
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args)
      const read = handle.read.bind(handle) as (...readArgs: unknown[]) => unknown
      handle.read = ((...readArgs: unknown[]) => {
        io.reads.push(`${String(args[0])}, appended lines`)
        return read(...readArgs)
      }) as typeof handle.read
      return handle
    },
  }
})
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return {
    ...actual,
    unlinkSync: (...args: Parameters<typeof actual.unlinkSync>) => {
      if (io.logUnlinkError !== undefined && String(args[0]).endsWith('.journal')) throw io.logUnlinkError
      actual.unlinkSync(...args)
    },
  }
})

let dir = ''
let file = ''
let log = ''

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-log-'))
  file = join(dir, 'store.json')
  log = `${file}.journal`
  io.reads = []
  io.logUnlinkError = undefined
})

afterEach(async () => {
  await rm(dir, {recursive: true, force: true})
})

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const logLines = async (): Promise<string[]> => (await readFile(log, 'utf8')).split('\n').slice(0, -1)

describe('FileStore: the log, write by write', () => {
  test.each([
    [65_536, 'appended: the log is then exactly 64 KiB'],
    [65_537, 'folded into the file: the log would outgrow 64 KiB'],
  ])('a write whose line is %i bytes, to a log that is empty, is %s', async (lineBytes, outcome) => {
    const store = new FileStore(file)
    // The first write makes the file (folded: there is none); the file stays below 64 KiB.
    await store.set('s', 1)
    // `[["k","…"]]` and its newline: 11 bytes besides the value.
    await store.set('k', 'x'.repeat(lineBytes - 11))
    if (outcome.startsWith('appended')) expect(statSync(log).size).toBe(65_536)
    else expect(existsSync(log)).toBe(false)
    expect(await new FileStore(file).get('k')).toHaveLength(lineBytes - 11)
  })

  test('is created readable by its owner only (it holds session IDs, like the file)', async () => {
    const store = new FileStore(file)
    await store.set('a', 1)
    await store.set('b', 2)
    expect(statSync(log).mode & 0o777).toBe(0o600)
  })

  test('after a fold into a file larger than 64 KiB, the log may grow to the size of the file before the next fold', async () => {
    const store = new FileStore(file)
    await store.set('large', 'x'.repeat(100_000))
    await store.set('k', 'y'.repeat(70_000))
    expect(statSync(log).size).toBeGreaterThan(70_000)
  })

  test('a store that finds a log appends to it, and then reads only what was appended since: nothing, when nobody else wrote', async () => {
    const first = new FileStore(file)
    await first.set('a', 1)
    await first.set('b', 'a longer line')
    const errors: Error[] = []
    const second = new FileStore(file, {onError: (error) => errors.push(error)})
    await second.set('c', 3)
    expect(await logLines()).toEqual(['[["b","a longer line"]]', '[["c",3]]'])
    await nextTurn()
    io.reads = []
    await second.set('d', 4)
    await nextTurn()
    await second.set('e', 5)
    expect(io.reads).toEqual([])
    expect(await logLines()).toEqual(['[["b","a longer line"]]', '[["c",3]]', '[["d",4]]', '[["e",5]]'])
    expect(await new FileStore(file).list('')).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(errors).toEqual([])
  })

  test('after folding the log into the file, the next write under a new lock reads neither again', async () => {
    const store = new FileStore(file)
    await store.set('a', 1)
    await store.set('b', 2)
    await store.set('large', 'x'.repeat(70_000))
    expect(existsSync(log)).toBe(false)
    await nextTurn()
    io.reads = []
    await store.set('c', 3)
    expect(io.reads).toEqual([])
    expect(await logLines()).toEqual(['[["c",3]]'])
  })

  test.each([
    ['removed', () => unlinkSync(log)],
    ['cut short', () => truncateSync(log, 4)],
  ])('a log %s by someone else is noticed: the next write reads the file again whole', async (_, change) => {
    const store = new FileStore(file)
    await store.set('a', 1)
    await store.set('b', 2)
    await nextTurn()
    change()
    io.reads = []
    await store.set('c', 3)
    expect(io.reads).toContain(file)
    expect(await new FileStore(file).list('')).toEqual(['a', 'c'])
  })

  test('a fold whose log cannot be removed fails the write with that error', async () => {
    io.logUnlinkError = Object.assign(new Error('EBUSY: resource busy, unlink'), {code: 'EBUSY'})
    await expect(new FileStore(file).set('a', 1)).rejects.toMatchObject({code: 'EBUSY'})
  })
})

describe('FileStore: what the log and the file are reported for', () => {
  test('a file that is not JSON: reported on a read as read as empty, on a write as replaced, each with the parse error as cause', async () => {
    writeFileSync(file, '{"a": 1')
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    await store.get('a')
    await store.set('b', 2)
    expect(errors.map((error) => [error.message, error.cause instanceof SyntaxError])).toEqual([
      [`FileStore: ${file} is not valid JSON; it is read as empty until the next write replaces it`, true],
      [`FileStore: ${file} is not valid JSON; it is being replaced`, true],
    ])
  })

  test.each([
    ['a change of three items', '[["k",1,2]]'],
    ['a change without its key', '[[]]'],
    ['a key that is no string', '[[5,1]]'],
    ['an object', '{"k":1}'],
  ])('a log line of %s is reported and skipped', async (_, line) => {
    await new FileStore(file).set('a', 1)
    writeFileSync(log, `${line}\n[["b",2]]\n`)
    const errors: Error[] = []
    expect(await new FileStore(file, {onError: (error) => errors.push(error)}).list('')).toEqual(['a', 'b'])
    expect(errors.map((error) => error.message)).toEqual([
      `FileStore: ${log} holds a line that is not a list of changes; it is skipped`,
    ])
  })
})
