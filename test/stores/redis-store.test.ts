/**
 * Issue 16: `RedisStore` (`mcp-resumable-http/redis`) against a real Redis server (test/fixtures/redis-server.ts).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {RedisStore, type RedisCommander} from '../../src/redis.ts'
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

/** `client` with every command it is sent recorded (its name, or `EVALSHA` and the digest's first letters). */
function recorded(
  redisClient: RedisClient,
  fail?: (args: string[]) => {reason: unknown} | undefined,
): RedisCommander & {sent: string[]} {
  const sent: string[] = []
  return {
    sent,
    sendCommand: (args) => {
      sent.push(args[0] === 'SCRIPT' ? `SCRIPT ${args[1]!}` : args[0]!)
      const failure = fail?.(args)
      if (failure === undefined) return redisClient.sendCommand(args)
      // What a client rejects with is the app's: an Error or not, passed on as it is.
      const reason = failure.reason as Error
      return Promise.reject(reason)
    },
  }
}

describe('RedisStore and its client', () => {
  it("writes under 'mcp-resumption:' unless told another prefix", async (context) => {
    requireRedis(context)
    await new RedisStore({client}).set('default-prefix', 1)
    expect(await client.get('mcp-resumption:default-prefix')).toBe('1')
  })

  it.each([
    ['a prefix that is no string', {prefix: 7}, 'RedisStore: options.prefix must be a string'],
    [
      'an idleTtlMs of 0',
      {idleTtlMs: 0},
      'RedisStore: options.idleTtlMs must be a positive integer of milliseconds, got 0',
    ],
    [
      'an idleTtlMs of 1.5',
      {idleTtlMs: 1.5},
      'RedisStore: options.idleTtlMs must be a positive integer of milliseconds, got 1.5',
    ],
  ])('%s is a TypeError that says what it must be', (_name, options, message) => {
    expect(() => new RedisStore({client: {sendCommand: () => Promise.resolve(null)}, ...options} as never)).toThrow(
      new TypeError(message),
    )
  })

  it('a key that is no string, a value that is no JSON and a lease TTL out of range reject with a TypeError, and send nothing', async () => {
    const sent: unknown[] = []
    const store = new RedisStore({client: {sendCommand: (args) => (sent.push(args), Promise.resolve(null))}})
    await expect(store.get(7 as never)).rejects.toThrow(new TypeError('RedisStore: a key must be a string'))
    await expect(store.set('k', undefined as never)).rejects.toThrow(
      new TypeError('RedisStore: the value of k is not JSON'),
    )
    await expect(store.acquire('l', 0)).rejects.toThrow(
      new TypeError('A lease TTL must be a positive integer of milliseconds, got 0'),
    )
    expect(sent).toEqual([])
  })

  it('a client that maps types (a GET answered with a Buffer) is refused with a TypeError that says so', async (context) => {
    requireRedis(context)
    const store = new RedisStore({
      client: {
        sendCommand: async (args) =>
          args[0] === 'GET' ? Buffer.from(await client.sendCommand<string>(args)) : client.sendCommand(args),
      },
      prefix: 'mapped:',
    })
    await store.set('k', 'v')
    await expect(store.get('k')).rejects.toThrow(
      new TypeError('RedisStore: GET k did not answer a string: use a client without type mapping'),
    )
  })

  it('lists from cursor 0, the start of a SCAN, to the cursor 0 that ends it', async (context) => {
    requireRedis(context)
    const scans: string[][] = []
    const store = new RedisStore({
      client: {sendCommand: (args) => (args[0] === 'SCAN' && scans.push(args), client.sendCommand(args))},
      prefix: 'scan:',
    })
    await store.set('k', 1)
    expect(await store.list('')).toEqual(['k'])
    expect(scans[0]).toEqual(['SCAN', '0', 'MATCH', 'scan:*', 'COUNT', '500'])
  })

  it('loads each script once, then runs it by its digest: two leases cost one SCRIPT LOAD', async (context) => {
    requireRedis(context)
    const commander = recorded(client)
    const store = new RedisStore({client: commander, prefix: 'digest:'})
    const a = await store.acquire('a', 1000)
    const b = await store.acquire('b', 1000)
    expect(commander.sent).toEqual(['SCRIPT LOAD', 'EVALSHA', 'EVALSHA'])
    await Promise.all([a!.release(), b!.release()])
  })

  it('a script the server lost since it ran is loaded again (NOSCRIPT), and the command run by its digest again', async (context) => {
    requireRedis(context)
    const commander = recorded(client)
    const store = new RedisStore({client: commander, prefix: 'noscript:'})
    const lease = await store.acquire('l', 1000)
    expect(await lease!.renew()).toBe(true)
    await client.scriptFlush()
    commander.sent.length = 0
    expect(await lease!.renew()).toBe(true)
    expect(commander.sent).toEqual(['EVALSHA', 'SCRIPT LOAD', 'EVALSHA'])
    await lease!.release()
  })

  it.for([
    ['an Error that is no NOSCRIPT', new Error("READONLY You can't write against a read only replica.")],
    ['a string', 'NOSCRIPT, as a string'],
    ['null', null],
  ] as const)(
    'a client whose run of a loaded script fails with %s rejects with it, and loads nothing again',
    async ([, reason], context) => {
      requireRedis(context)
      let armed = false
      const commander = recorded(client, (args) => {
        if (!armed || args[0] !== 'EVALSHA') return undefined
        armed = false
        return {reason}
      })
      const store = new RedisStore({client: commander, prefix: 'failing:'})
      const lease = await store.acquire('l', 1000)
      commander.sent.length = 0
      armed = true
      const outcome: unknown = await store.acquire('m', 1000).then(
        () => 'acquired',
        (error: unknown) => error,
      )
      expect(outcome).toBe(reason)
      expect(commander.sent).toEqual(['EVALSHA'])
      await lease!.release()
    },
  )
})
