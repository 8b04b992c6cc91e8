/**
 * ResumableEventStore through its public API, on each log: in memory, and in a real Redis (redis-server on
 * 127.0.0.1). The store is the SDK's `EventStore`: the SDK calls `storeEvent` for every event it writes (`{}` for a
 * priming event), `getStreamIdForEventId` and then `replayEventsAfter` for a `GET` with `Last-Event-ID`.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it, vi, type TestContext} from 'vitest'
import {
  MemoryEventLog,
  RefusedEventIdError,
  ResumableEventStore,
  type EventLog,
  type JsonRpcMessage,
  type ResumableEventStoreOptions,
} from '../../src/server.ts'
import {RedisEventLog} from '../../src/server/redis.ts'
import {requireRedis, startRedis, type RedisClient, type RunningRedis} from '../fixtures/redis-server.ts'

let redis: RunningRedis | undefined
let client: RedisClient | undefined
let keys = 0

beforeAll(async () => {
  try {
    redis = await startRedis()
    client = await redis.connect()
  } catch {
    redis = undefined
  }
}, 10_000)

afterAll(async () => {
  await redis?.stop()
})

afterEach(() => {
  vi.useRealTimers()
})

type LogKind = 'memory' | 'redis'

/** A fresh log of `kind`: Redis logs each under a key of their own. */
function logOf(kind: LogKind, context: TestContext): EventLog {
  if (kind === 'memory') return new MemoryEventLog()
  requireRedis(context)
  return new RedisEventLog({client: client!, key: `test-${++keys}`})
}

const note = (text: string): JsonRpcMessage =>
  ({jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: text}}) as JsonRpcMessage

/** What a replay sends, as `[eventId, data]`, and the stream it names. */
async function replay(
  store: ResumableEventStore,
  lastEventId: string,
): Promise<{streamId: string; sent: [string, unknown][]}> {
  const sent: [string, unknown][] = []
  const streamId = await store.replayEventsAfter(lastEventId, {
    send: (eventId, message) => {
      sent.push([eventId, (message as unknown as {params: {data: unknown}}).params.data])
      return Promise.resolve()
    },
  })
  return {streamId, sent}
}

async function refusal(store: ResumableEventStore, eventId: string): Promise<string | undefined> {
  expect(await store.getStreamIdForEventId(eventId)).toBeUndefined()
  const error = await replay(store, eventId).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(RefusedEventIdError)
  expect((error as RefusedEventIdError).eventId).toBe(eventId)
  return (error as RefusedEventIdError).reason
}

describe.each(['memory', 'redis'] as LogKind[])('ResumableEventStore on the %s log', (kind) => {
  const storeOf = (context: TestContext, options: Omit<ResumableEventStoreOptions, 'log'> = {}): ResumableEventStore =>
    new ResumableEventStore({...options, log: logOf(kind, context)})

  it('gives IDs that name the store and the stream, numbered in order within each stream', async (context) => {
    const store = storeOf(context)
    const ids = [
      await store.storeEvent('a', note('1')),
      await store.storeEvent('a', note('2')),
      await store.storeEvent('b', note('3')),
      await store.storeEvent('a', note('4')),
    ]
    const nonce = ids[0]!.split('.')[0]!
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{16}$/)
    expect(ids).toEqual([`${nonce}.1.1`, `${nonce}.1.2`, `${nonce}.2.1`, `${nonce}.1.3`])
    const other = await storeOf(context).storeEvent('a', note('1'))
    expect(other.split('.')[0]).not.toBe(nonce)
    expect(await store.getStreamIdForEventId(ids[2]!)).toBe('b')
  })

  it("replays only the named stream's events after the given ID, in order, with their IDs, and names that stream", async (context) => {
    const store = storeOf(context)
    const first = await store.storeEvent('a', note('a1'))
    await store.storeEvent('b', note('b1'))
    const second = await store.storeEvent('a', note('a2'))
    await store.storeEvent('b', note('b2'))
    const third = await store.storeEvent('a', note('a3'))
    expect(await replay(store, first)).toEqual({
      streamId: 'a',
      sent: [
        [second, 'a2'],
        [third, 'a3'],
      ],
    })
    expect(await replay(store, third)).toEqual({streamId: 'a', sent: []})
    expect(store.metrics).toMatchObject({storedEvents: 5, streamResumptions: 2, replayedEvents: 2, refusedEventIds: 0})
  })

  it('resumes from a priming event, the first of its stream (the SDK stores `{}` for it)', async (context) => {
    const store = storeOf(context)
    const priming = await store.storeEvent('a', {} as JsonRpcMessage)
    const message = await store.storeEvent('a', note('after priming'))
    await store.storeEvent('_GET_stream', {} as JsonRpcMessage)
    expect(await replay(store, priming)).toEqual({streamId: 'a', sent: [[message, 'after priming']]})
    expect(store.metrics.replayedEvents).toBe(1)
  })

  it('refuses an ID another store gave, a malformed one and one past the last it gave: no stream, and a throw', async (context) => {
    const store = storeOf(context)
    const id = await store.storeEvent('a', note('1'))
    const foreign = await storeOf(context).storeEvent('a', note('1'))
    const [nonce] = id.split('.')
    expect(await refusal(store, foreign)).toBe('foreign')
    for (const malformed of [
      '',
      'a_1',
      `${nonce}.1`,
      `${nonce}.01.1`,
      `${nonce}.1.1.1`,
      `${nonce}.1.0`,
      `${nonce!.slice(1)}.1.1`,
    ]) {
      expect(await refusal(store, malformed)).toBe('malformed')
    }
    expect(await refusal(store, `${nonce}.1.2`)).toBe('not-held')
    expect(await refusal(store, `${nonce}.2.1`)).toBe('not-held')
    expect(store.metrics.refusedEventIds).toBe(20)
    expect(store.metrics.streamResumptions).toBe(0)
  })

  it('drops the oldest events past maxBytes whatever their stream, and replays from just before the oldest one held, not earlier', async (context) => {
    // Each event weighs its JSON plus 64: room for four of these.
    const store = storeOf(context, {maxBytes: 4 * (JSON.stringify(note('1')).length + 64)})
    const ids = [
      await store.storeEvent('a', note('1')),
      await store.storeEvent('b', note('2')),
      await store.storeEvent('a', note('3')),
      await store.storeEvent('a', note('4')),
    ]
    expect(store.metrics.evictedEvents).toBe(0)
    const fifth = await store.storeEvent('a', note('5'))
    expect(store.metrics.evictedEvents).toBe(1)
    // The first event is gone; the position it marks is still complete (the next one is held).
    expect(await replay(store, ids[0]!)).toEqual({
      streamId: 'a',
      sent: [
        [ids[2], '3'],
        [ids[3], '4'],
        [fifth, '5'],
      ],
    })
    // Stream b loses its only event: the stream is forgotten, and stores afresh under a new number.
    await store.storeEvent('a', note('6'))
    expect(await refusal(store, ids[1]!)).toBe('not-held')
    await store.storeEvent('a', note('7'))
    expect(await refusal(store, ids[0]!)).toBe('not-held')
    expect(await replay(store, ids[2]!)).toEqual({
      streamId: 'a',
      sent: [
        [ids[3], '4'],
        [fifth, '5'],
        [expect.any(String), '6'],
        [expect.any(String), '7'],
      ],
    })
    expect((await store.storeEvent('b', note('8'))).split('.')[1]).toBe('3')
    expect(store.metrics.evictedEvents).toBe(4)
  })

  it('drops events older than maxAgeMs, at the next call', async (context) => {
    vi.useFakeTimers({toFake: ['Date']})
    const store = storeOf(context, {maxAgeMs: 1000})
    const oldest = await store.storeEvent('a', note('oldest'))
    const old = await store.storeEvent('a', note('old'))
    vi.setSystemTime(Date.now() + 600)
    const recent = await store.storeEvent('a', note('recent'))
    expect(await replay(store, oldest)).toEqual({
      streamId: 'a',
      sent: [
        [old, 'old'],
        [recent, 'recent'],
      ],
    })
    vi.setSystemTime(Date.now() + 500)
    // Both old events are past their age now: the position of the second still replays in full, the first's not.
    expect(await replay(store, old)).toEqual({streamId: 'a', sent: [[recent, 'recent']]})
    expect(await refusal(store, oldest)).toBe('not-held')
    expect(store.metrics.evictedEvents).toBe(2)
  })

  it('takes its calls one at a time: an event stored during a replay is stored after it', async (context) => {
    const store = storeOf(context)
    const first = await store.storeEvent('a', note('1'))
    await store.storeEvent('a', note('2'))
    let release!: () => void
    const order: string[] = []
    const replaying = store
      .replayEventsAfter(first, {
        send: () => {
          order.push('replay sends')
          return new Promise<void>((resolve) => (release = resolve))
        },
      })
      .then(() => order.push('replay done'))
    await vi.waitFor(() => expect(order).toEqual(['replay sends']))
    const storing = store.storeEvent('a', note('3')).then(() => order.push('stored'))
    release()
    await Promise.all([replaying, storing])
    expect(order).toEqual(['replay sends', 'replay done', 'stored'])
  })

  it('forgets everything on clear(): earlier IDs are refused, later ones start again', async (context) => {
    const store = storeOf(context)
    const id = await store.storeEvent('a', note('1'))
    await store.clear()
    expect(await refusal(store, id)).toBe('not-held')
    const next = await store.storeEvent('a', note('2'))
    expect(next.split('.').slice(1)).toEqual(['1', '1'])
  })
})

describe('RedisEventLog', () => {
  it('lets a store of another process, on the same key, replay what the first one stored', async (context) => {
    requireRedis(context)
    const before = new ResumableEventStore({log: new RedisEventLog({client: client!, key: 'restarted'})})
    const first = await before.storeEvent('a', note('1'))
    const second = await before.storeEvent('a', note('2'))
    const other = await redis!.connect()
    const after = new ResumableEventStore({log: new RedisEventLog({client: other, key: 'restarted'})})
    expect(await after.getStreamIdForEventId(first)).toBe('a')
    expect(await replay(after, first)).toEqual({streamId: 'a', sent: [[second, '2']]})
    expect((await after.storeEvent('a', note('3'))).split('.')).toEqual([first.split('.')[0], '1', '3'])
  })

  it('sets every key of a log to expire maxAgeMs after its last append, under its prefix, and clear() removes them', async (context) => {
    requireRedis(context)
    const log = new RedisEventLog({client: client!, key: 'ttl', prefix: 'app:'})
    const store = new ResumableEventStore({log, maxAgeMs: 5000})
    await store.storeEvent('a', note('1'))
    await store.storeEvent('b', note('2'))
    const written = (await client!.keys('app:ttl*')).sort()
    expect(written).toEqual(['app:ttl', 'app:ttl:order', 'app:ttl:s:1', 'app:ttl:s:2'])
    for (const key of written) {
      const ttl = await client!.pTTL(key)
      expect(ttl).toBeGreaterThan(4000)
      expect(ttl).toBeLessThanOrEqual(5000)
    }
    await store.clear()
    expect(await client!.keys('app:ttl*')).toEqual([])
  })

  it('loads its scripts again after Redis lost them (SCRIPT FLUSH, a restart)', async (context) => {
    requireRedis(context)
    const store = new ResumableEventStore({log: new RedisEventLog({client: client!, key: 'flushed'})})
    const first = await store.storeEvent('a', note('1'))
    await client!.scriptFlush()
    const second = await store.storeEvent('a', note('2'))
    await client!.scriptFlush()
    expect(await replay(store, first)).toEqual({streamId: 'a', sent: [[second, '2']]})
  })

  it('refuses options it cannot use, naming the option', () => {
    const options = (value: unknown) => () => new RedisEventLog(value as never)
    expect(options(undefined)).toThrow(/options\.client must be a connected Redis client/)
    expect(options({client: {}})).toThrow(/options\.client/)
    expect(options({client: {sendCommand: () => Promise.resolve()}})).toThrow(/options\.key must be a non-empty string/)
    expect(options({client: {sendCommand: () => Promise.resolve()}, key: ''})).toThrow(/options\.key/)
    expect(options({client: {sendCommand: () => Promise.resolve()}, key: 'k', prefix: 1})).toThrow(
      /options\.prefix must be a string/,
    )
  })
})

describe('ResumableEventStore options', () => {
  it('are checked up front, each TypeError naming the option and what it accepts', () => {
    const store = (options: unknown) => () => new ResumableEventStore(options as ResumableEventStoreOptions)
    expect(store(null)).toThrow(TypeError)
    for (const name of ['maxBytes', 'maxAgeMs']) {
      for (const value of [0, -1, 1.5, Number.NaN, Infinity, '10']) {
        expect(store({[name]: value})).toThrow(new RegExp(`options\\.${name} must be a positive integer`))
      }
    }
    expect(store({log: {}})).toThrow(/options\.log must be an EventLog/)
    expect(store({maxbytes: 10})).toThrow(/unknown option maxbytes \(the options are log, maxBytes, maxAgeMs\)/)
    expect(store({maxBytes: 1, maxAgeMs: 1, log: new MemoryEventLog()})).not.toThrow()
  })
})
