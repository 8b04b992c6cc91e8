/**
 * What persistence costs as streams are added: a cursor write must cost what changed (one stream moved), not
 * the size of the session. Measured through the public store seam, over real sockets to the reference server.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {createReferenceServer} from '../../src/testing/index.ts'
import {listen, type Listening} from '../../src/testing/node.ts'
import {connectTo, until} from '../fixtures/client.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'

let server: Listening | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/**
 * Characters of JSON handed to the store's `set` for stream records since write number `from`. The session record is
 * left out: it is rewritten once per hundred request IDs, whatever the events.
 */
function bytesWritten(store: RecordingStore, from: number): number {
  const cursorWrites = store.writes.slice(from).filter((write) => write.op === 'set' && write.key.includes('#stream:'))
  return cursorWrites.reduce((sum, write) => sum + JSON.stringify(write.value).length, 0)
}

/** Resolves once the store has seen no write for `ms`. */
async function quiet(store: RecordingStore, ms = 60): Promise<void> {
  let count = -1
  while (count !== store.writes.length) {
    count = store.writes.length
    await new Promise((resolve) => setTimeout(resolve, ms))
  }
}

/** How long each held call runs: far longer than the measurement; the client closes before it ends. */
const holdMs = 30_000

/**
 * With `openStreams` calls held open (tools that answer only after `holdMs`), one more call sends three
 * progress notifications: the bytes written to the store per notification.
 */
async function bytesPerAdvance(openStreams: number): Promise<number> {
  const reference = createReferenceServer()
  server = await listen(reference)
  const store = new RecordingStore()
  const {client} = await connectTo(server.url, {store})
  const held = Array.from({length: openStreams}, () =>
    client
      .callTool({name: 'slow', arguments: {steps: 1, delayMs: holdMs}}, undefined, {timeout: holdMs * 2})
      .catch(() => undefined),
  )
  // Every held call is running on the server, and the client has stored what their first events moved.
  await until(() => reference.executions['slow'] === openStreams, 15_000)
  // Longer than a quiet cursor may wait for its write (250 ms): the held streams' own writes are all done.
  await quiet(store, 400)

  const from = store.writes.length
  const progress: number[] = []
  const result = await client.callTool({name: 'slow', arguments: {steps: 3, delayMs: 25}}, undefined, {
    onprogress: ({progress: step}) => progress.push(step),
  })
  await quiet(store)
  const bytes = bytesWritten(store, from)

  expect(result.content).toEqual([{type: 'text', text: 'done after 3 steps'}])
  expect(progress).toEqual([1, 2, 3])
  // The held calls were open the whole time: their streams are part of the session that was measured.
  const open = reference
    .session()
    .streams.filter((stream) => stream.connected && !stream.finished && stream.id.startsWith('p'))
  expect(open).toHaveLength(openStreams)
  await client.close()
  await Promise.all(held)
  return bytes / progress.length
}

describe('abort listeners at scale', () => {
  it("holds 1,000 open streams without a MaxListenersExceededWarning: one listener on the transport's lifetime serves them all", async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error): void => {
      if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning)
    }
    process.on('warning', onWarning)
    try {
      const reference = createReferenceServer()
      server = await listen(reference)
      const {client} = await connectTo(server.url)
      const held = Array.from({length: 1000}, () =>
        client
          .callTool({name: 'slow', arguments: {steps: 1, delayMs: holdMs}}, undefined, {timeout: holdMs * 2})
          .catch((error: unknown) => error),
      )
      await until(() => reference.executions['slow'] === 1000, 15_000)
      // Warnings are emitted on the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.map((warning) => warning.message)).toEqual([])
      // close() returns once every stream has ended: the lifetime's one listener aborted all 1,000.
      await client.close()
      const outcomes = await Promise.all(held)
      expect(outcomes.filter((outcome) => (outcome as {data?: {code?: string}}).data?.code !== 'aborted')).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  }, 30_000)
})

describe('persistence at scale', () => {
  it('writes no more bytes per cursor advance with 1,000 open streams than with 10', async () => {
    const few = await bytesPerAdvance(10)
    const many = await bytesPerAdvance(1000)
    // Progress is delivered after the cursor that covers it is stored: there is something to measure.
    expect(few).toBeGreaterThan(0)
    // Bounded by a constant: what one stream's advance costs does not depend on how many others are open
    // (the slack covers longer request and event IDs).
    expect(
      many,
      `bytes per advance: ${few.toFixed(0)} with 10 open streams, ${many.toFixed(0)} with 1,000`,
    ).toBeLessThanOrEqual(few * 1.5 + 16)
  }, 30_000)
})
