import {execFile, fork, spawn, type ChildProcess} from 'node:child_process'
import {existsSync, writeFileSync} from 'node:fs'
import {mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi} from 'vitest'
import {type JsonValue, type ResumptionStore} from '../../src/index.ts'
import {FileStore} from '../../src/node.ts'
import {expectSessionSurvivesRestart, expectStoreContract} from '../fixtures/store-contract.ts'

// Counts file writes (one flush to disk each: a journal line, or a new file before its rename) and locks taken
// (one link each), and records how old a lock is when taken, without changing what they do.
const fsCalls = vi.hoisted(() => ({
  flushes: 0,
  bytes: 0,
  lockAgesMs: [] as number[],
  touched: [] as {path: string; at: number}[],
  noHardLinks: false,
}))
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return {
    ...actual,
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      fsCalls.flushes++
      actual.fdatasync(fd, callback)
    },
    writeFileSync: (...args: Parameters<typeof actual.writeFileSync>) => {
      if (typeof args[1] === 'string') fsCalls.bytes += Buffer.byteLength(args[1])
      actual.writeFileSync(...args)
    },
  }
})
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...actual,
    utimes: (...args: Parameters<typeof actual.utimes>) => {
      fsCalls.touched.push({path: String(args[0]), at: Date.now()})
      return actual.utimes(...args)
    },
    link: async (...args: Parameters<typeof actual.link>) => {
      if (fsCalls.noHardLinks) throw Object.assign(new Error('EPERM: operation not permitted, link'), {code: 'EPERM'})
      fsCalls.lockAgesMs.push(Date.now() - (await actual.stat(args[0])).mtimeMs)
      return actual.link(...args)
    },
  }
})

const root = fileURLToPath(new URL('../../', import.meta.url))
const writer = join(root, 'test/fixtures/file-store-writer.mjs')
let out = ''
let entry = ''
let dir = ''
let file = ''

// Node 20 cannot run .ts: the child processes import the ./node entry point compiled with the build settings.
// Only that entry point, into a temporary directory, so the test does not depend on (or overwrite) dist.
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'file-store-build-'))
  await writeFile(join(out, 'package.json'), '{"type": "module"}')
  await writeFile(
    join(out, 'tsconfig.json'),
    JSON.stringify({
      extends: join(root, 'tsconfig.build.json'),
      compilerOptions: {
        outDir: out,
        rootDir: join(root, 'src'),
        declaration: false,
        declarationMap: false,
        sourceMap: false,
      },
      files: [join(root, 'src/node.ts')],
      include: [],
    }),
  )
  await promisify(execFile)(process.execPath, [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-p',
    join(out, 'tsconfig.json'),
  ])
  entry = join(out, 'node.js')
}, 60_000)

// Here rather than as beforeAll's teardown, which is not registered when the build fails.
afterAll(async () => {
  if (out !== '') await rm(out, {recursive: true, force: true})
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-store-'))
  file = join(dir, 'state', 'resumption.json')
  fsCalls.flushes = 0
  fsCalls.bytes = 0
  fsCalls.lockAgesMs = []
  fsCalls.touched = []
  fsCalls.noHardLinks = false
})

afterEach(async () => {
  await rm(dir, {recursive: true, force: true})
})

/** A store keeps its lock across back-to-back writes, and gives it up at the next turn of the event loop. */
async function lockReleased(): Promise<void> {
  await vi.waitFor(() => expect(existsSync(`${file}.lock`)).toBe(false))
}

/**
 * What the store's files hold, read without FileStore: the JSON file, then each whole line of its journal (a list of
 * `[key, value]` set and `[key]` deleted); a torn last line is left out.
 */
async function onDisk(): Promise<{[key: string]: JsonValue}> {
  const entries = new Map(
    Object.entries(existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as {[key: string]: JsonValue}) : {}),
  )
  const journal = await readFile(`${file}.journal`, 'utf8').catch(() => '')
  for (const line of journal.split('\n').slice(0, -1)) {
    for (const [key, ...value] of JSON.parse(line) as [string, JsonValue?][]) {
      if (value.length === 0) entries.delete(key)
      else entries.set(key, value[0]!)
    }
  }
  return Object.fromEntries(entries)
}

/** The JSON file and every whole line of its journal parse; the torn lines seen (none, when writes are atomic). */
async function tornNow(): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => undefined)
  const journal = await readFile(`${file}.journal`, 'utf8').catch(() => '')
  const torn: string[] = []
  for (const piece of [...(text === undefined ? [] : [text]), ...journal.split('\n').slice(0, -1)]) {
    try {
      JSON.parse(piece)
    } catch {
      torn.push(piece.slice(0, 80))
    }
  }
  return torn
}

/** Files left in the store's directory besides the file and its journal. */
async function leftovers(): Promise<string[]> {
  return (await readdir(join(dir, 'state'))).filter(
    (name) => name !== 'resumption.json' && name !== 'resumption.json.journal',
  )
}

/** Whether `promise` settles within `withinMs` of real time while timers stand still (turns of the event loop go on). */
async function settlesUnaided(promise: Promise<unknown>, withinMs = 5000): Promise<boolean> {
  const outcome = {settled: false}
  void promise.then(() => (outcome.settled = true))
  const start = performance.now()
  while (!outcome.settled && performance.now() - start < withinMs) await new Promise((resolve) => setImmediate(resolve))
  return outcome.settled
}

function startWriter(args: string[]): ChildProcess {
  return fork(writer, [entry, file, ...args], {execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc']})
}

function message(child: ChildProcess, expected: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (value: unknown) => {
      if (value !== expected) return
      child.off('message', onMessage)
      resolve()
    }
    child.on('message', onMessage)
    child.once('exit', (code) => {
      reject(new Error(`writer exited (${String(code)}) before "${expected}"`))
    })
  })
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['--eval', ''], {stdio: 'ignore'})
  await exited(child)
  return child.pid!
}

async function writeLock(owner: {pid: number; host: string} | '', ageMs = 0): Promise<void> {
  await mkdir(join(dir, 'state'), {recursive: true})
  await writeFile(`${file}.lock`, owner === '' ? '' : JSON.stringify({...owner, token: 'someone-else'}))
  const at = (Date.now() - ageMs) / 1000
  await utimes(`${file}.lock`, at, at)
}

describe('FileStore: the ResumptionStore contract', () => {
  test('round trip of JSON values; a missing key is undefined; delete removes', async () => {
    await expectStoreContract(new FileStore(file))
    expect(Object.keys(await onDisk())).toHaveLength(6)
  })

  test('survives the instance: a new FileStore on the same path reads what the first wrote', async () => {
    await new FileStore(file).set('session', {sessionId: 's-1', protocolVersion: '2025-06-18'})
    expect(await new FileStore(file).get('session')).toEqual({sessionId: 's-1', protocolVersion: '2025-06-18'})
  })

  test('a get sees every earlier set and delete of its instance, even unawaited', async () => {
    const store = new FileStore(file)
    void store.set('a', 1)
    void store.set('b', 2)
    void store.delete('b')
    expect(await store.get('a')).toBe(1)
    expect(await store.get('b')).toBeUndefined()
  })

  test('stores the value as it was when set was called', async () => {
    const store = new FileStore(file)
    const value = {streams: {standalone: 'e1'}}
    const written = store.set('cursors', value)
    value.streams.standalone = 'mutated'
    await written
    expect(await new FileStore(file).get('cursors')).toEqual({streams: {standalone: 'e1'}})
  })

  test('keys are data: __proto__ and constructor round-trip without touching a prototype', async () => {
    const store = new FileStore(file)
    await store.set('__proto__', {polluted: true})
    await store.set('constructor', 'c')
    expect(await new FileStore(file).get('__proto__')).toEqual({polluted: true})
    expect(await store.get('constructor')).toBe('c')
    expect(await store.get('toString')).toBeUndefined()
    expect(({} as {polluted?: boolean}).polluted).toBeUndefined()
  })

  test('rejects what is not JSON and options that make no sense, naming them', async () => {
    const store = new FileStore(file)
    await expect(store.set('a', undefined as unknown as JsonValue)).rejects.toThrow(TypeError)
    await expect(store.set('a', {big: 1n} as unknown as JsonValue)).rejects.toThrow(TypeError)
    expect(() => new FileStore('')).toThrow(/path/)
    expect(() => new FileStore(file, {staleLockMs: 0})).toThrow(/staleLockMs/)
    expect(() => new FileStore(file, {onError: 'log' as unknown as () => void})).toThrow(/onError/)
  })

  test('the file is created with mode 0600 (it holds session IDs), its directory created', async () => {
    await new FileStore(file).set('a', 1)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  test('keeps a session for the transport: a new FileStore on the same file finds it again', async () => {
    await expectSessionSurvivesRestart((): ResumptionStore => new FileStore(file))
  })
})

describe('FileStore: writes', () => {
  test('1000 back-to-back sets cost one file write', async () => {
    const store = new FileStore(file)
    await Promise.all(Array.from({length: 1000}, (_, i) => store.set(`key-${i}`, i)))
    expect(fsCalls.flushes).toBe(1)
    expect(Object.keys(await onDisk())).toHaveLength(1000)
  })

  test('sets issued while a write is under way coalesce into one follow-up write', async () => {
    const store = new FileStore(file)
    const first = store.set('first', 0)
    // The lock is taken once the write is under way.
    await vi.waitUntil(() => existsSync(`${file}.lock`), {interval: 1})
    await Promise.all([first, ...Array.from({length: 100}, (_, i) => store.set(`key-${i}`, i))])
    expect(fsCalls.flushes).toBe(2)
    expect(Object.keys(await onDisk())).toHaveLength(101)
  })

  test('sets made by separate callbacks of one turn of the event loop share one flush', async () => {
    const store = new FileStore(file)
    // Callbacks queued together run in one turn, each followed by its own microtasks, as the data of many sockets
    // does. Immediates, not timers: timers of 0 ms made across a millisecond boundary (a loaded machine) run in two.
    const fromCallbacks = Array.from(
      {length: 10},
      (_, i) => new Promise<void>((resolve) => setImmediate(() => resolve(store.set(`key-${i}`, i)))),
    )
    await Promise.all(fromCallbacks)
    expect(fsCalls.flushes).toBe(1)
    expect(Object.keys(await onDisk())).toHaveLength(10)
  })

  test('writes of many keys coming steadily share flushes: one per 5 ms at most, not one per write', async () => {
    const store = new FileStore(file)
    const writes: Promise<void>[] = []
    // Twenty streams, each moving its cursor every 1 to 3 ms, for 150 ms.
    const timers = Array.from({length: 20}, (_, stream) => {
      let position = 0
      return setInterval(
        () => writes.push(store.set(`stream-${stream}`, {lastEventId: String(position++)})),
        1 + (stream % 3),
      )
    })
    await sleep(150)
    for (const timer of timers) clearInterval(timer)
    await Promise.all(writes)
    expect(writes.length).toBeGreaterThan(500)
    expect(fsCalls.flushes).toBeLessThanOrEqual(150 / 5 + 5)
  })

  test('after a write of one key the next write is flushed at once; after a write of several keys it waits 5 ms for more', async () => {
    // Timers and the clock stand still: a write that waits for a timer does not settle until they are moved on.
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'Date']})
    try {
      const store = new FileStore(file)
      await store.set('a', 1)
      expect(await settlesUnaided(store.set('a', 2))).toBe(true)
      // Several keys: two sets, or a set and a lease taken.
      for (const several of [
        () => [store.set('b', 1), store.set('c', 1)],
        () => [store.set('b', 2), store.acquire('owner', 60_000)],
      ]) {
        await Promise.all(several())
        const gathering = store.set('a', 3)
        expect(await settlesUnaided(gathering, 300)).toBe(false)
        await vi.advanceTimersByTimeAsync(5)
        expect(await settlesUnaided(gathering)).toBe(true)
      }
      expect(await onDisk()).toMatchObject({a: 3, b: 2, c: 1})
    } finally {
      vi.useRealTimers()
    }
  })

  test('deleting a key that is not there writes nothing', async () => {
    await new FileStore(file).delete('absent')
    expect(fsCalls.flushes).toBe(0)
    expect(existsSync(file)).toBe(false)
  })

  test('atomic: the file and every whole line of its journal parse at every moment of 500 writes, and no temporary file is left', async () => {
    const store = new FileStore(file)
    await store.set('seed', 0)
    const writing = new AbortController()
    let reads = 0
    const torn: string[] = []
    const reader = (async () => {
      while (!writing.signal.aborted) {
        torn.push(...(await tornNow()))
        reads++
      }
    })()
    // Sizes vary, so that a half-written file would show as truncated JSON.
    for (let i = 0; i < 500; i++) await store.set(`key-${i % 20}`, 'x'.repeat((i * 997) % 20_000))
    writing.abort()
    await reader
    expect(torn).toEqual([])
    expect(reads).toBeGreaterThan(50)
    expect(fsCalls.flushes).toBe(501)
    await lockReleased()
    expect(await leftovers()).toEqual([])
  })

  test('temporary files abandoned by a killed writer (data, lock draft) are swept once old; a fresh one stays', async () => {
    await mkdir(join(dir, 'state'), {recursive: true})
    const old = `${file}.4242.0123456789ab.tmp`
    const oldDraft = `${file}.lock.4244.0123456789ab.tmp`
    const fresh = `${file}.4243.0123456789ab.tmp`
    for (const path of [old, oldDraft, fresh]) await writeFile(path, '{"half')
    const at = (Date.now() - 60_000) / 1000
    await utimes(old, at, at)
    await utimes(oldDraft, at, at)
    await new FileStore(file).set('a', 1)
    expect(existsSync(old)).toBe(false)
    expect(existsSync(oldDraft)).toBe(false)
    expect(existsSync(fresh)).toBe(true)
  })
})

describe('FileStore: a corrupt or unreadable file', () => {
  test.each([
    ['invalid JSON', '{"session": {"sessionId": "s-1"'],
    ['an array', '[1, 2]'],
    ['null', 'null'],
    ['an empty file', ''],
  ])('%s: get resolves undefined and reports; the next set rewrites the file', async (_, content) => {
    await mkdir(join(dir, 'state'), {recursive: true})
    await writeFile(file, content)
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    expect(await store.get('session')).toBeUndefined()
    expect(errors).toHaveLength(1)
    expect(errors[0]!.message).toMatch(/resumption\.json (is not valid JSON|does not hold a JSON object)/)
    await store.set('session', {sessionId: 's-2'})
    expect(errors).toHaveLength(2)
    expect(await onDisk()).toEqual({session: {sessionId: 's-2'}})
    expect(await store.get('session')).toEqual({sessionId: 's-2'})
    expect(errors).toHaveLength(2)
  })

  test('a listener that throws does not fail the get', async () => {
    await mkdir(join(dir, 'state'), {recursive: true})
    await writeFile(file, 'not json')
    const store = new FileStore(file, {
      onError: () => {
        throw new Error('listener bug')
      },
    })
    expect(await store.get('a')).toBeUndefined()
  })

  test('unreadable (a directory in its place): get reports and resolves undefined; set rejects, replacing nothing', async () => {
    await mkdir(file, {recursive: true})
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    expect(await store.get('a')).toBeUndefined()
    expect(errors[0]?.message).toMatch(/cannot read/)
    await expect(store.set('a', 1)).rejects.toMatchObject({code: 'EISDIR'})
    expect(existsSync(`${file}.lock`)).toBe(false)
    // A failed write does not block the next one.
    await rm(file, {recursive: true})
    await store.set('a', 2)
    expect(await onDisk()).toEqual({a: 2})
  })
})

describe('FileStore: the lock file', () => {
  test('a lock whose process is dead is broken at once', async () => {
    await writeLock({pid: await deadPid(), host: hostname()})
    const started = performance.now()
    await new FileStore(file).set('a', 1)
    expect(performance.now() - started).toBeLessThan(1000)
    await lockReleased()
  })

  test('a lock older than staleLockMs is broken even when its process lives', async () => {
    await writeLock({pid: process.pid, host: hostname()}, 20_000)
    await new FileStore(file).set('a', 1)
    expect(await onDisk()).toEqual({a: 1})
  })

  test('an empty lock (its writer died between create and write) is broken once over a second old', async () => {
    await writeLock('', 1_500)
    await new FileStore(file).set('a', 1)
    expect(await onDisk()).toEqual({a: 1})
  })

  test('a live lock is waited for, then taken', async () => {
    await writeLock({pid: process.pid, host: hostname()})
    const started = performance.now()
    const write = new FileStore(file).set('a', 1)
    await sleep(150)
    expect(existsSync(file)).toBe(false)
    await rm(`${file}.lock`)
    await write
    expect(performance.now() - started).toBeGreaterThanOrEqual(150)
    expect(await onDisk()).toEqual({a: 1})
  })

  test('a lock taken after a long wait is young: it shares its mtime with the draft, refreshed while waiting', async () => {
    await writeLock({pid: process.pid, host: hostname()})
    const write = new FileStore(file, {staleLockMs: 400}).set('a', 1)
    // The holder lives and keeps its lock young for longer than the waiter's staleLockMs.
    for (let i = 0; i < 6; i++) {
      await sleep(100)
      const at = Date.now() / 1000
      await utimes(`${file}.lock`, at, at)
    }
    await rm(`${file}.lock`)
    await write
    expect(fsCalls.lockAgesMs.length).toBeGreaterThan(10)
    expect(fsCalls.lockAgesMs.at(-1)).toBeLessThan(200)
  })

  test('without hard links (FAT, some network shares) the lock is created in place, and still excludes', async () => {
    fsCalls.noHardLinks = true
    const store = new FileStore(file)
    await store.set('a', 1)
    await lockReleased()
    await writeLock({pid: process.pid, host: hostname()})
    const write = store.set('b', 2)
    await sleep(100)
    expect(await onDisk()).toEqual({a: 1})
    await rm(`${file}.lock`)
    await write
    expect(await onDisk()).toEqual({a: 1, b: 2})
    await lockReleased()
    expect(await leftovers()).toEqual([])
  })

  test("another host's lock is judged by age alone (staleLockMs)", async () => {
    await writeLock({pid: await deadPid(), host: `not-${hostname()}`})
    const started = performance.now()
    await new FileStore(file, {staleLockMs: 300}).set('a', 1)
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
  })

  test('aborting the signal rejects a write waiting for the lock, and later writes; reads go on', async () => {
    await writeLock({pid: process.pid, host: hostname()})
    const controller = new AbortController()
    const store = new FileStore(file, {signal: controller.signal})
    const write = store.set('a', 1)
    await sleep(50)
    controller.abort(new Error('shutting down'))
    await expect(write).rejects.toThrow('shutting down')
    await expect(store.set('b', 2)).rejects.toThrow('shutting down')
    expect(await store.get('a')).toBeUndefined()
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({token: 'someone-else'})
  })
})

describe('FileStore: back-to-back writes keep the lock', () => {
  test('a stream of 40 writes, each issued as the one before resolves, takes the lock once and writes 40 times', async () => {
    const store = new FileStore(file)
    for (let i = 0; i < 40; i++) await store.set('cursor', {lastEventId: String(i)})
    expect(fsCalls.flushes).toBe(40)
    expect(fsCalls.lockAgesMs).toHaveLength(1)
    expect(await onDisk()).toEqual({cursor: {lastEventId: '39'}})
    await lockReleased()
  })

  test('a lock kept longer than staleLockMs stays young: others never judge it stale', async () => {
    const store = new FileStore(file, {staleLockMs: 200})
    const started = Date.now()
    for (let i = 0; Date.now() < started + 800; i++) await store.set('cursor', i)
    const ended = Date.now()
    expect(fsCalls.lockAgesMs).toHaveLength(1)
    const touches = fsCalls.touched.filter(({path}) => path === `${file}.lock`).map(({at}) => at)
    const times = [started, ...touches, ended]
    const longestUntouchedMs = Math.max(...times.slice(1).map((at, i) => at - times[i]!))
    expect(longestUntouchedMs).toBeLessThan(200)
  })

  test('a kept lock left unrefreshed for most of staleLockMs (the event loop was blocked) is taken again, the file re-read', async () => {
    const store = new FileStore(file, {staleLockMs: 200})
    await store.set('a', 1)
    const until = Date.now() + 180
    while (Date.now() < until) {
      // Blocked: meanwhile another writer could have judged the lock stale, broken it, and written.
    }
    writeFileSync(file, JSON.stringify({a: 1, other: 'written meanwhile'}))
    await store.set('b', 2)
    expect(fsCalls.lockAgesMs).toHaveLength(2)
    expect(await onDisk()).toEqual({a: 1, other: 'written meanwhile', b: 2})
  })

  test('a process that never stops writing lets another one in: each of its writes lands within a second', async () => {
    const child = startWriter(['loop'])
    await message(child, 'progress')
    const store = new FileStore(file)
    const waits: number[] = []
    try {
      for (let i = 0; i < 20; i++) {
        const started = performance.now()
        await store.set(`mine-${i}`, i)
        waits.push(performance.now() - started)
        await sleep(10)
      }
    } finally {
      child.kill('SIGKILL')
      await exited(child)
    }
    expect(Math.max(...waits)).toBeLessThan(1000)
    const data = await onDisk()
    for (let i = 0; i < 20; i++) expect(data[`mine-${i}`]).toBe(i)
  }, 30_000)

  test('process.exit() right after a write leaves no lock behind', async () => {
    const child = startWriter(['exit'])
    expect(await exited(child)).toBe(0)
    expect(await onDisk()).toEqual({written: true})
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
})

describe('FileStore: two processes', () => {
  test('two processes writing 200 distinct keys each to one file: all 400 present, the file and its journal always parse', async () => {
    const children = ['a', 'b'].map((prefix) => startWriter(['keys', prefix, '200']))
    const errors: unknown[] = []
    for (const child of children) child.on('message', (value) => typeof value === 'object' && errors.push(value))
    await Promise.all(children.map((child) => message(child, 'ready')))
    const writing = new AbortController()
    let reads = 0
    const torn: string[] = []
    const reader = (async () => {
      while (!writing.signal.aborted) {
        torn.push(...(await tornNow()))
        reads++
      }
    })()
    const done = children.map((child) => message(child, 'done'))
    for (const child of children) child.send('go')
    await Promise.all(done)
    expect(await Promise.all(children.map(exited))).toEqual([0, 0])
    writing.abort()
    await reader
    const data = await onDisk()
    expect(Object.keys(data)).toHaveLength(400)
    for (const prefix of ['a', 'b']) {
      for (let i = 0; i < 200; i++) expect(data[`${prefix}-${i}`]).toEqual({i, by: prefix})
    }
    expect(torn).toEqual([])
    expect(reads).toBeGreaterThan(0)
    expect(errors).toEqual([])
    expect(await leftovers()).toEqual([])
  }, 60_000)

  test('a writer killed with SIGKILL mid-write leaves a parseable file and no lock that blocks a new writer', async () => {
    for (let round = 0; round < 6; round++) {
      const child = startWriter(['loop'])
      await message(child, 'progress')
      await sleep(3 + round * 7)
      child.kill('SIGKILL')
      await exited(child)
      const data = await onDisk()
      expect(typeof data['counter']).toBe('number')
      const started = performance.now()
      await new FileStore(file).set('after-crash', round)
      expect(performance.now() - started).toBeLessThan(1000)
      expect(await new FileStore(file).get('after-crash')).toBe(round)
      await lockReleased()
    }
  }, 60_000)
})

describe('FileStore: the journal', () => {
  /** Bytes written per one-key write of `valueBytes`, with `keys` keys of that size in the file; checks the journal's bound after each. */
  async function bytesPerWrite(
    keys: number,
    writes: number,
    valueBytes: number,
  ): Promise<{bytes: number; folds: number}> {
    const store = new FileStore(file)
    await Promise.all(Array.from({length: keys}, (_, i) => store.set(`key-${i}`, 'v'.repeat(valueBytes))))
    const before = fsCalls.bytes
    let folds = 0
    for (let i = 0; i < writes; i++) {
      const inode = (await stat(file)).ino
      await store.set(`key-${(i * 7) % keys}`, String(i).padStart(valueBytes, 'w'))
      if ((await stat(file)).ino !== inode) folds++
      // Folded into the file once it outgrows the file (or 64 KiB), before it grows past that by a line.
      const journal = (await stat(`${file}.journal`).catch(() => undefined))?.size ?? 0
      expect(journal).toBeLessThanOrEqual(Math.max(64 * 1024, (await stat(file)).size))
    }
    await lockReleased()
    return {bytes: (fsCalls.bytes - before) / writes, folds}
  }

  test('bytes written per write do not grow with the number of keys: one-key writes cost as much with 200 keys as with 10', async () => {
    const few = await bytesPerWrite(10, 500, 1000)
    await rm(join(dir, 'state'), {recursive: true})
    const many = await bytesPerWrite(200, 500, 1000)
    // The large file was folded again during the writes: its rewrites are part of what was measured.
    expect(many.folds).toBeGreaterThanOrEqual(2)
    // Rewriting the whole file per write would cost 200 KB a write here; the journal costs its line and, amortized,
    // at most as much again for the folds.
    expect(
      many.bytes,
      `${few.bytes.toFixed(0)} B per write with 10 keys, ${many.bytes.toFixed(0)} B with 1,000`,
    ).toBeLessThanOrEqual(few.bytes * 2)
    expect((await onDisk())[`key-${(499 * 7) % 200}`]).toBe(String(499).padStart(1000, 'w'))
  }, 60_000)

  test('a torn last line (a writer killed mid-append) is left out without a report, and the next write folds the journal away', async () => {
    await new FileStore(file).set('a', 1)
    await new FileStore(file).set('b', 2)
    await writeFile(`${file}.journal`, '[["c",3', {flag: 'a'})
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    expect(await store.get('b')).toBe(2)
    expect(await store.get('c')).toBeUndefined()
    // Appended after the torn line, this write would be lost with it.
    await store.set('d', 4)
    expect(await new FileStore(file).get('d')).toBe(4)
    expect(await onDisk()).toEqual({a: 1, b: 2, d: 4})
    expect(existsSync(`${file}.journal`)).toBe(false)
    expect(errors).toEqual([])
  })

  test('a damaged line inside the journal is reported and skipped, the lines around it apply, and the next write replaces it', async () => {
    await new FileStore(file).set('a', 1)
    await writeFile(`${file}.journal`, '[["b",2]]\nnot a line of changes\n[["c",3],["a"]]\n', {flag: 'a'})
    const errors: Error[] = []
    const store = new FileStore(file, {onError: (error) => errors.push(error)})
    expect(await store.list('')).toEqual(['b', 'c'])
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/resumption\.json\.journal holds a line that is not a list of changes/),
    ])
    await store.set('d', 4)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({b: 2, c: 3, d: 4})
    expect(existsSync(`${file}.journal`)).toBe(false)
  })

  test('a crash after a fold renamed the new file but before it removed the journal: the old journal replayed over the new file changes nothing', async () => {
    const store = new FileStore(file)
    await store.set('a', 1)
    await store.set('b', 1)
    await store.set('a', 2)
    await store.delete('b')
    const journal = await readFile(`${file}.journal`)
    expect(journal.toString().split('\n')).toHaveLength(4)
    await store.set('large', 'x'.repeat(70_000))
    expect(existsSync(`${file}.journal`)).toBe(false)
    await lockReleased()
    // As the crash left it: the new file, and the journal it already holds.
    await writeFile(`${file}.journal`, journal)
    const restarted = new FileStore(file)
    expect(await restarted.get('a')).toBe(2)
    expect(await restarted.get('b')).toBeUndefined()
    expect(await restarted.get('large')).toHaveLength(70_000)
    await restarted.set('a', 3)
    expect(await onDisk()).toEqual({a: 3, large: 'x'.repeat(70_000)})
  })

  test('a writer killed (SIGKILL) in an append, in a fold or between them loses no acknowledged write, and the next writer goes on', async () => {
    for (let round = 0; round < 8; round++) {
      const child = startWriter(['acked'])
      let acked = -1
      child.on('message', (value: {acked?: number}) => (acked = value.acked ?? acked))
      await vi.waitFor(() => expect(acked).toBeGreaterThanOrEqual(round === 0 ? 3 : 0), {timeout: 10_000})
      await sleep(2 + round * 5)
      child.kill('SIGKILL')
      await exited(child)
      const errors: Error[] = []
      const store = new FileStore(file, {onError: (error) => errors.push(error)})
      expect(await store.get('counter')).toBeGreaterThanOrEqual(acked)
      for (const key of await store.list('payload-')) expect(await store.get(key)).toHaveLength(50_000)
      expect(errors).toEqual([])
      await store.set('after-crash', round)
      expect(await new FileStore(file).get('after-crash')).toBe(round)
      await lockReleased()
    }
  }, 60_000)

  test('two processes appending and folding one file while a reader reads it without the lock: no key the reader saw ever vanishes', async () => {
    // 2 KB values: the journal outgrows the file again and again, so each process folds it under the other's appends.
    const children = ['a', 'b'].map((prefix) => startWriter(['keys', prefix, '150', '2000']))
    const errors: unknown[] = []
    for (const child of children) child.on('message', (value) => typeof value === 'object' && errors.push(value))
    await Promise.all(children.map((child) => message(child, 'ready')))
    const writing = new AbortController()
    const vanished: string[] = []
    let reads = 0
    const reader = (async () => {
      const seen = new Set<string>()
      while (!writing.signal.aborted) {
        const keys = new Set(await new FileStore(file).list(''))
        for (const key of seen) if (!keys.has(key)) vanished.push(key)
        for (const key of keys) seen.add(key)
        reads++
      }
    })()
    const done = children.map((child) => message(child, 'done'))
    const inode = existsSync(file) ? (await stat(file)).ino : undefined
    for (const child of children) child.send('go')
    await Promise.all(done)
    writing.abort()
    await reader
    expect(await Promise.all(children.map(exited))).toEqual([0, 0])
    expect((await stat(file)).ino).not.toBe(inode)
    const data = await onDisk()
    expect(Object.keys(data)).toHaveLength(300)
    for (const prefix of ['a', 'b']) {
      for (let i = 0; i < 150; i++) expect(data[`${prefix}-${i}`]).toEqual({i, by: prefix, pad: 'p'.repeat(2000)})
    }
    expect(vanished).toEqual([])
    expect(reads).toBeGreaterThan(10)
    expect(errors).toEqual([])
  }, 60_000)
})
