/**
 * The read-ahead of a stream (src/streams/event-batches.ts) is bounded in bytes, counting what each event costs
 * beyond its characters: a flood of tiny server requests (a server pinging 20,000 times) is held a few hundred at a
 * time, never thousands, and nothing is dropped.
 */
import {describe, expect, it} from 'vitest'
import {EventBatches, readAheadBytes, requestOverheadBytes as eventOverheadBytes} from '../../src/streams/event-batches.ts'

const encoder = new TextEncoder()
const data = (n: number): string => `{"jsonrpc":"2.0","id":"ping-${n}","method":"ping"}`
const ping = (n: number): string => `id: p${n}\ndata: ${data(n)}\n\n`
/** What event `n` weighs in the read-ahead: its characters (ID and data) and what handling a server request costs. */
const weightOf = (n: number): number => `p${n}`.length + data(n).length + eventOverheadBytes

/** A body of `count` events, one per chunk, made only when read; `pulled` counts the chunks read so far. */
function pings(count: number): {body: ReadableStream<Uint8Array>; pulled: () => number} {
  let next = 0
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next === count) controller.close()
        else controller.enqueue(encoder.encode(ping(next++)))
      },
    },
    {highWaterMark: 0},
  )
  return {body, pulled: () => next}
}

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0))
}

describe('the read-ahead of a stream', () => {
  it('holds tiny server requests to its bound in bytes, each weighed with what handling it costs, while the consumer takes none', async () => {
    const {body, pulled} = pings(20_000)
    const batches = new EventBatches(body, new AbortController().signal, 16 * 1024 * 1024, () => {})
    await turns(50)
    const held = pulled()
    const weight = Array.from({length: held}, (_, n) => weightOf(n)).reduce((sum, one) => sum + one, 0)
    // Paused once the bound was reached: one event past it at most (a chunk here is one event), and the one chunk a
    // stream may have made ready for the read to come.
    expect(weight).toBeGreaterThanOrEqual(readAheadBytes)
    expect(weight).toBeLessThan(readAheadBytes + 2 * weightOf(held))
    expect(held).toBeLessThan(600)
    await turns(20)
    expect(pulled()).toBe(held)
    await batches.close()
  })

  it('hands over every event, in order, in batches no heavier than the bound', async () => {
    const {body} = pings(5_000)
    const batches = new EventBatches(body, new AbortController().signal, 16 * 1024 * 1024, () => {})
    const ids: string[] = []
    let largest = 0
    for (let batch = await batches.next(); batch !== undefined; batch = await batches.next()) {
      largest = Math.max(largest, batch.events.length)
      for (const event of batch.events) ids.push(event.id!)
      await turns(1)
    }
    expect(ids).toEqual(Array.from({length: 5_000}, (_, n) => `p${n}`))
    expect(largest * eventOverheadBytes).toBeLessThanOrEqual(readAheadBytes + eventOverheadBytes)
  })

  it('is held to maxEventBytes when that is smaller', async () => {
    const {body, pulled} = pings(1_000)
    const batches = new EventBatches(body, new AbortController().signal, 64 * 1024, () => {})
    await turns(50)
    expect(pulled() * eventOverheadBytes).toBeLessThanOrEqual(64 * 1024 + 2 * eventOverheadBytes)
    await batches.close()
  })
})
