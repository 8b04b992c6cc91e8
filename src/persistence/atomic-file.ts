/// <reference types="node" />
import {randomBytes} from 'node:crypto'
import {closeSync, fdatasync, openSync, renameSync, unlinkSync, writeFileSync} from 'node:fs'

/**
 * Writes `path` whole and atomically: a temporary file in the same directory, flushed to disk, renamed over it, so
 * a reader, a crash or a power loss never sees a torn file. The system calls that do not wait for the disk are made
 * synchronously, and only the flush is awaited: one turn of the event loop per write rather than five, which a
 * stream's back-to-back cursor writes would otherwise wait for behind the parsing of every batch.
 */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const fd = openSync(temp, 'wx', 0o600)
  try {
    // Given a descriptor, writeFileSync writes until every byte is written; writeSync may stop short.
    writeFileSync(fd, text)
    // On disk before the rename: otherwise a power loss could leave the renamed file empty.
    await flushToDisk(fd)
  } catch (error) {
    closeSync(fd)
    unlinkQuietly(temp)
    throw error
  }
  closeSync(fd)
  try {
    renameSync(temp, path)
  } catch (error) {
    unlinkQuietly(temp)
    throw error
  }
}

/** The data of `fd` on disk, with what reading it back needs (its size): fdatasync, in the thread pool. */
export function flushToDisk(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error === null ? resolve() : reject(error))))
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    // Already gone; a leftover is swept once old.
  }
}
