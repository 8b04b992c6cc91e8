/**
 * A whole-file write that fails part way (the flush to disk, the rename) rejects with that failure, and leaves
 * what it found: the file as it was, no temporary file, no file descriptor open. node:fs is wrapped so that the
 * flush or the rename can be made to fail; every other call is the real one.
 */
import {existsSync, readdirSync} from 'node:fs'
import {mkdtemp, readdir, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, test, vi} from 'vitest'
import {replaceFile} from '../../src/persistence/atomic-file.ts'

const failures = vi.hoisted(() => ({flush: undefined as Error | undefined, rename: undefined as Error | undefined}))
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return {
    ...actual,
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      const failure = failures.flush
      if (failure === undefined) actual.fdatasync(fd, callback)
      else setImmediate(() => callback(failure))
    },
    renameSync: (...args: Parameters<typeof actual.renameSync>) => {
      if (failures.rename !== undefined) throw failures.rename
      actual.renameSync(...args)
    },
  }
})

let dir = ''
let file = ''
const openFiles = () => readdirSync('/proc/self/fd').length

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'atomic-file-'))
  file = join(dir, 'store.json')
  failures.flush = undefined
  failures.rename = undefined
})

afterEach(async () => {
  await rm(dir, {recursive: true, force: true})
})

describe('replaceFile', () => {
  test('writes the file whole, twenty times over, leaving no temporary file and no file open', async () => {
    const before = openFiles()
    for (let i = 0; i < 20; i++) await replaceFile(file, `{"i": ${i}}`)
    expect(await readFile(file, 'utf8')).toBe('{"i": 19}')
    expect(await readdir(dir)).toEqual(['store.json'])
    expect(openFiles()).toBeLessThan(before + 10)
  })

  test.each([
    ['the flush to disk', 'flush', Object.assign(new Error('EIO: i/o error, fdatasync'), {code: 'EIO'})],
    [
      'the rename',
      'rename',
      Object.assign(new Error('EXDEV: cross-device link not permitted, rename'), {code: 'EXDEV'}),
    ],
  ] as const)(
    'a failure of %s rejects with it and leaves the file as it was, no temporary file and no file open',
    async (_, step, failure) => {
      await writeFile(file, 'as it was')
      const before = openFiles()
      for (let i = 0; i < 20; i++) {
        failures[step] = failure
        await expect(replaceFile(file, 'new')).rejects.toBe(failure)
      }
      expect(await readFile(file, 'utf8')).toBe('as it was')
      expect(await readdir(dir)).toEqual(['store.json'])
      expect(openFiles()).toBeLessThan(before + 10)
      failures[step] = undefined
      await replaceFile(file, 'new')
      expect(existsSync(file) && (await readFile(file, 'utf8'))).toBe('new')
    },
  )
})
