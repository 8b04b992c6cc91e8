/**
 * Issue 16 and #18: how a transport takes, keeps and gives up the lease of its session (docs/design.md,
 * "Ownership"), step by step under a fake clock, and what a lease and its refusal say.
 */
import {afterEach, describe, expect, it, vi} from 'vitest'
import {
  isLeaseLost,
  isTransportError,
  LeaseLostError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type JsonValue,
  type Lease,
  type ResumableHTTPClientTransportOptions,
  type ResumptionStore,
  type TransportEvent,
} from '../../src/index.ts'
import {realTurns} from '../fixtures/timing.ts'

/** Nothing listens there: these transports start without a stored session, so they send nothing. */
const endpoint = 'http://127.0.0.1:9/mcp'
const namespace = `mcp-resumable-http:${endpoint}`

afterEach(() => {
  vi.useRealTimers()
})

/** A transport on `store` that records its events; `start()` is left to the test. */
function transportOn(
  store: ResumptionStore,
  options: ResumableHTTPClientTransportOptions = {},
): {transport: ResumableHTTPClientTransport; events: TransportEvent[]; errors: Error[]} {
  const events: TransportEvent[] = []
  const errors: Error[] = []
  const transport = new ResumableHTTPClientTransport(new URL(endpoint), {
    ...options,
    store,
    onEvent: (event) => events.push(event),
  })
  transport.onerror = (error) => errors.push(error)
  return {transport, events, errors}
}

/** A MemoryStore whose leases' `renew` answers as `renew` says, counting its calls. */
function renewingStore(renew: (kept: () => Promise<boolean>) => Promise<boolean>): MemoryStore & {renewals: number} {
  const store = Object.assign(new MemoryStore(), {renewals: 0})
  const acquire = store.acquire.bind(store)
  store.acquire = async (name, ttlMs) => {
    const lease = await acquire(name, ttlMs)
    if (lease === undefined) return undefined
    return {
      token: lease.token,
      renew: () => {
        store.renewals++
        return renew(() => lease.renew())
      },
      release: () => lease.release(),
    }
  }
  return store
}

function storeErrors(events: TransportEvent[]): {key: string; error: unknown}[] {
  return events.flatMap((event) => (event.type === 'store-error' ? [{key: event.key, error: event.error}] : []))
}

describe('a lease and its refusal', () => {
  it.each([
    ['null', null, false],
    ['undefined', undefined, false],
    ["the string 'lease-lost'", 'lease-lost', false],
    ['an object of another code', {code: 'store'}, false],
    ['an object without a code', {}, false],
    ["a plain object of code 'lease-lost' (another copy of the library)", {code: 'lease-lost'}, true],
    ['a LeaseLostError', new LeaseLostError({lease: 'l', token: 1}), true],
  ])('isLeaseLost of %s is %s', (_name, value, expected) => {
    expect(isLeaseLost(value)).toBe(expected)
  })

  it('a write fenced with a lease taken over since rejects with a LeaseLostError that names the lease and its token', async () => {
    const store = new MemoryStore()
    const first = (await store.acquire('session-a', 10_000))!
    await first.release()
    await store.acquire('session-a', 10_000)
    const refused: unknown = await store
      .set('record', 1, {lease: 'session-a', token: first.token})
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(LeaseLostError)
    expect(refused).toMatchObject({
      name: 'LeaseLostError',
      code: 'lease-lost',
      lease: 'session-a',
      message: 'The lease session-a (token 1) was taken over by another owner: the write is refused',
    })
  })

  it.each([0, -1, 1.5, Number.NaN])(
    'a lease TTL of %s is refused with a TypeError that says what it must be',
    async (ttlMs) => {
      const store = new MemoryStore()
      await expect(async () => store.acquire('l', ttlMs)).rejects.toThrow(
        new TypeError(`A lease TTL must be a positive integer of milliseconds, got ${String(ttlMs)}`),
      )
    },
  )

  it('a lease not renewed is held until its TTL is over, and free from that very millisecond on', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: 1_000})
    const store = new MemoryStore()
    const first = await store.acquire('l', 100)
    vi.setSystemTime(1_099)
    expect(await store.acquire('l', 100)).toBeUndefined()
    vi.setSystemTime(1_100)
    expect((await store.acquire('l', 100))?.token).toBe(first!.token + 1)
  })
})

describe('the ownership options', () => {
  it.each([
    [{ownership: 'steal'}, `options.ownership must be 'new-session' or 'wait', got "steal"`],
    [{ownership: 'Wait'}, `options.ownership must be 'new-session' or 'wait', got "Wait"`],
    [{leaseTtlMs: 0}, 'options.leaseTtlMs must be a positive integer of milliseconds, got 0'],
    [{leaseTtlMs: 1.5}, 'options.leaseTtlMs must be a positive integer of milliseconds, got 1.5'],
    [{leaseTtlMs: -5}, 'options.leaseTtlMs must be a positive integer of milliseconds, got -5'],
  ])('%j is a TypeError that names the option and the value', (options, message) => {
    expect(
      () => new ResumableHTTPClientTransport(new URL(endpoint), options as ResumableHTTPClientTransportOptions),
    ).toThrow(new TypeError(message))
  })
})

describe('taking the lease', () => {
  it('a second transport keeps its records in slot [1] of the store, under a lease of that slot', async () => {
    const store = new MemoryStore()
    const first = transportOn(store)
    const second = transportOn(store)
    await first.transport.start()
    await second.transport.start()
    // The second owner's writes go to its slot: its lease is there, and it holds it.
    expect(await store.acquire(`[1]${namespace}#lease`, 10_000)).toBeUndefined()
    expect(await store.acquire(`[2]${namespace}#lease`, 10_000)).toBeDefined()
    await first.transport.close()
    await second.transport.close()
  })

  it('a store whose acquire fails is reported once, under the name of the lease, and the transport goes on without an owner', async () => {
    const store = new MemoryStore()
    const failure = new Error('the lease table is gone')
    store.acquire = () => Promise.reject(failure)
    const {transport, events, errors} = transportOn(store)
    await transport.start()
    expect(storeErrors(events)).toEqual([{key: `${namespace}#lease`, error: failure}])
    expect(errors).toHaveLength(1)
    expect(isTransportError(errors[0], 'store')).toBe(true)
    await transport.close()
  })

  it("with 'new-session', start() rejects aborted when every one of the 64 slots has a live owner, and waits for none", async () => {
    const store = new MemoryStore()
    const held: Lease[] = []
    for (let slot = 0; slot < 64; slot++)
      held.push((await store.acquire(`${slot === 0 ? '' : `[${slot}]`}${namespace}#lease`, 60_000))!)
    const {transport} = transportOn(store, {leaseTtlMs: 60_000})
    const outcome = await Promise.race([
      transport.start().then(
        () => 'started',
        (error: unknown) => error,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1000)),
    ])
    expect(isTransportError(outcome, 'aborted')).toBe(true)
    expect((outcome as Error).message).toBe(
      'Every one of the 64 sessions kept in the store for this server is owned by a live transport',
    )
    await transport.close()
    await Promise.all(held.map((lease) => lease.release()))
  })

  it("with 'wait', start() asks for the lease again every quarter of leaseTtlMs, and starts once the owner lets go", async () => {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']})
    const store = Object.assign(new MemoryStore(), {asked: 0})
    const acquire = store.acquire.bind(store)
    store.acquire = (name, ttlMs) => {
      store.asked++
      return acquire(name, ttlMs)
    }
    const owner = (await acquire(`${namespace}#lease`, 60_000))!
    const {transport} = transportOn(store, {ownership: 'wait', leaseTtlMs: 400})
    let started = false
    const starting = transport.start().then(() => (started = true))
    await realTurns(() => store.asked === 1)
    await vi.advanceTimersByTimeAsync(99)
    expect(store.asked).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(store.asked).toBe(2)
    await owner.release()
    await vi.advanceTimersByTimeAsync(100)
    await realTurns(() => started)
    await starting
    expect(store.asked).toBe(3)
    await transport.close()
  })

  it('in a realm whose timers are numbers (a browser), the lease is taken and kept all the same', async () => {
    let next = 0
    vi.spyOn(globalThis, 'setInterval').mockImplementation((() => ++next) as never)
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(() => undefined)
    const store = new MemoryStore()
    const {transport, errors} = transportOn(store)
    await transport.start()
    expect(errors).toEqual([])
    expect(await store.acquire(`${namespace}#lease`, 10_000)).toBeUndefined()
    await transport.close()
  })
})

describe('keeping the lease', () => {
  it('renews it every third of leaseTtlMs, reporting nothing; close() leaves no timer and frees it at once', async () => {
    vi.useFakeTimers({toFake: ['setInterval', 'clearInterval']})
    const store = renewingStore((kept) => kept())
    const {transport, events} = transportOn(store, {leaseTtlMs: 300})
    await transport.start()
    await vi.advanceTimersByTimeAsync(99)
    expect(store.renewals).toBe(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(store.renewals).toBe(1)
    await vi.advanceTimersByTimeAsync(200)
    expect(store.renewals).toBe(3)
    expect(storeErrors(events)).toEqual([])
    await transport.close()
    expect(vi.getTimerCount()).toBe(0)
    expect(await store.acquire(`${namespace}#lease`, 300)).toBeDefined()
  })

  it('a renewal that fails is reported under the name of the lease, and tried again at the next beat', async () => {
    vi.useFakeTimers({toFake: ['setInterval', 'clearInterval']})
    const failure = new Error('the store is unreachable')
    const store = renewingStore(() => Promise.reject(failure))
    const {transport, events} = transportOn(store, {leaseTtlMs: 300})
    await transport.start()
    await vi.advanceTimersByTimeAsync(200)
    expect(store.renewals).toBe(2)
    expect(storeErrors(events)).toEqual([
      {key: `${namespace}#lease`, error: failure},
      {key: `${namespace}#lease`, error: failure},
    ])
    await transport.close()
  })

  it('a lease another owner took over is reported once, with its name, and renewed no more', async () => {
    vi.useFakeTimers({toFake: ['setInterval', 'clearInterval']})
    const store = renewingStore(() => Promise.resolve(false))
    const {transport, events} = transportOn(store, {leaseTtlMs: 300})
    await transport.start()
    await vi.advanceTimersByTimeAsync(500)
    expect(store.renewals).toBe(1)
    const reported = storeErrors(events)
    expect(reported).toHaveLength(1)
    expect(reported[0]!.key).toBe(`${namespace}#lease`)
    expect((reported[0]!.error as Error).message).toBe(
      `The lease ${namespace}#lease was taken over by another owner: this transport's writes to it are refused`,
    )
    await transport.close()
  })

  it('a renewal that answers lost after close() reports nothing: the lease was given up meanwhile', async () => {
    vi.useFakeTimers({toFake: ['setInterval', 'clearInterval']})
    let answer: (kept: boolean) => void = () => undefined
    const store = renewingStore(() => new Promise<boolean>((resolve) => (answer = resolve)))
    const {transport, events} = transportOn(store, {leaseTtlMs: 300})
    await transport.start()
    await vi.advanceTimersByTimeAsync(100)
    expect(store.renewals).toBe(1)
    await transport.close()
    answer(false)
    await realTurns(() => false, 20)
    expect(storeErrors(events)).toEqual([])
  })
  it('a lease whose release fails is reported once, under its own name: that of the slot it held', async () => {
    const failure = new Error('the store is unreachable')
    const store = new MemoryStore()
    const acquire = store.acquire.bind(store)
    const first = transportOn(store)
    await first.transport.start()
    store.acquire = async (name, ttlMs) => {
      const lease = await acquire(name, ttlMs)
      return lease === undefined ? undefined : {...lease, token: lease.token, release: () => Promise.reject(failure)}
    }
    const second = transportOn(store)
    await second.transport.start()
    await second.transport.close()
    expect(storeErrors(second.events)).toEqual([{key: `[1]${namespace}#lease`, error: failure}])
    await first.transport.close()
  })
})

describe('a store that keeps no owner', () => {
  it('is given no fence: its writes and deletions get the key and the value alone', async () => {
    const memory = new MemoryStore()
    const calls: {method: string; args: number}[] = []
    const store: ResumptionStore = {
      get: (key) => memory.get(key),
      set: (...args: [string, JsonValue]) => (calls.push({method: 'set', args: args.length}), memory.set(...args)),
      delete: (...args: [string]) => (calls.push({method: 'delete', args: args.length}), memory.delete(...args)),
      list: (prefix) => memory.list(prefix),
    }
    const {transport} = transportOn(store, {sessionId: 'app-session'})
    await transport.start()
    await transport.close()
    expect(calls.length).toBeGreaterThan(0)
    expect(calls.filter(({method, args}) => args !== (method === 'set' ? 2 : 1))).toEqual([])
  })
})
