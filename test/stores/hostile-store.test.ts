/**
 * A store is the app's code, and may hang, fail or hold records it should not: every call is bounded by
 * `storeTimeoutMs`, a failure is reported once and the transport carries on in memory, and every record read is
 * checked whole before it is used.
 */
import {describe, expect, it, vi} from 'vitest'
import {MemoryStore, type FetchLike, type JsonValue, type ResumptionStore} from '../../src/index.ts'
import {connect, eventsOf, storedSession, until, url, useMock} from '../fixtures/harness.ts'
import {pendingTimers, realTurns} from '../fixtures/timing.ts'
import {codeOf} from '../fixtures/wire.ts'

const storeTimeoutMs = 100
/** How long a step that may wait on the store at most a few times is allowed, timers and msw included. */
const bound = 1500

const sessionKey = `mcp-resumable-http:${url}#session`

/** `store` with `operation` never settling from call number `from` on (1-based), counting its calls. */
function hanging(
  store: MemoryStore,
  operation: 'get' | 'set' | 'delete' | 'list',
  from = 1,
): ResumptionStore & {calls: number} {
  const wrapped = {
    calls: 0,
    get: (key: string) => store.get(key),
    set: (key: string, value: JsonValue) => store.set(key, value),
    delete: (key: string) => store.delete(key),
    list: (prefix: string) => store.list(prefix),
  }
  const original = wrapped[operation] as (...args: never[]) => Promise<unknown>
  wrapped[operation] = ((...args: never[]) => {
    wrapped.calls++
    return wrapped.calls >= from ? new Promise<never>(() => {}) : original(...args)
  }) as never
  return wrapped
}

async function within<T>(promise: Promise<T>, ms = bound): Promise<T> {
  const started = Date.now()
  const value = await promise
  expect(Date.now() - started).toBeLessThan(ms)
  return value
}

describe('a store that never answers', () => {
  it('get: connect() gives up on it within storeTimeoutMs, reports it once, and starts a session in memory', async () => {
    const mock = useMock()
    const store = hanging(new MemoryStore(), 'get')
    const {client, transport, events} = await within(connect({store, storeTimeoutMs}))

    expect(transport.sessionId).toBe('session-1')
    expect(await within(client.callTool({name: 'echo', arguments: {text: 'hi'}}))).toMatchObject({
      content: [{type: 'text', text: 'echo: {"text":"hi"}'}],
    })
    await within(client.close())
    expect(eventsOf(events, 'store-error')).toEqual([
      {
        type: 'store-error',
        key: sessionKey,
        error: new Error(`The store did not answer within ${storeTimeoutMs} ms (storeTimeoutMs)`),
      },
    ])
    // Carrying on in memory: after the failure, the store is not called again.
    expect(store.calls).toBe(1)
    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
  })

  it('set: connect, send and close each finish within the bound, and the store is given up after one report', async () => {
    useMock()
    const store = hanging(new MemoryStore(), 'set')
    const {client, events} = await within(connect({store, storeTimeoutMs}))
    for (let n = 0; n < 3; n++)
      await within(client.callTool({name: 'slow', arguments: {steps: 2}}, undefined, {onprogress: () => {}}))
    await within(client.close())

    expect(eventsOf(events, 'store-error')).toHaveLength(1)
    expect(store.calls).toBe(1)
  })

  it('delete: a call answered 404 still fails at once with session-expired, and close finishes', async () => {
    const mock = useMock()
    const store = hanging(new MemoryStore(), 'delete')
    const {client, events} = await connect({store, storeTimeoutMs})
    mock.faults.expireSession()
    const error = await within(client.callTool({name: 'echo'}).catch((failure: unknown) => failure))
    await within(client.close())

    expect(codeOf(error)).toBe('session-expired')
    expect(eventsOf(events, 'store-error')).toHaveLength(1)
  })

  it('with the default storeTimeoutMs of 5 s, a hung get does not hang connect(): it is given up after 5 s, not before', async () => {
    useMock()
    // A fake clock for the store's bound only: five real seconds per run were most of this file's time.
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      const store = hanging(new MemoryStore(), 'get')
      let connected = false
      const connecting = connect({store}).then((harness) => ((connected = true), harness))
      await realTurns(() => store.calls === 1)
      expect(store.calls).toBe(1)
      await vi.advanceTimersByTimeAsync(4_999)
      expect(connected).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      await realTurns(() => connected)
      expect(connected).toBe(true)
      const {client, events} = await connecting
      expect(eventsOf(events, 'store-error')).toHaveLength(1)
      await client.close()
    } finally {
      vi.useRealTimers()
    }
  })

  it('storeTimeoutMs must be a number > 0', async () => {
    await expect(connect({storeTimeoutMs: 0})).rejects.toThrow('options.storeTimeoutMs must be a number > 0')
  })
})

/** A fetch that records the JSON-RPC request IDs of the tools/call requests it POSTs. */
function recordingCalls(): {fetch: FetchLike; wireIds: unknown[]} {
  const wireIds: unknown[] = []
  return {
    wireIds,
    fetch: async (input, init) => {
      const body =
        typeof init?.body === 'string' ? (JSON.parse(init.body) as {id?: unknown; method?: string}) : undefined
      if (body?.method === 'tools/call') wireIds.push(body.id)
      return fetch(input, init)
    },
  }
}

describe('records that cannot be trusted', () => {
  it.each<[string, {[key: string]: JsonValue}]>([
    ['a session ID with CR/LF', {sessionId: 'session-1\r\nX-Injected: 1'}],
    ['an empty session ID', {sessionId: ''}],
    ['a session ID of 2,000 characters', {sessionId: 's'.repeat(2000)}],
    ['requestIdsReserved 1e20', {requestIdsReserved: 1e20}],
    ['requestIdsReserved next to 2^53', {requestIdsReserved: Number.MAX_SAFE_INTEGER - 1}],
    ['a protocol version of 1,000 characters', {protocolVersion: 'v'.repeat(1000)}],
  ])(
    '%s: discarded with an event and deleted; a new session starts, and every request has its own wire ID',
    async (_what, patch) => {
      useMock()
      const store = new MemoryStore()
      const first = await connect({store})
      await first.client.close()
      await store.set(sessionKey, {...((await store.get(sessionKey)) as {[key: string]: JsonValue}), ...patch})
      const {fetch, wireIds} = recordingCalls()
      const {client, transport, events, errors} = await connect({store, fetch})
      for (let n = 0; n < 4; n++) await client.callTool({name: 'echo'})

      expect(eventsOf(events, 'record-discarded')).toEqual([
        {type: 'record-discarded', key: sessionKey, reason: expect.any(String) as string},
      ])
      expect(transport.sessionId).toBe('session-2')
      expect(new Set(wireIds).size).toBe(4)
      expect(errors).toEqual([])
      await client.close()
      expect((await store.get(sessionKey)) as {sessionId: string}).toMatchObject({sessionId: 'session-2'})
    },
  )

  it('a stored cursor longer than limits.maxEventIdBytes is discarded: never sent as Last-Event-ID', async () => {
    const mock = useMock()
    const store = await storedSession()
    const huge = 'e'.repeat(5000)
    await store.set(`mcp-resumable-http:${url}#stream:standalone`, {sessionId: 'session-1', lastEventId: huge})
    const after = await connect({store})
    // The first process's standalone GET, then the next one's (a third would fail the assertion, not the wait).
    await until(() => mock.requests('GET').length >= 2)

    expect(mock.requests('GET').map((entry) => entry.lastEventId)).toEqual([undefined, undefined])
    expect(eventsOf(after.events, 'record-discarded')).toMatchObject([
      {key: `mcp-resumable-http:${url}#stream:standalone`},
    ])
    await after.client.close()
    expect(await store.get(`mcp-resumable-http:${url}#stream:standalone`)).toBeUndefined()
  })

  it('a kept server request under a key that names no JSON-RPC ID is discarded; connect() goes on', async () => {
    useMock()
    const store = new MemoryStore()
    const before = await connect({store})
    await before.client.close()
    const key = `mcp-resumable-http:${url}#request:{not json`
    await store.set(key, {sessionId: 'session-1', message: {jsonrpc: '2.0', id: 1, method: 'ping'}})
    const after = await connect({store})

    expect(after.transport.sessionId).toBe('session-1')
    expect(eventsOf(after.events, 'record-discarded')).toMatchObject([{key}])
    await after.client.close()
    expect(await store.get(key)).toBeUndefined()
  })
})

describe('a store that fails after a while', () => {
  it('leaves no timer of its storeTimeoutMs behind once the transport is closed', async () => {
    useMock()
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      // Rejects a turn of the event loop later: the bound's timer is set by then, and must go with the call.
      const memory = new MemoryStore()
      const store: ResumptionStore = {
        get: () => new Promise<never>((_, reject) => setImmediate(() => reject(new Error('disk gone')))),
        set: (key, value) => memory.set(key, value),
        delete: (key) => memory.delete(key),
        list: (prefix) => memory.list(prefix),
      }
      let connected = false
      // A bound of its own, to tell its timer from any other.
      const connecting = connect({store, storeTimeoutMs: 4_321}).then((harness) => ((connected = true), harness))
      await realTurns(() => connected)
      const {client, events} = await connecting
      expect(eventsOf(events, 'store-error')).toHaveLength(1)
      await client.close()
      expect(pendingTimers(4_321)).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })
})
