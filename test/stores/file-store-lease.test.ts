/**
 * Issue 16: `FileStore` leases, kept as records of its file under its lock: one owner per session across the
 * processes that share the file.
 */
import {spawnSync} from 'node:child_process'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {isLeaseLost} from '../../src/index.ts'
import {FileStore} from '../../src/node.ts'
import {expectLeaseContract} from '../fixtures/lease-contract.ts'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'file-lease-'))
})
afterEach(async () => {
  await rm(directory, {recursive: true, force: true})
})

/** The pid of a process that has exited. */
function deadPid(): string {
  return spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString()
}

describe('FileStore leases', () => {
  it('gives one live lease per name, larger tokens to each next owner, and refuses the writes of a stale one', async () => {
    // A longer TTL: each renewal is a file write flushed to disk, slow on a busy machine.
    await expectLeaseContract(new FileStore(join(directory, 'store.json')), 'session-a', 1000)
  })

  it('sees the leases other instances (other processes) took, through the file', async () => {
    const file = join(directory, 'store.json')
    const lease = await new FileStore(file).acquire('shared', 10_000)
    expect(lease?.token).toBe(1)
    expect(await new FileStore(file).acquire('shared', 10_000)).toBeUndefined()
    await lease!.release()
    expect((await new FileStore(file).acquire('shared', 10_000))?.token).toBe(2)
  })

  it('takes over at once a lease whose owner process is dead on this host, whatever its TTL', async () => {
    const file = join(directory, 'store.json')
    const dead = deadPid()
    const store = new FileStore(file)
    await store.set('other', 1)
    // As a killed process left it: its pid, this host, an hour to go.
    const text = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    text['shared'] = {token: 7, expiresAt: Date.now() + 3_600_000, pid: Number(dead), host: hostname()}
    await writeFile(file, JSON.stringify(text))
    const taken = await new FileStore(file).acquire('shared', 10_000)
    expect(taken?.token).toBe(8)
    // Alive (this process), it is not taken over.
    expect(await new FileStore(file).acquire('shared', 10_000)).toBeUndefined()
  })
})

describe('FileStore leases: the records under a lease name', () => {
  const host = hostname()
  const later = () => Date.now() + 60_000

  it.each([
    ['null', () => null],
    ['a token that is no number', () => ({token: '7', expiresAt: later(), pid: process.pid, host})],
    ['an expiry that is no number', () => ({token: 7, expiresAt: 'later', pid: process.pid, host})],
    ['a pid that is no number', () => ({token: 7, expiresAt: later(), pid: 'me', host})],
    ['a host that is no string', () => ({token: 7, expiresAt: later(), pid: process.pid, host: 5})],
  ])('a record of %s is no lease: the lease is taken, with token 1', async (_, record) => {
    const store = new FileStore(join(directory, 'store.json'))
    await store.set('shared', record())
    expect((await store.acquire('shared', 10_000))?.token).toBe(1)
  })

  it.each([
    ['of another host, its pid dead here', 'held', () => ({pid: Number(deadPid()), host: `not-${host}`})],
    ['of this process', 'held', () => ({pid: process.pid, host})],
    ['of a dead process of this host', 'taken', () => ({pid: Number(deadPid()), host})],
  ])('a lease of an hour %s is %s', async (_, expected, owner) => {
    const store = new FileStore(join(directory, 'store.json'))
    await store.set('shared', {token: 7, expiresAt: later(), ...owner()})
    expect((await store.acquire('shared', 10_000))?.token).toBe(expected === 'held' ? undefined : 8)
  })

  it('a lease expiring this very millisecond is expired: taken', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: 1_700_000_000_000})
    try {
      const store = new FileStore(join(directory, 'store.json'))
      await store.set('shared', {token: 3, expiresAt: Date.now(), pid: process.pid, host})
      expect((await store.acquire('shared', 10_000))?.token).toBe(4)
    } finally {
      vi.useRealTimers()
    }
  })

  it('a lease whose record is gone is neither renewed nor written again, is released quietly, and fences every write', async () => {
    const store = new FileStore(join(directory, 'store.json'))
    const lease = await store.acquire('shared', 10_000)
    await store.delete('shared')
    expect(await lease!.renew()).toBe(false)
    expect(await store.get('shared')).toBeUndefined()
    await lease!.release()
    expect(await store.get('shared')).toBeUndefined()
    const refused = await store.set('record', 1, {lease: 'shared', token: lease!.token}).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(isLeaseLost(refused)).toBe(true)
  })

  it('a lease released twice writes once', async () => {
    const file = join(directory, 'store.json')
    const store = new FileStore(file)
    const lease = await store.acquire('shared', 10_000)
    await lease!.release()
    const written = await readFile(`${file}.journal`, 'utf8')
    await lease!.release()
    expect(await readFile(`${file}.journal`, 'utf8')).toBe(written)
    expect(await store.get('shared')).toMatchObject({token: 1, expiresAt: 0})
  })

  it.each([0, -1, 1.5, Number.NaN])('a TTL of %s is a TypeError', async (ttlMs) => {
    await expect(new FileStore(join(directory, 'store.json')).acquire('shared', ttlMs)).rejects.toThrow(
      new TypeError(`A lease TTL must be a positive integer of milliseconds, got ${String(ttlMs)}`),
    )
  })
})
