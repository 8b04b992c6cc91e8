import {createParser, type EventSourceMessage} from 'eventsource-parser'

/** The events one network chunk completed, and the last `retry` it carried. */
export interface SseBatch {
  events: EventSourceMessage[]
  retryMs: number | undefined
}

/** Past this, an event that never ends is a protocol error rather than a memory leak. */
const maxEventCharacters = 64 * 1024 * 1024

/**
 * Reads an SSE body and hands over the events one network chunk at a time, awaiting `onBatch` before reading
 * on: the caller persists the batch's cursor once and delivers its events before the next read.
 * Resolves when the body ends or `onBatch` says 'stop'; rejects when reading fails (a dropped connection),
 * when `signal` aborts, or on an event too large.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  onBatch: (batch: SseBatch) => Promise<'stop' | undefined>,
): Promise<void> {
  let events: EventSourceMessage[] = []
  let retryMs: number | undefined
  let parseError: Error | undefined
  const parser = createParser({
    onEvent: (event) => events.push(event),
    // [WHATWG SSE] a `retry` value that is not all digits is ignored; the parser only reports integers.
    onRetry: (value) => (retryMs = value),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') parseError = error
    },
    maxBufferSize: maxEventCharacters,
  })
  const decoder = new TextDecoder()
  const reader = body.getReader()
  // Not every fetch ends the body when its signal aborts (mocks, some polyfills): cancel the read ourselves.
  const onAbort = (): void => void reader.cancel(signal.reason).catch(() => {})
  signal.addEventListener('abort', onAbort, {once: true})
  try {
    for (;;) {
      const {done, value} = await reader.read()
      signal.throwIfAborted()
      if (done) break
      parser.feed(decoder.decode(value, {stream: true}))
      if (parseError !== undefined) throw parseError
      if (events.length === 0 && retryMs === undefined) continue
      const batch: SseBatch = {events, retryMs}
      events = []
      retryMs = undefined
      if ((await onBatch(batch)) === 'stop') break
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    // Releases the connection when the caller stops early; harmless once the body has ended.
    reader.cancel().catch(() => {})
  }
}
