/**
 * A FileStore write reaches the disk before it resolves: a journal line is flushed (fdatasync) before the write
 * resolves, and a new file is flushed before it is renamed over the old. Observed on a real FileStore in a
 * temporary directory, through node:fs wrapped to log the calls in order (the calls themselves are the real ones).
 */
import * as fs from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, test, vi} from 'vitest'
import {FileStore} from '../../src/node.ts'

const log: string[] = []

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>()
  const paths = new Map<number, string>()
  const name = (path: fs.PathLike): string => String(path).replace(/^.*\//, '')
  return {
    ...real,
    openSync: (...args: Parameters<typeof real.openSync>) => {
      const fd = real.openSync(...args)
      paths.set(fd, name(args[0]))
      return fd
    },
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      real.fdatasync(fd, (error) => {
        log.push(`flushed ${paths.get(fd) ?? fd}`)
        callback(error)
      })
    },
    fdatasyncSync: (fd: number) => {
      real.fdatasyncSync(fd)
      log.push(`flushed ${paths.get(fd) ?? fd}`)
    },
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      log.push(`renamed ${name(from)} to ${name(to)}`)
      real.renameSync(from, to)
    },
  }
})

let dir: string
beforeEach(async () => {
  log.length = 0
  dir = await mkdtemp(join(tmpdir(), 'file-store-flush-'))
})
afterEach(async () => {
  await rm(dir, {recursive: true, force: true})
})

describe('FileStore flushes before a write resolves', () => {
  test('every write reaches the disk before it resolves: a journal line is flushed, a new file is flushed before it is renamed over the old', async () => {
    const store = new FileStore(join(dir, 'state.json'))
    await store.set('small', 1) // no file yet: written whole
    await store.set('large', 'x'.repeat(1 << 20)) // longer than the journal may grow: folded into a new file
    const beforeDelete = log.length
    await store.delete('small') // one journal line
    expect(log.slice(beforeDelete)).toEqual(['flushed state.json.journal'])

    const renames = log.filter((entry) => entry.endsWith(' to state.json'))
    expect(renames).toHaveLength(2)
    for (const rename of renames) {
      const temp = rename.slice('renamed '.length, -' to state.json'.length)
      expect(temp).toMatch(/^state\.json\..+\.tmp$/)
      const flushed = log.indexOf(`flushed ${temp}`)
      expect(flushed, `${temp} flushed`).toBeGreaterThanOrEqual(0)
      expect(flushed, `${temp} flushed before the rename`).toBeLessThan(log.indexOf(rename))
    }
    const reopened = new FileStore(join(dir, 'state.json'))
    expect(await reopened.get('large')).toHaveLength(1 << 20)
    expect(await reopened.get('small')).toBeUndefined()
  })
})
