import {createParser, type EventSourceMessage} from 'eventsource-parser'

/** The events that arrived since the previous batch was taken, and the last `retry` among them. */
export interface SseBatch {
  events: EventSourceMessage[]
  retryMs: number | undefined
}

/** What an event read ahead costs beyond its characters until it is handled: its object and its parsed message. */
export const eventOverheadBytes = 64
/**
 * What a server request costs beyond that: its kept record, its store write, its answer. A flood of tiny server
 * requests (20,000 pings) is thus held to a few hundred at a time: taken as one batch, thousands of them at once
 * made the heap grow by tens of MB.
 */
export const requestOverheadBytes = 4096
/**
 * The weight of the events read ahead of the consumer at most (or `maxEventBytes`, if smaller; one chunk of the body
 * may go past it): memory stays bounded in bytes when the consumer is slower than the network, whatever the events.
 */
export const readAheadBytes = 2 * 1024 * 1024

/**
 * An SSE body read in the background, its events taken in batches: each batch holds everything that arrived
 * since the previous one. A consumer that stores a batch's cursor before delivering it thus pays one store
 * write per batch, however slow the store, and can overlap that write with delivering the batch before.
 */
export class EventBatches {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>
  readonly #signal: AbortSignal
  readonly #onAbort: () => void
  readonly #reading: Promise<void>
  readonly #maxEventBytes: number
  readonly #tooLarge: () => void
  #events: EventSourceMessage[] = []
  /** The weight of {@link #events}, each its characters and its overhead: reading pauses past {@link #maxAhead}. */
  #eventsWeight = 0
  readonly #maxAhead: number
  #retryMs: number | undefined
  #ended: {failure: unknown} | undefined
  #closed = false
  /** Wakes the consumer when events arrive or the body ends. */
  #arrived: (() => void) | undefined
  /** Wakes the reader when the consumer took events. */
  #drained: (() => void) | undefined

  /**
   * `maxEventBytes`: past this an event fails the read (after `tooLarge` is called), so that an event that never
   * ends is a failed connection rather than a memory leak; events read ahead are held to it too.
   */
  constructor(body: ReadableStream<Uint8Array>, signal: AbortSignal, maxEventBytes: number, tooLarge: () => void) {
    this.#maxEventBytes = maxEventBytes
    this.#maxAhead = Math.min(readAheadBytes, maxEventBytes)
    this.#tooLarge = tooLarge
    this.#reader = body.getReader()
    this.#signal = signal
    // Not every fetch ends the body when its signal aborts (mocks, some polyfills): cancel the read ourselves.
    this.#onAbort = () => void this.#reader.cancel(signal.reason).catch(() => {})
    signal.addEventListener('abort', this.#onAbort, {once: true})
    this.#reading = this.#read()
  }

  /** What arrived, without waiting; undefined when nothing did. */
  take(): SseBatch | undefined {
    this.#signal.throwIfAborted()
    if (this.#events.length === 0 && this.#retryMs === undefined) return undefined
    const batch = {events: this.#events, retryMs: this.#retryMs}
    this.#events = []
    this.#eventsWeight = 0
    this.#retryMs = undefined
    wake(this.#drained)
    return batch
  }

  /**
   * The next batch, waiting for one; undefined once the body has ended and everything was taken.
   * Rejects, once everything that arrived before it was taken, when reading failed (a dropped connection);
   * rejects when the signal aborts or an event is too large.
   */
  async next(): Promise<SseBatch | undefined> {
    for (;;) {
      const batch = this.take()
      if (batch !== undefined) return batch
      if (this.#ended !== undefined) break
      await new Promise<void>((resolve) => (this.#arrived = resolve))
    }
    this.#signal.throwIfAborted()
    const {failure} = this.#ended
    if (failure === undefined) return undefined
    throw failure instanceof Error ? failure : new Error('Reading the stream failed', {cause: failure})
  }

  /** Stops reading and releases the connection; resolves when the reading loop has ended. */
  async close(): Promise<void> {
    this.#closed = true
    this.#events = []
    this.#eventsWeight = 0
    wake(this.#drained)
    this.#signal.removeEventListener('abort', this.#onAbort)
    // Not awaited: a cancel can wait on a source that never answers; the pending read ends regardless.
    this.#reader.cancel().catch(() => {})
    await this.#reading
  }

  async #read(): Promise<void> {
    let parseError: Error | undefined
    const parser = createParser({
      onEvent: (event) => {
        this.#events.push(event)
        this.#eventsWeight += event.data.length + (event.id?.length ?? 0) + (isRequest(event.data) ? requestOverheadBytes : eventOverheadBytes)
      },
      // [WHATWG SSE] a `retry` value that is not all digits is ignored; the parser only reports integers.
      onRetry: (value) => (this.#retryMs = value),
      onError: (error) => {
        if (error.type !== 'max-buffer-size-exceeded') return
        parseError = error
        this.#tooLarge()
      },
      maxBufferSize: this.#maxEventBytes,
    })
    const decoder = new TextDecoder()
    try {
      while (!this.#closed) {
        const {done, value} = await this.#reader.read()
        if (done) break
        parser.feed(decoder.decode(value, {stream: true}))
        if (parseError !== undefined) throw parseError
        wake(this.#arrived)
        while (this.#eventsWeight >= this.#maxAhead) await new Promise<void>((resolve) => (this.#drained = resolve))
      }
      this.#ended = {failure: undefined}
    } catch (failure) {
      this.#ended = {failure}
    } finally {
      wake(this.#arrived)
    }
  }
}

/**
 * Whether `data` looks like a JSON-RPC request, without parsing it: the `"method"` and `"id"` members its JSON
 * carries. A notification mistaken for one only makes a batch smaller.
 */
function isRequest(data: string): boolean {
  return data.includes('"method"') && data.includes('"id"')
}

function wake(waiter: (() => void) | undefined): void {
  waiter?.()
}
