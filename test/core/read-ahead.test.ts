/**
 * The read-ahead of a stream (src/streams/event-batches.ts) is bounded in bytes and kept as bytes, and what is
 * parsed at once is bounded too: a flood of tiny server requests (a server pinging 20,000 times) is held as 1 MiB
 * of bytes at most and handed over some five hundred at a time, never tens of thousands, and nothing is dropped.
 */
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

const bytesOf = (events: number): number => encoder.encode(Array.from({length: events}, (_, n) => ping(n)).join('')).length

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
    const note = (n: number): string => `id: n${n}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":${n}}}\n\n`
    const text = Array.from({length: 5000}, (_, n) => note(n)).join('')
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(text))
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
