import type {Connection} from './stream.ts'

/**
 * How many times in a row a resumed response stream that fell silent is resumed again from its newest cursor before
 * its request is settled `outcome-unknown`; a connection that brings anything new starts the count again. A correct
 * server answers each such GET with nothing new and the stream goes on, at the cost of one GET per `resumeTimeoutMs`
 * of silence: a request thus waits four times `resumeTimeoutMs` of silence at most.
 */
export const silentResumesAllowed = 3

/** A connection's deadline: see {@link watchSilence}. */
export interface SilenceWatch {
  /** An event came: the deadline starts again. */
  heard(): void
  release(): void
}

/**
 * The deadline of a response stream's connection resumed with `Last-Event-ID`: the connection is ended `silent` once
 * it has brought no event for `limitMs`, since it opened or since its last event; the state machine then resumes the
 * stream again from its newest cursor, or settles its request (docs/design.md#the-state-machine). A comment is no
 * event: [SDK interop] the SDK server writes a keep-alive comment every 15 s on every stream, on one that replayed
 * and then fell silent too. Neither the POST's own connection nor the standalone stream have a deadline.
 */
export function watchSilence(connection: Connection, limitMs: number): SilenceWatch | undefined {
  // Past 2^31 - 1 ms, timers fire at once: any such deadline means none.
  if (!connection.resumed || connection.stream.kind !== 'request' || limitMs > 2 ** 31 - 1) return undefined
  const expire = (): void => connection.end('silent')
  let timer = setTimeout(expire, limitMs)
  return {
    heard: () => {
      clearTimeout(timer)
      timer = setTimeout(expire, limitMs)
    },
    release: () => clearTimeout(timer),
  }
}
