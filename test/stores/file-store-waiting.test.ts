/**
 * How a FileStore in this process waits: its pauses between tries for the lock, the turn it gives writers that
 * wait for a lock it keeps, and a kept lock that vanished. node:timers/promises is wrapped to record each pause
 * (the pauses themselves are the real ones); the clock is faked only where a bound is checked to the millisecond.
 */
import {existsSync, mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync, utimesSync, writeFileSync} from 'node:fs'
import {mkdir, mkdtemp, rm, utimes, writeFile} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, test, vi} from 'vitest'
import {FileStore} from '../../src/node.ts'

const sleeps = vi.hoisted(() => [] as number[])
/** When on, a pause lasts until its signal aborts, however long it was asked to be. */
const endless = vi.hoisted(() => ({on: false}))
vi.mock('node:timers/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:timers/promises')>()
  return {
    ...actual,
    setTimeout: (...args: Parameters<typeof actual.setTimeout>) => {
      sleeps.push(Number(args[0]))
      if (!endless.on) return actual.setTimeout(...args)
      const signal = args[2]?.signal
      return new Promise((_, reject) =>
        signal?.addEventListener('abort', () => reject(new DOMException('The operation was aborted', 'AbortError'))),
      )
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
  endless.on = false
})

/** The token of the lock file, as its holder wrote it. */
const lockToken = (): unknown => (JSON.parse(readFileSync(`${file}.lock`, 'utf8')) as {token: unknown}).token

/** A lock draft next to the file, as a writer waiting for the lock keeps it: `ageMs` old at the fake time `at`. */
function waitingDraft(at: number, ageMs = 0): void {
  const draft = join(dir, 'store.json.lock.4242.0123456789ab.tmp')
  writeFileSync(draft, '')
  utimesSync(draft, (at - ageMs) / 1000, (at - ageMs) / 1000)
}

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
    [
      'with staleLockMs 1000, a lock draft 500 ms old (a writer waiting, its draft kept young): it steps aside once',
      1000,
      'store.json.lock.4242.0123456789ab.tmp',
      500,
      [20],
    ],
    [
      'with staleLockMs 1000, a lock draft 501 ms old (abandoned: a waiting writer keeps its draft younger): it never steps aside',
      1000,
      'store.json.lock.4242.0123456789ab.tmp',
      501,
      [],
    ],
    [
      'with staleLockMs 1000, a data file being written (no writer waits on it): it never steps aside',
      1000,
      'store.json.4242.0123456789ab.tmp',
      0,
      [],
    ],
    [
      'with staleLockMs 100 (it looks every 25 ms), a fresh lock draft: it steps aside once',
      100,
      'store.json.lock.4242.0123456789ab.tmp',
      0,
      [20],
    ],
  ])('a writer keeping the lock, %s', async (_, staleLockMs, name, ageMs, expected) => {
    // It looks for waiting writers every 50 ms, or a quarter of staleLockMs if sooner: at T0.
    vi.useFakeTimers({toFake: ['Date'], now: T0 - Math.min(50, staleLockMs / 4)})
    await writeFile(join(dir, name), '')
    // Its age when the writer looks.
    const seconds = (T0 - ageMs) / 1000
    await utimes(join(dir, name), seconds, seconds)
    const store = new FileStore(file, {staleLockMs})
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

describe('FileStore: a lock kept across back-to-back writes (staleLockMs 1000)', () => {
  test.each([
    [50, 'kept as it is: young, it is touched only from a quarter of staleLockMs', 'untouched'],
    [250, 'touched', 'touched'],
    [750, 'touched: three quarters of staleLockMs old, no other writer could have judged it stale', 'touched'],
    [751, 'given up and taken again: older, another writer may have broken it as stale', 'taken again'],
  ] as const)('the next write %i ms after the lock was taken: %s', async (ms, _, expected) => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
    const store = new FileStore(file, {staleLockMs: 1000})
    await store.set('a', 1)
    const before = {token: lockToken(), mtimeMs: statSync(`${file}.lock`).mtimeMs}
    vi.setSystemTime(T0 + ms)
    await store.set('b', 2)
    const after = {token: lockToken(), mtimeMs: Math.round(statSync(`${file}.lock`).mtimeMs)}
    if (expected === 'taken again') expect(after.token).not.toBe(before.token)
    else
      expect(after).toEqual({
        token: before.token,
        mtimeMs: expected === 'touched' ? T0 + ms : Math.round(before.mtimeMs),
      })
  })

  test('looks for waiting writers every 50 ms from its last look, however often it writes', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
    const store = new FileStore(file, {staleLockMs: 1000})
    // Each write is issued before the next turn: the lock is kept throughout.
    await store.set('k', 1)
    vi.setSystemTime(T0 + 25)
    await store.set('k', 2)
    // Its first look, 50 ms after it took the lock: nobody waits.
    vi.setSystemTime(T0 + 50)
    await store.set('k', 3)
    waitingDraft(T0 + 100)
    vi.setSystemTime(T0 + 75)
    await store.set('k', 4)
    // Its next look, 50 ms after the one before: it steps aside, and pauses before the write after.
    vi.setSystemTime(T0 + 100)
    await store.set('k', 5)
    expect(sleeps).toEqual([])
    await store.set('k', 6)
    expect(sleeps).toEqual([20])
  })

  test('a write that failed leaves no trace: its value does not come back with a later write', async () => {
    const store = new FileStore(file)
    await store.set('k1', 'v1')
    // The journal cannot be appended to: the next write, made under the kept lock, fails.
    mkdirSync(`${file}.journal`)
    await expect(store.set('k2', 'v2')).rejects.toMatchObject({code: 'EISDIR'})
    rmdirSync(`${file}.journal`)
    // Folded into a new file: every entry the store holds is written.
    await store.set('k3', 'x'.repeat(70_000))
    expect(await new FileStore(file).list('')).toEqual(['k1', 'k3'])
  })
})

describe('FileStore: the sweep of abandoned temporary files (staleLockMs 1000)', () => {
  test('is made by the first write of each store: one exactly staleLockMs old stays, one older goes; one left since stays until another store writes', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
    await mkdir(dir, {recursive: true})
    const [exactly, older, later] = ['4242', '4243', '4244'].map((pid) =>
      join(dir, `store.json.${pid}.0123456789ab.tmp`),
    ) as [string, string, string]
    for (const [path, ageMs] of [
      [exactly, 1000],
      [older, 1001],
    ] as const) {
      writeFileSync(path, '')
      utimesSync(path, (T0 - ageMs) / 1000, (T0 - ageMs) / 1000)
    }
    const store = new FileStore(file, {staleLockMs: 1000})
    await store.set('a', 1)
    expect([existsSync(exactly), existsSync(older)]).toEqual([true, false])
    writeFileSync(later, '')
    utimesSync(later, (T0 - 5000) / 1000, (T0 - 5000) / 1000)
    await new Promise((resolve) => setImmediate(resolve))
    await store.set('b', 2)
    expect(existsSync(later)).toBe(true)
    vi.setSystemTime(T0 + 1)
    await new FileStore(file, {staleLockMs: 1000}).set('c', 3)
    expect([existsSync(exactly), existsSync(later)]).toEqual([false, false])
  })
})

describe('FileStore: its signal', () => {
  test("ends a pause at once as it aborts: a write waiting for a live lock rejects with the signal's reason", async () => {
    writeFileSync(`${file}.lock`, JSON.stringify({pid: process.pid, host: hostname(), token: 'holder'}))
    endless.on = true
    const controller = new AbortController()
    const write = new FileStore(file, {signal: controller.signal}).set('a', 1)
    await vi.waitFor(() => expect(sleeps).toHaveLength(1))
    controller.abort(new Error('shutting down'))
    const tooLate = new Promise((_, reject) =>
      setTimeout(() => reject(new Error('the pause went on after the abort')), 1000),
    )
    await expect(Promise.race([write, tooLate])).rejects.toThrow('shutting down')
  })
})

describe('FileStore: bad input and unreadable files', () => {
  test('a path that is no string is a TypeError naming the option', () => {
    expect(() => new FileStore(5 as unknown as string)).toThrow(
      new TypeError('FileStore: path must be a non-empty string'),
    )
  })

  test('a value that is not JSON is a TypeError naming its key', async () => {
    await expect(new FileStore(file).set('cursor', undefined as unknown as number)).rejects.toThrow(
      new TypeError('FileStore: the value of cursor is not JSON'),
    )
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
    expect(errors.map((error) => [error.message, (error.cause as {code?: string}).code])).toEqual([
      [`FileStore: cannot read ${file}`, 'EISDIR'],
    ])
  })
})
