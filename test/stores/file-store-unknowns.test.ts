/**
 * FileStore where the system will not say what it is asked (Deno without `--allow-sys=hostname` or without
 * `--allow-run`, docs/runtimes.md): a host name that cannot be read, and a process whose liveness cannot be told.
 * Neither disables the store; neither lets another process take a live owner's lease.
 */
import {spawnSync} from 'node:child_process'
import {mkdtemp, rm} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

const system = vi.hoisted(() => ({hostnameRefused: false}))
vi.mock('node:os', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:os')>()
  return {
    ...actual,
    hostname: () => {
      // What Deno's os.hostname() throws without --allow-sys=hostname: NotCapable, with no code.
      if (system.hostnameRefused)
        throw Object.assign(new Error('Requires sys access to "hostname"'), {name: 'NotCapable'})
      return actual.hostname()
    },
  }
})

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'file-unknowns-'))
  system.hostnameRefused = false
  // The host name is read once per module: each test gets a fresh one.
  vi.resetModules()
})
afterEach(async () => {
  await rm(directory, {recursive: true, force: true})
})

const freshFileStore = async () => (await import('../../src/node.ts')).FileStore
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString())

describe('FileStore without a host name (os.hostname() throws)', () => {
  it('stores, reads, lists and leases as usual, naming no host in its lease', async () => {
    system.hostnameRefused = true
    const FileStore = await freshFileStore()
    const file = join(directory, 'store.json')
    const store = new FileStore(file)
    await store.set('session', {id: 's1'})
    expect(await store.get('session')).toEqual({id: 's1'})
    expect(await store.list('sess')).toEqual(['session'])
    const lease = await store.acquire('owner', 10_000)
    expect(lease?.token).toBe(1)
    expect(await new FileStore(file).acquire('owner', 10_000)).toBeUndefined()
    expect(await new FileStore(file).get('owner')).toMatchObject({token: 1, pid: process.pid, host: ''})
  })

  it('judges a lease by its age alone, even one naming a dead process of this host: held until it expires', async () => {
    const file = join(directory, 'store.json')
    const here = hostname()
    const writer = new (await freshFileStore())(file)
    await writer.set('owner', {token: 4, expiresAt: Date.now() + 60_000, pid: deadPid(), host: here})
    vi.resetModules()
    system.hostnameRefused = true
    const store = new (await freshFileStore())(file)
    expect(await store.acquire('owner', 10_000)).toBeUndefined()
    await store.set('owner', {token: 4, expiresAt: Date.now() - 1, pid: deadPid(), host: here})
    expect((await store.acquire('owner', 10_000))?.token).toBe(5)
  })
})

describe('FileStore when the liveness of a process cannot be told (process.kill throws an error without a code)', () => {
  it('never takes the lease of its owner: a live owner stays the only one', async () => {
    const FileStore = await freshFileStore()
    const file = join(directory, 'store.json')
    const owner = await new FileStore(file).acquire('session', 10_000)
    expect(owner?.token).toBe(1)
    // What Deno's process.kill throws without --allow-run: NotCapable, with no code.
    vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('Requires run access'), {name: 'NotCapable'})
    })
    expect(await new FileStore(file).acquire('session', 10_000)).toBeUndefined()
    expect(await owner!.renew()).toBe(true)
  })
})
