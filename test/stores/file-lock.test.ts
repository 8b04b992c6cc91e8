/**
 * The lock file a FileStore takes around each write, driven directly: its waits are a pause the test steps, so
 * each try, each judgement of the lock found and each refresh of the draft can be seen in turn. File system races
 * (a lock replaced, refreshed or removed between two looks) are staged through node:fs/promises wrapped with
 * hooks; the calls themselves are the real ones, on real files.
 */
import {spawn} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, unlink, utimes, writeFile} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeAll, beforeEach, describe, expect, test, vi} from 'vitest'
import {errorCode, FileLock, temporaryFiles, type Lock} from '../../src/persistence/file-lock.ts'

const hooks = vi.hoisted(() => ({
  /** Runs before the n-th stat of the lock file (counted from 1 for each test). */
  onLockStat: undefined as ((n: number) => Promise<void>) | undefined,
  lockStats: 0,
  /** Runs before the stat of a temporary file. */
  onTempStat: undefined as ((path: string) => Promise<void>) | undefined,
  /** Runs once, before the next unlink of the lock file. */
  onLockUnlink: undefined as (() => Promise<void>) | undefined,
  noHardLinks: false,
  openError: undefined as Error | undefined,
  writeError: undefined as Error | undefined,
  syncReads: [] as string[],
  bytes: undefined as Buffer | undefined,
}))

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...actual,
    stat: async (...args: Parameters<typeof actual.stat>) => {
      const path = String(args[0])
      if (path.endsWith('.lock')) await hooks.onLockStat?.(++hooks.lockStats)
      else if (path.endsWith('.tmp')) await hooks.onTempStat?.(path)
      return actual.stat(...args)
    },
    unlink: async (...args: Parameters<typeof actual.unlink>) => {
      const hook = hooks.onLockUnlink
      if (hook !== undefined && String(args[0]).endsWith('.lock')) {
        hooks.onLockUnlink = undefined
        await hook()
      }
      return actual.unlink(...args)
    },
    link: async (...args: Parameters<typeof actual.link>) => {
      if (hooks.noHardLinks) throw Object.assign(new Error('EPERM: operation not permitted, link'), {code: 'EPERM'})
      return actual.link(...args)
    },
    open: async (...args: Parameters<typeof actual.open>) => {
      if (hooks.openError !== undefined) throw hooks.openError
      const handle = await actual.open(...args)
      const refused = hooks.writeError
      if (refused !== undefined) handle.writeFile = () => Promise.reject(refused)
      return handle
    },
  }
})
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return {
    ...actual,
    readFileSync: (...args: Parameters<typeof actual.readFileSync>) => {
      hooks.syncReads.push(String(args[0]))
      return actual.readFileSync(...args)
    },
  }
})
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>()
  return {...actual, randomBytes: (size: number) => hooks.bytes?.subarray(0, size) ?? actual.randomBytes(size)}
})

// A whole second: the file system keeps the mtimes set from it exactly, so ages at a bound are exact.
const T0 = 1_700_000_000_000
const host = hostname()
let deadPid = 0
let dir = ''
let path = ''

beforeAll(async () => {
  const child = spawn(process.execPath, ['--eval', ''], {stdio: 'ignore'})
  await new Promise((resolve) => child.once('exit', resolve))
  deadPid = child.pid!
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-lock-'))
  path = join(dir, 'store.json.lock')
  Object.assign(hooks, {
    onLockStat: undefined,
    lockStats: 0,
    onTempStat: undefined,
    onLockUnlink: undefined,
    noHardLinks: false,
  })
  Object.assign(hooks, {openError: undefined, writeError: undefined, syncReads: [], bytes: undefined})
})

afterEach(async () => {
  vi.useRealTimers()
  await rm(dir, {recursive: true, force: true})
})

interface Stepped {
  lock: FileLock
  /** The ms of each pause between two tries. */
  pauses: number[]
  errors: Error[]
}

/** A FileLock on `path` whose pauses run `onPause` (with the pause's number) instead of waiting. */
function stepped(
  onPause?: (n: number) => Promise<void>,
  {staleMs = 2000, signal}: {staleMs?: number; signal?: AbortSignal} = {},
): Stepped {
  const pauses: number[] = []
  const errors: Error[] = []
  const pause = async (ms: number) => {
    pauses.push(ms)
    await onPause?.(pauses.length)
  }
  return {lock: new FileLock(path, {staleMs, pause, signal, onError: (error) => errors.push(error)}), pauses, errors}
}

/** Puts a lock at `path` as another writer would have left it: `owner` inside (or nothing), `ageMs` old. */
async function lockLeft(owner: object | '', ageMs = 0, at = path): Promise<void> {
  await writeFile(at, owner === '' ? '' : JSON.stringify(owner))
  await setAge(at, ageMs)
}

async function setAge(at: string, ageMs: number): Promise<void> {
  const seconds = (Date.now() - ageMs) / 1000
  await utimes(at, seconds, seconds)
}

const tokenIn = async (at = path): Promise<unknown> =>
  (JSON.parse(await readFile(at, 'utf8')) as {token?: unknown}).token

/** The lock drafts next to `path` (`store.json.lock.<pid>.<hex>.tmp`). */
async function drafts(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith('store.json.lock.')).map((name) => join(dir, name))
}

describe('FileLock: the lock it takes', () => {
  test('names its owner (this pid, this host, a token of its own), is readable by its owner only, and is removed on release', async () => {
    const {lock} = stepped()
    const first = await lock.acquire()
    const owner = JSON.parse(await readFile(path, 'utf8')) as {pid: number; host: string; token: string}
    expect(owner).toEqual({pid: process.pid, host, token: expect.stringMatching(/^[0-9a-f]{16}$/)})
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    await first.release()
    await expect(stat(path)).rejects.toMatchObject({code: 'ENOENT'})
    const second = await lock.acquire()
    expect(await tokenIn()).not.toBe(owner.token)
    await second.release()
    expect(await drafts()).toEqual([])
  })

  test('touch sets its access and modification times to the time given, and says false once it is gone', async () => {
    const {lock} = stepped()
    const taken = await lock.acquire()
    expect(await lock.touch(T0)).toBe(true)
    const times = await stat(path)
    expect([times.atimeMs, times.mtimeMs]).toEqual([T0, T0])
    await taken.release()
    expect(await lock.touch(T0)).toBe(false)
  })

  test('its draft never writes through a file already at its name: a symlink planted there is not followed', async () => {
    hooks.bytes = Buffer.from('0123456789abcdef', 'hex')
    const victim = join(dir, 'victim')
    await writeFile(victim, 'kept')
    await symlink(victim, `${path}.${process.pid}.0123456789ab.tmp`)
    await expect(stepped().lock.acquire()).rejects.toMatchObject({code: 'EEXIST'})
    expect(await readFile(victim, 'utf8')).toBe('kept')
    await expect(stat(path)).rejects.toMatchObject({code: 'ENOENT'})
  })
})

describe('FileLock: waiting for a live lock', () => {
  test('pauses 2 to 10 ms between tries, jittered, and takes the lock once it is gone', async () => {
    await lockLeft({pid: process.pid, host, token: 'holder'})
    vi.spyOn(Math, 'random').mockReturnValueOnce(0).mockReturnValueOnce(0.5).mockReturnValueOnce(0.999)
    const seen: unknown[] = []
    const {lock, pauses} = stepped(async (n) => {
      seen.push(await tokenIn())
      if (n === 3) await unlink(path)
    })
    await lock.acquire()
    expect(pauses.map((ms) => Math.round(ms * 1000) / 1000)).toEqual([2, 6, 9.992])
    expect(seen).toEqual(['holder', 'holder', 'holder'])
  })

  test('keeps its draft young: sets its times only once more than a quarter of staleMs passed since it last did', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
    await lockLeft({pid: process.pid, host, token: 'holder'})
    const draftTimes: number[] = []
    const {lock} = stepped(async (n) => {
      const [draft] = await drafts()
      draftTimes.push(Math.round((await stat(draft!)).mtimeMs))
      // staleMs 2000: a quarter is 500 ms.
      if (n === 1 || n === 2) vi.setSystemTime(T0 + 500)
      if (n === 3) vi.setSystemTime(T0 + 501)
      if (n === 4) await unlink(path)
    })
    const taken = await lock.acquire()
    const created = draftTimes[0]!
    // Written with the real clock: whatever it is, it is none of the fake times set since.
    expect([T0, T0 + 500, T0 + 501]).not.toContain(created)
    expect(draftTimes).toEqual([created, created, created, T0 + 501])
    expect(taken.freshAt).toBe(T0 + 501)
    const times = await stat(path)
    expect([times.atimeMs, times.mtimeMs].map(Math.round)).toEqual([T0 + 501, T0 + 501])
  })
})

describe('FileLock: whether a lock found is broken at once or waited for', () => {
  beforeEach(() => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
  })

  test.each<[string, 'waited for' | 'broken', number, () => object | string]>([
    ['a live owner, exactly staleMs old', 'waited for', 2000, () => ({pid: process.pid, host, token: 'found'})],
    ['a live owner, a millisecond past staleMs', 'broken', 2001, () => ({pid: process.pid, host, token: 'found'})],
    ['an empty lock exactly a second old', 'waited for', 1000, () => ''],
    ['an empty lock a millisecond past a second', 'broken', 1001, () => ''],
    ['not JSON, a millisecond past a second', 'broken', 1001, () => '{"pid": 1'],
    ['no pid, half a second old', 'waited for', 500, () => ({host, token: 'found'})],
    ['no host, a dead pid, past a second', 'broken', 1001, () => ({pid: deadPid, token: 'found'})],
    ['no token, a dead pid on this host, half a second old', 'waited for', 500, () => ({pid: deadPid, host})],
    ['a dead pid on this host, fresh', 'broken', 0, () => ({pid: deadPid, host, token: 'found'})],
    ['a dead pid on another host, fresh', 'waited for', 0, () => ({pid: deadPid, host: `not-${host}`, token: 'found'})],
  ])('%s: %s', async (_, expected, ageMs, owner) => {
    const content = owner()
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content))
    await setAge(path, ageMs)
    const atPause: string[] = []
    const {lock, pauses} = stepped(async () => {
      atPause.push(await readFile(path, 'utf8'))
      await unlink(path)
    })
    await lock.acquire()
    expect(await tokenIn()).not.toBe('found')
    if (expected === 'broken') expect(pauses).toEqual([])
    else expect(atPause).toEqual([typeof content === 'string' ? content : JSON.stringify(content)])
  })

  test.each([
    ['of another user (kill says EPERM)', Object.assign(new Error('kill EPERM'), {code: 'EPERM'})],
    // What Deno's process.kill throws without --allow-run: NotCapable, with no code.
    [
      'the system will not tell of (kill throws an error without a code)',
      Object.assign(new Error('Requires run access'), {name: 'NotCapable'}),
    ],
  ])('an owner process %s may be alive: its lock is waited for, never broken', async (_, refusal) => {
    await lockLeft({pid: deadPid, host, token: 'found'})
    vi.spyOn(process, 'kill').mockImplementation(() => {
      throw refusal
    })
    const {lock, pauses} = stepped(() => unlink(path))
    await lock.acquire()
    expect(pauses).toHaveLength(1)
  })
})

describe('FileLock: a lock that changes while it is judged', () => {
  beforeEach(() => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
  })

  /** Another writer takes the lock in place of the stale one: a new file, its mtime that of the old. */
  async function replaced(): Promise<void> {
    const old = await stat(path)
    await writeFile(`${path}.new`, JSON.stringify({pid: process.pid, host, token: 'newcomer'}))
    await utimes(`${path}.new`, old.atime, old.mtime)
    await rename(`${path}.new`, path)
  }

  test.each([
    // Stale by its age (its owner was suspended), then refreshed as its owner wakes: now young, waited for.
    [
      'refreshed by its owner between the two looks (same file, new mtime): it is left, judged again and waited for',
      {2: () => setAge(path, 0)},
      'holder',
    ],
    // A new file within the same mtime tick (coarse clocks), then kept young by its writer.
    [
      'replaced by another writer between the two looks (new file, same mtime): it is left, judged again and waited for',
      {2: replaced, 3: () => setAge(path, 0)},
      'newcomer',
    ],
    ['removed by its owner between the two looks: taken at once, without a pause', {2: () => unlink(path)}, undefined],
    ['removed by its owner before the first look: taken at once, without a pause', {1: () => unlink(path)}, undefined],
  ] as const)('%s', async (_, actions: {[n: number]: () => Promise<void>}, waitedFor) => {
    await lockLeft({pid: process.pid, host, token: 'holder'}, 2001)
    hooks.onLockStat = async (n) => actions[n]?.()
    const atPause: unknown[] = []
    const {lock, pauses} = stepped(async () => {
      atPause.push(await tokenIn())
      await unlink(path)
    })
    await lock.acquire()
    expect(atPause).toEqual(waitedFor === undefined ? [] : [waitedFor])
    expect(pauses).toHaveLength(atPause.length)
  })

  test('a stale lock already removed by another writer as it is removed: taken at once', async () => {
    await lockLeft({pid: deadPid, host, token: 'found'})
    hooks.onLockUnlink = () => unlink(path)
    const {lock, pauses} = stepped()
    await lock.acquire()
    expect(pauses).toEqual([])
    expect(await tokenIn()).not.toBe('found')
  })

  test('a stale lock that cannot be removed fails the acquire with that error, and leaves no draft', async () => {
    await lockLeft({pid: deadPid, host, token: 'found'})
    hooks.onLockUnlink = () => Promise.reject(Object.assign(new Error('EBUSY: resource busy'), {code: 'EBUSY'}))
    await expect(stepped().lock.acquire()).rejects.toMatchObject({code: 'EBUSY'})
    expect(await tokenIn()).toBe('found')
    expect(await drafts()).toEqual([])
  })
})

describe('FileLock: what fails an acquire', () => {
  test('a lock that cannot be read (a directory in its place) fails it with that error', async () => {
    await mkdir(path)
    await expect(stepped(undefined, {signal: AbortSignal.timeout(2000)}).lock.acquire()).rejects.toMatchObject({
      code: 'EISDIR',
    })
  })

  test('its draft removed while it waits (swept by another writer) fails it with ENOENT', async () => {
    await lockLeft({pid: process.pid, host, token: 'holder'})
    const {lock} = stepped(async (n) => {
      if (n > 1) throw new Error('tried again without its draft')
      for (const draft of await drafts()) await unlink(draft)
    })
    await expect(lock.acquire()).rejects.toMatchObject({code: 'ENOENT'})
    expect(await tokenIn()).toBe('holder')
  })

  describe('without hard links, the lock created in place', () => {
    beforeEach(() => {
      hooks.noHardLinks = true
    })

    test('excludes: a live lock is waited for, then the lock is created with its owner inside', async () => {
      await lockLeft({pid: process.pid, host, token: 'holder'})
      const {lock, pauses} = stepped(() => unlink(path))
      const taken = await lock.acquire()
      expect(pauses).toHaveLength(1)
      expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({pid: process.pid, host})
      await taken.release()
    })

    test('an open that fails for another reason than EEXIST fails the acquire', async () => {
      hooks.openError = Object.assign(new Error('EACCES: permission denied'), {code: 'EACCES'})
      const {lock} = stepped(() => Promise.reject(new Error('tried again')))
      await expect(lock.acquire()).rejects.toMatchObject({code: 'EACCES'})
    })

    test('a lock whose owner cannot be written into it is removed, and the acquire fails', async () => {
      hooks.writeError = Object.assign(new Error('ENOSPC: no space left on device'), {code: 'ENOSPC'})
      await expect(stepped().lock.acquire()).rejects.toMatchObject({code: 'ENOSPC'})
      await expect(stat(path)).rejects.toMatchObject({code: 'ENOENT'})
      expect(await drafts()).toEqual([])
    })

    test('leaves no file open: twenty locks taken and released', async () => {
      const {lock} = stepped()
      const open = () => readdirSync('/proc/self/fd').length
      const before = open()
      for (let i = 0; i < 20; i++) await (await lock.acquire()).release()
      expect(open()).toBeLessThan(before + 10)
    })
  })
})

describe('FileLock: release', () => {
  test.each([
    ['taken since by another writer (another token)', JSON.stringify({pid: process.pid, host, token: 'newcomer'})],
    ['created by another writer that has not written its owner yet (empty)', ''],
  ])('removes only its own lock: one %s stays, and nothing is reported', async (_, content) => {
    const {lock, errors} = stepped()
    const taken = await lock.acquire()
    await writeFile(path, content)
    await taken.release()
    expect(await readFile(path, 'utf8')).toBe(content)
    expect(errors).toEqual([])
  })

  test('of a lock already gone is silent; of one that cannot be read, reported once, naming it, with the cause', async () => {
    const {lock, errors} = stepped()
    const gone = await lock.acquire()
    await unlink(path)
    await gone.release()
    expect(errors).toEqual([])
    const unreadable = await lock.acquire()
    await unlink(path)
    await mkdir(path)
    await unreadable.release()
    expect(errors.map((error) => [error.message, errorCode(error.cause)])).toEqual([
      [`FileStore: cannot remove the lock ${path}`, 'EISDIR'],
    ])
  })
})

describe('FileLock: at process exit', () => {
  test('one hook for the process removes the locks still held that are still its own, and reads no lock it released', async () => {
    // A fresh module: its hook is installed by its first lock.
    vi.resetModules()
    const fresh = await import('../../src/persistence/file-lock.ts')
    const before = process.listeners('exit')
    const paths = ['a', 'b', 'c'].map((name) => join(dir, `${name}.lock`))
    const onError = () => {}
    const locks = paths.map(
      (at) => new fresh.FileLock(at, {staleMs: 2000, pause: async () => {}, signal: undefined, onError}),
    )
    const held: Lock[] = []
    for (const lock of locks) held.push(await lock.acquire())
    await held[2]!.release()
    const hooksAdded = process.listeners('exit').filter((listener) => !before.includes(listener))
    expect(hooksAdded).toHaveLength(1)
    const [exitHook] = hooksAdded as [() => void]
    try {
      // Broken as stale and taken by another writer meanwhile.
      await writeFile(paths[1]!, JSON.stringify({pid: process.pid, host, token: 'newcomer'}))
      hooks.syncReads = []
      exitHook()
      await expect(stat(paths[0]!)).rejects.toMatchObject({code: 'ENOENT'})
      expect(await tokenIn(paths[1])).toBe('newcomer')
      expect(hooks.syncReads.sort()).toEqual([paths[0], paths[1]])
    } finally {
      process.off('exit', exitHook)
    }
  })
})

describe("FileLock: at the global unload event (Deno.exit fires it, not the process's exit)", () => {
  test('the locks still held are removed once, whichever of unload and exit comes first', async () => {
    // Node has no global addEventListener: give this realm Deno's, an EventTarget, before a fresh module takes a lock.
    const target = new EventTarget()
    const global = globalThis as {addEventListener?: EventTarget['addEventListener']}
    global.addEventListener = target.addEventListener.bind(target)
    const before = process.listeners('exit')
    try {
      vi.resetModules()
      const fresh = await import('../../src/persistence/file-lock.ts')
      const lock = new fresh.FileLock(path, {
        staleMs: 2000,
        pause: async () => {},
        signal: undefined,
        onError: () => {},
      })
      await lock.acquire()
      hooks.syncReads = []
      target.dispatchEvent(new Event('unload'))
      await expect(stat(path)).rejects.toMatchObject({code: 'ENOENT'})
      // The process's exit after it finds nothing left: the one read was unload's.
      for (const listener of process.listeners('exit').filter((listener) => !before.includes(listener)))
        (listener as () => void)()
      expect(hooks.syncReads).toEqual([path])
    } finally {
      delete global.addEventListener
      for (const listener of process.listeners('exit').filter((listener) => !before.includes(listener)))
        process.off('exit', listener)
    }
  })
})

describe('temporaryFiles', () => {
  test('lists the data files being written and the lock drafts next to a path, with their age, and nothing else', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: T0})
    const names = [
      'store.json.4242.0123456789ab.tmp',
      'store.json.lock.4243.0123456789ab.tmp',
      'store.json.x4244.0123456789ab.tmp',
      'store.json.4245.0123456789ab.tmp.bak',
      'store.json.4246.0123456789a.tmp',
      'other.json.4247.0123456789ab.tmp',
    ]
    for (const [i, name] of names.entries()) await lockLeft('', 1000 * (i + 1), join(dir, name))
    const files = await temporaryFiles(join(dir, 'store.json'))
    expect(files.sort((a, b) => a.ageMs - b.ageMs)).toEqual([
      {path: join(dir, names[0]!), draft: false, ageMs: 1000},
      {path: join(dir, names[1]!), draft: true, ageMs: 2000},
    ])
  })

  test('leaves out a file gone between the listing and its stat, and lists nothing in a missing directory', async () => {
    await writeFile(join(dir, 'store.json.4242.0123456789ab.tmp'), '')
    hooks.onTempStat = (at) => unlink(at)
    expect(await temporaryFiles(join(dir, 'store.json'))).toEqual([])
    expect(await temporaryFiles(join(dir, 'missing', 'store.json'))).toEqual([])
  })
})

describe('errorCode', () => {
  test.each([
    ['an error with a code', Object.assign(new Error('gone'), {code: 'ENOENT'}), 'ENOENT'],
    ['an object with a numeric code', {code: 5}, '5'],
    ['an error without a code', new Error('no code'), undefined],
    ['null', null, undefined],
    ['a string', 'ENOENT', undefined],
    ['undefined', undefined, undefined],
  ])('of %s is %s', (_, error, expected) => {
    expect(errorCode(error)).toBe(expected)
  })
})
