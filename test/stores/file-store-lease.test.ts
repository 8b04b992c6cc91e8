/**
 * Issue 16: `FileStore` leases, kept as records of its file under its lock: one owner per session across the
 * processes that share the file.
 */
import {spawnSync} from 'node:child_process'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {FileStore} from '../../src/node.ts'
import {expectLeaseContract} from '../fixtures/lease-contract.ts'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'file-lease-'))
})
afterEach(async () => {
  await rm(directory, {recursive: true, force: true})
})

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
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString()
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
