import type {Connection} from './stream.ts'

/** A connection's deadline: see {@link watchSilence}. */
export interface SilenceWatch {
  /** The first event came: no deadline any more. */
  disarm(): void
  release(): void
}

/**
 * The deadline of a response stream's connection resumed with `Last-Event-ID`: the connection is ended `silent` when
 * it has brought no event within `limitMs`. The first event disarms it for good, so a quiet tool is never cut short
 * once its stream proved alive; neither the POST's own connection nor the standalone stream have one.
 */
export function watchSilence(connection: Connection, limitMs: number): SilenceWatch | undefined {
  // Past 2^31 - 1 ms, timers fire at once: any such deadline means none.
  if (!connection.resumed || connection.stream.kind !== 'request' || limitMs > 2 ** 31 - 1) return undefined
  const timer = setTimeout(() => connection.end('silent'), limitMs)
  return {disarm: () => clearTimeout(timer), release: () => clearTimeout(timer)}
}
