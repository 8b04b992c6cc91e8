import {createParser, ParseError, type EventSourceMessage, type EventSourceParser} from 'eventsource-parser'

/** The events that arrived since the previous batch was taken, and the last `retry` among them. */
export interface SseBatch {
  events: EventSourceMessage[]
  retryMs: number | undefined
}

/**
 * Bytes read ahead of the consumer at most (or `maxEventBytes`, if smaller; one chunk of the body may go past it):
 * memory stays bounded when it is slower than the network, and a consumer waiting on a store write does not hold
 * the network up. Read ahead as bytes, not as parsed events: buffers live outside the JavaScript heap, so what waits
 * costs the garbage collector nothing, and events are made only when they are taken, just before they are used.
 */
export const readAheadBytes = 1024 * 1024

/** What an event costs beyond its characters until it is handled: its object and its parsed message. */
export const eventOverheadBytes = 64
/**
 * What an event that may be a server request costs beyond its characters until handled: its kept record, its store
 * write, its answer. A flood of tiny server requests (20,000 pings) is thus handled some 500 at a time: thousands
 * at once made the heap grow by tens of MB. Notifications are not held back: a slow store still costs one write
 * per several thousand of them.
 */
export const requestOverheadBytes = 4096
/** The weight of one batch at most (one chunk of the body may go past it): its events' characters and overheads. */
export const batchWeight = 2 * 1024 * 1024

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
  readonly #parser: EventSourceParser
  /** The first bytes of a character that the last chunk cut in two, put before the next chunk. */
  #split: Uint8Array | undefined
  /** Nothing was decoded yet: a byte order mark may come first. */
  #atStart = true
  /** What was read and not yet parsed. */
  #chunks: Uint8Array[] = []
  #chunksBytes = 0
  /** Filled by the parser while {@link take} feeds it, with their weight (see {@link batchWeight}). */
  #events: EventSourceMessage[] = []
  #eventsWeight = 0
  readonly #maxAhead: number
  #retryMs: number | undefined
  /** An event went past `maxEventBytes`: what came before it is taken, then reading fails. */
  #tooLarge: Error | undefined
  #ended: {failure: unknown} | undefined
  #closed = false
  /** Wakes the consumer when bytes arrive or the body ends. */
  #arrived: (() => void) | undefined
  /** Wakes the reader when the consumer took what was read. */
  #drained: (() => void) | undefined

  /**
   * `maxEventBytes`: past this an event fails the read (after `tooLarge` is called), so that an event that never
   * ends is a failed connection rather than a memory leak.
   */
  constructor(body: ReadableStream<Uint8Array>, signal: AbortSignal, maxEventBytes: number, tooLarge: () => void) {
    this.#maxAhead = Math.min(readAheadBytes, maxEventBytes)
    const exceeded = (error: Error): void => {
      this.#tooLarge = error
      tooLarge()
    }
    this.#parser = createParser({
      // [WHATWG SSE, dispatch] a block's `id` sets the last event ID even when the block has no `data` and
      // dispatches nothing (an ID-only priming event): it goes in as an event without data, which moves the cursor
      // and delivers nothing. The parser reports a block's ID just before its event, which then takes its place.
      onId: (id) => {
        // Nothing after an event too large is taken: the stream resumes from the event before it.
        if (this.#tooLarge !== undefined) return
        this.#events.push({id, event: undefined, data: ''})
        this.#eventsWeight += eventOverheadBytes
      },
      onEvent: (event) => {
        if (this.#tooLarge !== undefined) return
        if (event.id !== undefined) {
          this.#events.pop()
          this.#eventsWeight -= eventOverheadBytes
        }
        // The parser bounds only what it holds of an event still arriving: one that came whole in a
        // chunk is measured here.
        if (event.data.length > maxEventBytes) {
          exceeded(
            new ParseError(
              `An event of ${event.data.length} characters exceeded the max buffer size of ${maxEventBytes} characters`,
              {type: 'max-buffer-size-exceeded'},
            ),
          )
          return
        }
        this.#events.push(event)
        // A request has an `id` member; so has a response (one a stream) and maybe some notification: a batch made
        // smaller by mistake costs nothing but its size. One scan, no parsing, and for `id":` rather than `"id"`:
        // JSON holds far fewer `i` than `"`, which makes the scan four times cheaper.
        this.#eventsWeight +=
          event.data.length + (event.data.includes('id":') ? requestOverheadBytes : eventOverheadBytes)
      },
      // [WHATWG SSE] a `retry` value that is not all digits is ignored; the parser only reports integers.
      onRetry: (value) => (this.#retryMs = value),
      // Past `maxBufferSize` the parser stops for good (it reports that once): `take` feeds it no more.
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') exceeded(error)
      },
      maxBufferSize: maxEventBytes,
    })
    this.#reader = body.getReader()
    this.#signal = signal
    // Not every fetch ends the body when its signal aborts (mocks, some polyfills): cancel the read ourselves.
    this.#onAbort = () => void this.#reader.cancel(signal.reason).catch(() => {})
    // close() removes the listener: a signal aborts once anyway.
    signal.addEventListener('abort', this.#onAbort)
    this.#reading = this.#read()
  }

  /** What arrived, up to {@link batchWeight} of it, without waiting; undefined when nothing did. */
  take(): SseBatch | undefined {
    this.#signal.throwIfAborted()
    let fed = 0
    // Stryker disable next-line EqualityOperator: one byte of a bound one chunk may pass anyway
    while (fed < this.#chunks.length && this.#eventsWeight < batchWeight) {
      const chunk = this.#chunks[fed++]!
      this.#chunksBytes -= chunk.byteLength
      this.#parser.feed(this.#decode(chunk))
      if (this.#tooLarge !== undefined) {
        this.#ended = {failure: this.#tooLarge}
        this.#stop()
        break
      }
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: slicing off nothing changes nothing
    if (fed > 0) {
      // Kept as a fresh array: a long read-ahead is not shifted chunk by chunk.
      this.#chunks = this.#chunks.slice(fed)
      wake(this.#drained)
    }
    if (this.#events.length === 0 && this.#retryMs === undefined) return undefined
    const batch = {events: this.#events, retryMs: this.#retryMs}
    this.#events = []
    this.#eventsWeight = 0
    this.#retryMs = undefined
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
      // `take` found no event: it fed every chunk there was.
      if (this.#ended !== undefined) break
      await new Promise<void>((resolve) => (this.#arrived = resolve))
    }
    // An abort was seen by `take` above.
    const {failure} = this.#ended
    if (failure === undefined) return undefined
    throw failure instanceof Error ? failure : new Error('Reading the stream failed', {cause: failure})
  }

  /**
   * The text of `chunk`'s whole characters; a character cut at its end is kept for the next chunk. The same text
   * as a streaming decoder's, several times faster in Node, which decodes UTF-8 on a fast path only outside
   * `stream: true` mode.
   */
  #decode(chunk: Uint8Array): string {
    let bytes = chunk
    if (this.#split !== undefined) {
      bytes = new Uint8Array(this.#split.length + chunk.length)
      bytes.set(this.#split)
      bytes.set(chunk, this.#split.length)
      this.#split = undefined
    }
    const end = wholeCharactersEnd(bytes)
    // Stryker disable next-line ConditionalExpression,EqualityOperator: carrying no bytes changes nothing
    if (end < bytes.length) this.#split = bytes.slice(end)
    let text = utf8.decode(bytes.subarray(0, end))
    if (this.#atStart && text !== '') {
      this.#atStart = false
      // [WHATWG encoding, UTF-8 decode] a byte order mark is dropped at the start of the stream only.
      if (text.startsWith('\uFEFF')) text = text.slice(1)
    }
    return text
  }

  /** Stops reading and releases the connection; resolves when the reading loop has ended. */
  async close(): Promise<void> {
    this.#stop()
    this.#signal.removeEventListener('abort', this.#onAbort)
    await this.#reading
  }

  #stop(): void {
    this.#closed = true
    this.#chunks = []
    this.#chunksBytes = 0
    wake(this.#drained)
    // Not awaited: a cancel can wait on a source that never answers; the pending read ends regardless.
    this.#reader.cancel().catch(() => {})
  }

  async #read(): Promise<void> {
    try {
      while (!this.#closed) {
        const {done, value} = await this.#reader.read()
        if (done) break
        this.#chunks.push(value)
        this.#chunksBytes += value.byteLength
        wake(this.#arrived)
        // Stryker disable next-line EqualityOperator: one byte of a bound one chunk may pass anyway
        while (this.#chunksBytes >= this.#maxAhead) await new Promise<void>((resolve) => (this.#drained = resolve))
      }
      this.#ended ??= {failure: undefined}
    } catch (failure) {
      this.#ended ??= {failure}
    } finally {
      wake(this.#arrived)
    }
  }
}

/**
 * One decoder for every stream: given whole characters only, it keeps nothing between calls. It keeps a byte order
 * mark, which only the start of a stream may drop.
 */
const utf8 = new TextDecoder('utf-8', {ignoreBOM: true})

/**
 * Where the last whole UTF-8 character of `bytes` ends: before a lead byte whose continuation bytes have not all
 * arrived. Bytes that cannot be part of a character are left to the decoder, which replaces them wherever they are cut.
 */
export function wholeCharactersEnd(bytes: Uint8Array): number {
  const length = bytes.length
  // A character is 4 bytes at most: its lead byte is among the last 3 when it is cut.
  // Stryker disable next-line ConditionalExpression,LogicalOperator: no lead byte further back is cut
  for (let back = 1; back <= 3 && back <= length; back++) {
    const byte = bytes[length - back]!
    // An ASCII byte ends a character; so does anything before it.
    if (byte < 0x80) return length
    // [WHATWG encoding, UTF-8 decoder] 0xC2 to 0xF4 start a character, as many bytes long as they have leading 1 bits
    // (110xxxxx, 1110xxxx, 11110xxx). 0xC0, 0xC1 and bytes past 0xF4 start none: carried or not, the decoder
    // replaces them alike.
    if (byte >= 0xc2) {
      const size = Math.clz32(~(byte << 24))
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a whole character carried waits
      return back < size ? length - back : length
    }
  }
  return length
}

function wake(waiter: (() => void) | undefined): void {
  waiter?.()
}
