/**
 * A FileStore write reaches the disk before it replaces the file: the temporary file is flushed (fdatasync) and
 * the flush has completed before the rename, for every write, small or large. Observed on a real FileStore in a
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

describe('FileStore flushes before it renames', () => {
  test('every write, of a few bytes or of a megabyte, flushes its temporary file to disk before renaming it over the file', async () => {
    const store = new FileStore(join(dir, 'state.json'))
    await store.set('small', 1)
    await store.set('large', 'x'.repeat(1 << 20))
    await store.delete('small')

    const renames = log.filter((entry) => entry.endsWith(' to state.json'))
    expect(renames).toHaveLength(3)
    for (const rename of renames) {
      const temp = rename.slice('renamed '.length, -' to state.json'.length)
      expect(temp).toMatch(/^state\.json\..+\.tmp$/)
      const flushed = log.indexOf(`flushed ${temp}`)
      expect(flushed, `${temp} flushed`).toBeGreaterThanOrEqual(0)
      expect(flushed, `${temp} flushed before the rename`).toBeLessThan(log.indexOf(rename))
    }
    expect(await new FileStore(join(dir, 'state.json')).get('large')).toHaveLength(1 << 20)
  })
})
