/**
 * Issue 16: `RedisStore` (`mcp-resumable-http/redis`) against a real Redis server (test/fixtures/redis-server.ts).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {RedisStore} from '../../src/redis.ts'
import {expectAdoptionAfterClose} from '../fixtures/adoption.ts'
import {connect, useMock} from '../fixtures/harness.ts'
import {expectLeaseContract} from '../fixtures/lease-contract.ts'
import {hasRedis, requireRedis, startRedis, type RedisClient, type RunningRedis} from '../fixtures/redis-server.ts'
import {expectStoreContract} from '../fixtures/store-contract.ts'

let redis: RunningRedis | undefined
let client: RedisClient

beforeAll(async () => {
  if (!hasRedis) return
  redis = await startRedis()
  client = await redis.connect()
})

afterAll(async () => {
  await redis?.stop()
})

describe('RedisStore', () => {
  it('keeps JSON values as given, namespaced under its prefix, each expiring idleTtlMs after its last write', async (context) => {
    requireRedis(context)
    const store = new RedisStore({client, prefix: 'contract:', idleTtlMs: 60_000})
    await expectStoreContract(store)
    expect(await client.get('contract:key-1')).toBe('0')
    const ttl = await client.pTTL('contract:key-1')
    expect(ttl).toBeGreaterThan(50_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it('lists the keys under a prefix with SCAN, glob characters taken literally, across many SCAN pages', async (context) => {
    requireRedis(context)
    const store = new RedisStore({client, prefix: 'list[*]?:'})
    for (let i = 0; i < 1200; i++) await store.set(`a*b#stream:${i}`, i)
    await store.set('a?b#stream:x', 'other')
    await new RedisStore({client, prefix: 'listX:'}).set('a*b#stream:y', 'other prefix')
    const keys = await store.list('a*b#stream:')
    expect(keys).toHaveLength(1200)
    expect(new Set(keys)).toEqual(new Set(Array.from({length: 1200}, (_, i) => `a*b#stream:${i}`)))
  })

  it('gives one live lease per name (SET NX PX), larger tokens to each next owner, and refuses the writes of a stale one', async (context) => {
    requireRedis(context)
    await expectLeaseContract(new RedisStore({client, prefix: 'lease:'}), 'session-a')
  })

  it('loads its scripts again when the server lost them (SCRIPT FLUSH, a restart)', async (context) => {
    requireRedis(context)
    const store = new RedisStore({client, prefix: 'flush:'})
    const lease = await store.acquire('l', 1000)
    await client.scriptFlush()
    expect(await lease!.renew()).toBe(true)
    await lease!.release()
  })

  it('refuses a client that is not one, and options out of range, with a TypeError', () => {
    expect(() => new RedisStore({} as never)).toThrow(/options.client must be a connected Redis client/)
    expect(() => new RedisStore({client: {sendCommand: () => Promise.resolve(null)}, idleTtlMs: 0})).toThrow(TypeError)
  })

  it('two transports on one RedisStore get a session each; the next adopts the one whose owner closed mid-call', async (context) => {
    requireRedis(context)
    const mock = useMock()
    const store = new RedisStore({client, prefix: 'transport:'})
    // A transport that keeps its own session meanwhile: the owner below gets another one.
    const other = await connect({store})
    const next = await expectAdoptionAfterClose(store, mock, [other])
    await Promise.all([other.client.close(), next.client.close()])
  })
})
