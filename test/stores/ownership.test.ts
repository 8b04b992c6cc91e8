/**
 * Issue 16: one session, one owner. Transports sharing a store (tabs, processes) never share a session: the
 * second starts its own, or waits; a session whose owner went is adopted by the next transport that starts.
 */
import {afterEach, describe, expect, it, vi} from 'vitest'
import {isLeaseLost, MemoryStore, type FetchLike} from '../../src/index.ts'
import {expectAdoptionAfterClose} from '../fixtures/adoption.ts'
import {expectLeaseContract} from '../fixtures/lease-contract.ts'
import {connect, eventsOf, useMock} from '../fixtures/harness.ts'

/** A fetch that records each POSTed request's wire ID with the session it was sent in. */
function recordingFetch(posted: {sessionId: string | null; id: unknown}[]): FetchLike {
  return async (input, init) => {
    if (typeof init?.body === 'string') {
      const body = JSON.parse(init.body) as {id?: unknown; method?: unknown}
      if (body.id !== undefined && body.method !== undefined)
        posted.push({sessionId: new Headers(init.headers).get('mcp-session-id'), id: body.id})
    }
    return fetch(input, init)
  }
}

/** `store`, whose leases' renewals never reach it (a paused process, a partition): a lease lapses at its TTL. */
function renewalsLost(store: MemoryStore): MemoryStore {
  const acquire = store.acquire.bind(store)
  store.acquire = async (name, ttlMs) => {
    const lease = await acquire(name, ttlMs)
    return lease === undefined
      ? undefined
      : {token: lease.token, renew: () => Promise.resolve(true), release: () => lease.release()}
  }
  return store
}

afterEach(() => {
  vi.useRealTimers()
})

describe('MemoryStore leases', () => {
  it('gives one live lease per name, larger tokens to each next owner, and refuses the writes of a stale one', async () => {
    await expectLeaseContract(new MemoryStore(), 'session-a')
  })
})

describe('one owner per session', () => {
  it('a second transport on the same store starts a session of its own while the first owns its session', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const first = await connect({store})
    const second = await connect({store})
    expect(first.transport.sessionId).toBe('session-1')
    expect(second.transport.sessionId).toBe('session-2')
    expect(mock.requests('POST', 'initialize')).toHaveLength(2)
    await first.client.callTool({name: 'echo'})
    await second.client.callTool({name: 'echo'})
    // Each session keeps its own record: the second never overwrote the first's.
    const sessions = (await store.list('')).filter((key) => key.endsWith('#session'))
    expect(
      await Promise.all(sessions.map(async (key) => ((await store.get(key)) as {sessionId: string}).sessionId)),
    ).toEqual(['session-1', 'session-2'])
    await first.client.close()
    await second.client.close()
  })

  it('the next transport adopts the session its owner left mid-call, resumes the stream, and the tool runs once', async () => {
    const next = await expectAdoptionAfterClose(new MemoryStore(), useMock())
    await next.client.close()
  })

  it('a session whose owner stopped renewing its lease is adopted once the lease expires, not before', async () => {
    useMock()
    const store = new MemoryStore()
    const before = await connect({store})
    const sessionId = before.transport.sessionId
    await before.client.close()
    // An owner that died without a word: it took the lease and never renews it.
    const lease = await store.acquire('mcp-resumable-http:http://mcp.test/mcp#lease', 200)
    expect(lease).toBeDefined()

    const meanwhile = await connect({store, leaseTtlMs: 200})
    expect(meanwhile.transport.sessionId).not.toBe(sessionId)
    await meanwhile.client.close()
    await new Promise((resolve) => setTimeout(resolve, 250))
    const after = await connect({store, leaseTtlMs: 200})
    expect(after.transport.sessionId).toBe(sessionId)
    await after.client.close()
  })

  it('an owner whose renewals stopped keeps its session for its own leaseTtlMs: until its last millisecond another transport starts a session of its own, from then on it adopts that one', async () => {
    useMock()
    const store = renewalsLost(new MemoryStore())
    // A fake clock for the leases only (MemoryStore reads Date): the network and the transports' timers run.
    vi.useFakeTimers({toFake: ['Date'], now: 1_000_000})
    const owner = await connect({store, leaseTtlMs: 5000})
    expect(owner.transport.sessionId).toBe('session-1')

    vi.setSystemTime(1_000_000 + 4999)
    const meanwhile = await connect({store})
    expect(meanwhile.transport.sessionId).toBe('session-2')
    await meanwhile.client.close()
    vi.setSystemTime(1_000_000 + 5000)
    const next = await connect({store})
    expect(next.transport.sessionId).toBe('session-1')
    await next.client.close()
    await owner.client.close()
  })

  it("with ownership: 'wait', a second transport waits for the owner to let go, then adopts its session", async () => {
    useMock()
    const store = new MemoryStore()
    const first = await connect({store})
    let started = false
    const waiting = connect({store, ownership: 'wait', leaseTtlMs: 100}).then((harness) => {
      started = true
      return harness
    })
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(started).toBe(false)
    await first.client.close()
    const second = await waiting
    expect(second.transport.sessionId).toBe(first.transport.sessionId ?? 'session-1')
    await second.client.close()
  })

  it('two transports started at once on a store holding a session make 150 calls each, never one request ID twice in a session', async () => {
    useMock()
    const store = new MemoryStore()
    const posted: {sessionId: string | null; id: unknown}[] = []
    const fetch = recordingFetch(posted)
    // A session left in the store by an earlier process: the one both would attach to.
    const earlier = await connect({store})
    await earlier.client.close()
    const [a, b] = await Promise.all([connect({store, fetch}), connect({store, fetch})])
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
    await Promise.all(
      [a, b].map(async ({client}) => {
        for (let i = 0; i < 150; i++) await client.callTool({name: 'echo', arguments: {i}})
      }),
    )
    const seen = new Set<string>()
    for (const {sessionId, id} of posted.filter((post) => post.sessionId !== null)) {
      const key = `${sessionId} ${JSON.stringify(id)}`
      expect(seen.has(key), key).toBe(false)
      seen.add(key)
    }
    expect(seen.size).toBeGreaterThanOrEqual(300)
    await a.client.close()
    await b.client.close()
  })

  it("a transport whose lease was taken over has its late writes refused, and says so through onEvent ('store-error')", async () => {
    useMock()
    const store = new MemoryStore()
    const acquire = store.acquire.bind(store)
    // The first owner's renewals never reach the store: its lease lapses.
    const stale = await connect({store: renewalsLost(store), leaseTtlMs: 60})
    await new Promise((resolve) => setTimeout(resolve, 100))
    const taker = await acquire('mcp-resumable-http:http://mcp.test/mcp#lease', 10_000)
    expect(taker?.token).toBe(2)
    const before = JSON.stringify(await store.get('mcp-resumable-http:http://mcp.test/mcp#session'))

    // The live connection goes on; only its writes to the store are refused.
    await stale.client.callTool({name: 'slow', arguments: {steps: 3, delayMs: 100}})
    const refused = eventsOf(stale.events, 'store-error').filter(({error}) => isLeaseLost(error))
    expect(refused.length).toBeGreaterThan(0)
    expect(await store.list('mcp-resumable-http:http://mcp.test/mcp#stream:')).toEqual([])
    expect(JSON.stringify(await store.get('mcp-resumable-http:http://mcp.test/mcp#session'))).toBe(before)
    await stale.client.close()
  })
})
