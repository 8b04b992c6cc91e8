import type {Connection} from './stream.ts'

/** A connection's deadline: see {@link watchSilence}. */
export interface SilenceWatch {
  /** Aborts with the stream, or when the deadline passes. */
  readonly signal: AbortSignal
  readonly expired: boolean
  /** The first event came: no deadline any more. */
  disarm(): void
  release(): void
}

/**
 * The deadline of a response stream's connection resumed with `Last-Event-ID`: `signal` aborts when it has
 * brought no event within `limitMs`. The first event disarms it for good, so a quiet tool is never cut short once
 * its stream proved alive; neither the POST's own connection nor the standalone stream have one.
 */
export function watchSilence(connection: Connection, limitMs: number): SilenceWatch | undefined {
  const {stream} = connection
  // Past 2^31 - 1 ms, timers fire at once: any such deadline means none.
  if (!connection.resumed || stream.kind !== 'request' || limitMs > 2 ** 31 - 1) return undefined
  const parent = stream.controller.signal
  const controller = new AbortController()
  const follow = (): void => controller.abort(parent.reason)
  parent.addEventListener('abort', follow)
  let expired = false
  const timer = setTimeout(() => {
    expired = true
    // The reader tells this abort by `expired`: the reason is read by no one.
    controller.abort()
  }, limitMs)
  return {
    signal: controller.signal,
    get expired() {
      return expired
    },
    disarm: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer)
      parent.removeEventListener('abort', follow)
    },
  }
}
