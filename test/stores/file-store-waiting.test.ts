/**
 * How a FileStore in this process waits: its pauses between tries for the lock, the turn it gives writers that
 * wait for a lock it keeps, and a kept lock that vanished. node:timers/promises is wrapped to record each pause
 * (the pauses themselves are the real ones); the clock is faked only where a bound is checked to the millisecond.
 */
import {existsSync, unlinkSync} from 'node:fs'
import {mkdir, mkdtemp, rm, utimes, writeFile} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, test, vi} from 'vitest'
import {FileStore} from '../../src/node.ts'

const sleeps = vi.hoisted(() => [] as number[])
vi.mock('node:timers/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:timers/promises')>()
  return {
    ...actual,
    setTimeout: (...args: Parameters<typeof actual.setTimeout>) => {
      sleeps.push(Number(args[0]))
      return actual.setTimeout(...args)
    },
  }
})

// A whole second: mtimes set from it are kept exactly.
const T0 = 1_700_000_000_000
let dir = ''
let file = ''

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-store-waiting-'))
  file = join(dir, 'store.json')
  sleeps.length = 0
})

afterEach(async () => {
  vi.useRealTimers()
  await rm(dir, {recursive: true, force: true})
})

describe('FileStore: waiting for the lock', () => {
  test('a fresh store takes a free lock at once, without a pause', async () => {
    await new FileStore(file).set('a', 1)
    expect(sleeps).toEqual([])
  })

  test('a write waiting for a live lock pauses 2 to 10 ms between tries, then writes', async () => {
    await writeFile(`${file}.lock`, JSON.stringify({pid: process.pid, host: hostname(), token: 'holder'}))
    const store = new FileStore(file)
    const write = store.set('a', 1)
    await vi.waitFor(() => expect(sleeps.length).toBeGreaterThanOrEqual(3))
    unlinkSync(`${file}.lock`)
    await write
    expect(sleeps.every((ms) => ms >= 2 && ms <= 10)).toBe(true)
    expect(await new FileStore(file).get('a')).toBe(1)
  })

  test.each([
    ['a lock draft 500 ms old (a writer waiting, its draft kept young): it steps aside once', 'store.json.lock.4242.0123456789ab.tmp', 500, [20]],
    ['a lock draft 501 ms old (abandoned: a waiting writer keeps its draft younger): it never steps aside', 'store.json.lock.4242.0123456789ab.tmp', 501, []],
    ['a data file being written (no writer waits on it): it never steps aside', 'store.json.4242.0123456789ab.tmp', 0, []],
  ])('a writer keeping the lock with staleLockMs 1000 that finds %s', async (_, name, ageMs, expected) => {
    // It looks for waiting writers every 50 ms: at T0.
    vi.useFakeTimers({toFake: ['Date'], now: T0 - 50})
    await writeFile(join(dir, name), '')
    // Its age when the writer looks.
    const seconds = (T0 - ageMs) / 1000
    await utimes(join(dir, name), seconds, seconds)
    const store = new FileStore(file, {staleLockMs: 1000})
    await store.set('k', 1)
    // Issued before the next turn: the lock is kept, and this write is due to look.
    vi.setSystemTime(T0)
    await store.set('k', 2)
    await store.set('k', 3)
    // A turn later, with nobody seen waiting since: no more stepping aside.
    await new Promise((resolve) => setImmediate(resolve))
    await store.set('k', 4)
    expect(sleeps).toEqual(expected)
    expect(await store.get('k')).toBe(4)
  })

  test('a kept lock removed from under it (broken as stale by another writer) is taken again by the next write', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
    const store = new FileStore(file, {staleLockMs: 200})
    await store.set('a', 1)
    unlinkSync(`${file}.lock`)
    // Due to refresh it (a quarter of staleLockMs): the refresh finds it gone, and the lock is given up.
    vi.setSystemTime(T0 + 50)
    await store.set('b', 2)
    await store.set('c', 3)
    expect(existsSync(`${file}.lock`)).toBe(true)
    expect(await new FileStore(file).list('')).toEqual(['a', 'b', 'c'])
  })
})

describe('FileStore: bad input and unreadable files', () => {
  test('a path that is no string is a TypeError naming the option', () => {
    expect(() => new FileStore(5 as unknown as string)).toThrow(new TypeError('FileStore: path must be a non-empty string'))
  })

  test.each([
    ['get', (store: FileStore) => store.get(5 as unknown as string)],
    ['set', (store: FileStore) => store.set(5 as unknown as string, 1)],
    ['delete', (store: FileStore) => store.delete(5 as unknown as string)],
  ])('%s of a key that is no string rejects with a TypeError, writing nothing', async (_, call) => {
    await expect(call(new FileStore(file))).rejects.toThrow(new TypeError('FileStore: a key must be a string'))
    expect(existsSync(file)).toBe(false)
  })

  test('list of an unreadable file (a directory in its place) resolves no key, and reports why with the cause', async () => {
    await mkdir(file, {recursive: true})
    const errors: Error[] = []
    expect(await new FileStore(file, {onError: (error) => errors.push(error)}).list('')).toEqual([])
    expect(errors.map((error) => [error.message, (error.cause as {code?: string}).code])).toEqual([[`FileStore: cannot read ${file}`, 'EISDIR']])
  })
})
