/**
 * The read-ahead of a stream (src/streams/event-batches.ts) is bounded in bytes and kept as bytes, and what is
 * parsed at once is bounded too: a flood of tiny server requests (a server pinging 20,000 times) is held as 1 MiB
 * of bytes at most and handed over some five hundred at a time, never tens of thousands, and nothing is dropped.
 */
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {batchWeight, EventBatches, readAheadBytes, requestOverheadBytes} from '../../src/streams/event-batches.ts'

const encoder = new TextEncoder()
const data = (n: number): string => `{"jsonrpc":"2.0","id":"ping-${n}","method":"ping"}`
const ping = (n: number): string => `id: p${n}\ndata: ${data(n)}\n\n`

/** A body of `count` events, `perChunk` to a chunk, made only when read; `pulled` counts the events read so far. */
function pings(count: number, perChunk = 1): {body: ReadableStream<Uint8Array>; pulled: () => number} {
  let next = 0
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next === count) {
          controller.close()
          return
        }
        let chunk = ''
        for (let n = 0; n < perChunk && next < count; n++) chunk += ping(next++)
        controller.enqueue(encoder.encode(chunk))
      },
    },
    {highWaterMark: 0},
  )
  return {body, pulled: () => next}
}

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0))
}

const bytesOf = (events: number): number =>
  encoder.encode(Array.from({length: events}, (_, n) => ping(n)).join('')).length

describe('the read-ahead of a stream', () => {
  it('stops reading at its bound in bytes while the consumer takes nothing, and parses nothing meanwhile', async () => {
    const {body, pulled} = pings(40_000, 10)
    const batches = new EventBatches(body, new AbortController().signal, 16 * 1024 * 1024, () => {})
    await turns(200)
    const held = pulled()
    // Paused once the bound was reached: one chunk past it at most, and the one a stream may have made ready.
    expect(bytesOf(held)).toBeGreaterThanOrEqual(readAheadBytes)
    expect(bytesOf(held)).toBeLessThan(readAheadBytes + 2 * bytesOf(10))
    await turns(20)
    expect(pulled()).toBe(held)
    await batches.close()
  })

  it('hands over every event, in order, server requests a few hundred to a batch (each weighed with what handling it costs)', async () => {
    const {body} = pings(20_000, 50)
    const batches = new EventBatches(body, new AbortController().signal, 16 * 1024 * 1024, () => {})
    const ids: string[] = []
    let largest = 0
    await turns(50)
    for (let batch = await batches.next(); batch !== undefined; batch = await batches.next()) {
      largest = Math.max(largest, batch.events.length)
      for (const event of batch.events) ids.push(event.id!)
      await turns(1)
    }
    expect(ids).toEqual(Array.from({length: 20_000}, (_, n) => `p${n}`))
    // One chunk (50 events) past the bound at most.
    const perBatch = Math.ceil(batchWeight / (data(0).length + requestOverheadBytes))
    expect(largest).toBeLessThan(perBatch + 50)
    expect(largest).toBeGreaterThanOrEqual(perBatch - 50)
  })

  it('takes notifications by the thousand: only what may be a server request weighs its handling', async () => {
    const note = (n: number): string =>
      `id: n${n}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":${n}}}\n\n`
    // Fifty to a chunk: a batch is cut between chunks, so weighing them as requests would make many batches.
    const chunks = Array.from({length: 100}, (_, chunk) =>
      Array.from({length: 50}, (_, n) => note(chunk * 50 + n)).join(''),
    )
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
        controller.close()
      },
    })
    const batches = new EventBatches(body, new AbortController().signal, 16 * 1024 * 1024, () => {})
    await turns(5)
    expect((await batches.next())?.events).toHaveLength(5000)
  })

  it('is held to maxEventBytes when that is smaller', async () => {
    const {body, pulled} = pings(10_000, 10)
    const batches = new EventBatches(body, new AbortController().signal, 64 * 1024, () => {})
    await turns(100)
    expect(bytesOf(pulled())).toBeLessThanOrEqual(64 * 1024 + 2 * bytesOf(10))
    await batches.close()
  })
})

/** A body that hands out `parts` (text or bytes) one read at a time, then ends, or fails with `failure`. */
function bodyOf(
  parts: (string | Uint8Array)[],
  failure?: unknown,
): {body: ReadableStream<Uint8Array>; cancelled: unknown[]} {
  const cancelled: unknown[] = []
  let next = 0
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const part = parts[next++]
        if (part !== undefined) controller.enqueue(typeof part === 'string' ? encoder.encode(part) : part)
        else if (failure === undefined) controller.close()
        else controller.error(failure)
      },
      cancel(reason) {
        cancelled.push(reason)
      },
    },
    {highWaterMark: 0},
  )
  return {body, cancelled}
}

/** Every batch until the end, and how reading ended: `undefined` for the body's end, else the rejection. */
async function drain(
  batches: EventBatches,
): Promise<{events: string[]; retries: (number | undefined)[]; failure: unknown}> {
  const events: string[] = []
  const retries: (number | undefined)[] = []
  try {
    for (let batch = await batches.next(); batch !== undefined; batch = await batches.next()) {
      events.push(...batch.events.map((event) => event.data))
      retries.push(batch.retryMs)
    }
    return {events, retries, failure: undefined}
  } catch (failure) {
    return {events, retries, failure}
  }
}

describe('the batches of a stream', () => {
  it('decodes characters whose UTF-8 bytes are split across reads, after the first byte of 2, the second of 3, the third of 4', async () => {
    // 'data: ' is 6 bytes; then © (C2 A9), U+0800 (E0 A0 80), é (C3 A9), € (E2 82 AC), 😀 (F0 9F 98 80).
    const text = '©\u0800é€😀'
    const bytes = encoder.encode(`data: ${text}\n\n`)
    const cuts = [0, 7, 10, 12, 15, 19, bytes.length]
    const {body} = bodyOf(cuts.slice(1).map((end, index) => bytes.slice(cuts[index], end)))
    const batches = new EventBatches(body, new AbortController().signal, 1024, () => {})
    expect((await drain(batches)).events).toEqual([text])
  })

  it('decodes any bytes, cut anywhere, to the text a streaming decoder gives, invalid sequences included', async () => {
    // Bytes of every kind but line ends (one data line): ASCII, the leads and continuations of 2-, 3- and 4-byte
    // characters, and bytes no character has (0xC0, 0xF8, 0xFF).
    const byte = fc.oneof(
      fc.integer({min: 0x20, max: 0x7f}),
      fc.integer({min: 0x80, max: 0xbf}),
      fc.integer({min: 0xc0, max: 0xff}),
    )
    const texts = fc.oneof(
      fc.string({unit: 'grapheme', maxLength: 40}).map((text) => [...encoder.encode(text.replace(/[\r\n]/g, ''))]),
      fc.array(byte, {maxLength: 40}),
    )
    await fc.assert(
      fc.asyncProperty(texts, fc.array(fc.nat(), {maxLength: 6}), async (payload, cuts) => {
        const bytes = new Uint8Array([...encoder.encode('data: '), ...payload, 10, 10])
        const at = [...new Set(cuts.map((cut) => cut % bytes.length))].sort((a, b) => a - b)
        const parts = [0, ...at].map((start, index) => bytes.slice(start, [...at, bytes.length][index]))
        const {events} = await drain(new EventBatches(bodyOf(parts).body, new AbortController().signal, 1024, () => {}))
        expect(events).toEqual([new TextDecoder('utf-8', {ignoreBOM: true}).decode(new Uint8Array(payload))])
      }),
      {numRuns: 500},
    )
  })

  it('drops a byte order mark at the start of the stream, even cut in two, and keeps one anywhere else', async () => {
    const mark = [0xef, 0xbb, 0xbf]
    const data = encoder.encode('data: a\n\n')
    const {body} = bodyOf([
      new Uint8Array(0),
      new Uint8Array(mark.slice(0, 2)),
      new Uint8Array([mark[2]!, ...data]),
      new Uint8Array([...mark, ...encoder.encode('data: b\n\n')]),
    ])
    // U+FEFF at the start of a line is no field name the parser knows: that line is ignored, and the event with it.
    expect((await drain(new EventBatches(body, new AbortController().signal, 1024, () => {}))).events).toEqual(['a'])
    const inData = bodyOf([encoder.encode('data: '), new Uint8Array([...mark, ...encoder.encode('a\n\n')])])
    expect((await drain(new EventBatches(inData.body, new AbortController().signal, 1024, () => {}))).events).toEqual([
      '\uFEFFa',
    ])
  })

  it('hands over a `retry` that came without any event, and the last of several', async () => {
    const {body} = bodyOf(['retry: 2500\n\n'])
    expect(await drain(new EventBatches(body, new AbortController().signal, 1024, () => {}))).toEqual({
      events: [],
      retries: [2500],
      failure: undefined,
    })
    const several = bodyOf(['retry: 100\nretry: 300\ndata: a\n\n'])
    await turns(5)
    expect(await drain(new EventBatches(several.body, new AbortController().signal, 1024, () => {}))).toEqual({
      events: ['a'],
      retries: [300],
      failure: undefined,
    })
  })

  it('ignores a `retry` that is not a number and a field it does not know, and goes on', async () => {
    const {body} = bodyOf(['retry: soon\nmood: calm\ndata: a\n\n', 'data: b\n\n'])
    const batches = new EventBatches(body, new AbortController().signal, 1024, () => {})
    expect(await drain(batches)).toMatchObject({events: ['a', 'b'], failure: undefined})
  })

  it('hands over what arrived before a dropped connection, then rejects with its error, wrapped when it is no Error', async () => {
    const dropped = new TypeError('terminated')
    const {body} = bodyOf(['data: a\n\n', 'data: b\n\n'], dropped)
    expect(await drain(new EventBatches(body, new AbortController().signal, 1024, () => {}))).toMatchObject({
      events: ['a', 'b'],
      failure: dropped,
    })
    const odd = bodyOf(['data: a\n\n'], 'reset by peer')
    const {events, failure} = await drain(new EventBatches(odd.body, new AbortController().signal, 1024, () => {}))
    expect(events).toEqual(['a'])
    expect(failure).toBeInstanceOf(Error)
    expect(failure).toMatchObject({message: 'Reading the stream failed', cause: 'reset by peer'})
  })

  it('answers undefined again and again once the body has ended and everything was taken', async () => {
    const batches = new EventBatches(bodyOf(['data: a\n\n']).body, new AbortController().signal, 1024, () => {})
    expect((await batches.next())?.events.map((event) => event.data)).toEqual(['a'])
    expect(await batches.next()).toBeUndefined()
    expect(await batches.next()).toBeUndefined()
    expect(batches.take()).toBeUndefined()
  })

  it('hands over the events before one past maxEventBytes, reports it once, stops reading, then rejects', async () => {
    const {body, cancelled} = bodyOf([
      'data: a\n\n',
      `data: ${'x'.repeat(200)}`,
      'y'.repeat(200),
      '\n\ndata: b\n\n',
      'data: c\n\n',
    ])
    let reports = 0
    const batches = new EventBatches(body, new AbortController().signal, 100, () => reports++)
    await turns(20)
    const {events, failure} = await drain(batches)
    expect(events).toEqual(['a'])
    expect(failure).toMatchObject({type: 'max-buffer-size-exceeded'})
    expect(reports).toBe(1)
    expect(cancelled).toHaveLength(1)
    await batches.close()
  })

  it('takes nothing from an event past maxEventBytes that came whole in one read, nor after it: not its ID, not the events behind it', async () => {
    const {body, cancelled} = bodyOf([`id: 1\ndata: a\n\nid: 2\ndata: ${'x'.repeat(101)}\n\nid: 3\ndata: c\n\n`])
    let reports = 0
    const batches = new EventBatches(body, new AbortController().signal, 100, () => reports++)
    await turns(20)
    const taken: (string | undefined)[] = []
    let failure: unknown
    try {
      for (let batch = await batches.next(); batch !== undefined; batch = await batches.next())
        taken.push(...batch.events.map((event) => event.id))
    } catch (error) {
      failure = error
    }
    expect(taken).toEqual(['1'])
    expect(failure).toMatchObject({type: 'max-buffer-size-exceeded'})
    expect(reports).toBe(1)
    expect(cancelled).toHaveLength(1)
    await batches.close()
  })

  it('on abort, rejects with the reason, and cancels a body that does not end by itself with that reason', async () => {
    const cancelled: unknown[] = []
    let pulls = 0
    // One event, then nothing, for ever: the body ends only when cancelled.
    const body = new ReadableStream<Uint8Array>(
      {
        pull: (controller) =>
          pulls++ === 0 ? controller.enqueue(encoder.encode('data: a\n\n')) : new Promise(() => {}),
        cancel: (reason) => void cancelled.push(reason),
      },
      {highWaterMark: 0},
    )
    const controller = new AbortController()
    const batches = new EventBatches(body, controller.signal, 1024, () => {})
    await turns(5)
    const reason = new Error('gone')
    controller.abort(reason)
    expect(() => batches.take()).toThrow(reason)
    await expect(batches.next()).rejects.toBe(reason)
    expect(cancelled).toEqual([reason])
    await batches.close()
  })

  it('wakes a consumer waiting for the next batch when an abort ends the body', async () => {
    const controller = new AbortController()
    // A body that never sends anything, until cancelled.
    const body = new ReadableStream<Uint8Array>({pull: () => new Promise(() => {})}, {highWaterMark: 0})
    const batches = new EventBatches(body, controller.signal, 1024, () => {})
    const waiting = batches.next()
    await turns(5)
    controller.abort(new Error('gone'))
    await expect(waiting).rejects.toThrow('gone')
  })

  it('closes at once while reading is paused at its bound, and cancels the body', async () => {
    const {body, pulled} = pings(40_000, 10)
    const batches = new EventBatches(body, new AbortController().signal, 16 * 1024 * 1024, () => {})
    await turns(200)
    const held = pulled()
    await batches.close()
    await turns(5)
    expect(pulled()).toBe(held)
    expect(batches.take()).toBeUndefined()
  })
})
