/**
 * What a record read from the store must be, field by field (docs/design.md#what-is-persisted): each invalid one
 * is reported with its reason and deleted, each valid edge is taken; and what the transport writes and deletes.
 */
import {http} from 'msw'
import {queryObjects} from 'node:v8'
import {describe, expect, it} from 'vitest'
import {MemoryStore, type FetchLike, type JsonValue, type ResumptionStore} from '../../src/index.ts'
import {connect, eventsOf, interceptGets, network, storedSession, until, url, useMock} from '../fixtures/harness.ts'
import {frame, sse} from '../fixtures/wire.ts'
// Only to count its instances on the heap (a leak no public API shows).
import {CoalescedWriter} from '../../src/persistence/coalesced-writer.ts'

const prefix = `mcp-resumable-http:${url}#`
const sessionKey = `${prefix}session`
const standaloneKey = `${prefix}stream:standalone`
type Record = {[key: string]: JsonValue}

/** `store` with some of its methods replaced. */
function over(store: ResumptionStore, methods: Partial<ResumptionStore>): ResumptionStore {
  return {
    get: (key) => store.get(key),
    set: (key, value) => store.set(key, value),
    delete: (key) => store.delete(key),
    list: (listed) => store.list(listed),
    ...methods,
  }
}

/** `value()` after `ms`. */
const later = <T>(ms: number, value: () => Promise<T>): Promise<T> =>
  new Promise((resolve) => setTimeout(() => resolve(value()), ms))

/** A fetch that records the numeric JSON-RPC request IDs it POSTs. */
function recordingIds(): {fetch: FetchLike; ids: number[]} {
  const ids: number[] = []
  return {
    ids,
    fetch: (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as {id?: unknown}) : undefined
      if (typeof body?.id === 'number') ids.push(body.id)
      return fetch(input, init)
    },
  }
}

describe('a stored session record, field by field', () => {
  const without =
    (name: string) =>
    (record: Record): Record =>
      Object.fromEntries(Object.entries(record).filter(([key]) => key !== name))
  const patched =
    (patch: Record) =>
    (record: Record): Record => ({...record, ...patch})
  const notObject = 'a session record that is not an object'
  const badId = 'a session ID that is not 1 to 1024 visible ASCII characters (0x21-0x7E)'
  const badVersion = 'an invalid protocol version'
  const badReserved = 'requestIdsReserved that is not a whole number from 0 to 2^52'

  it.each<[string, (record: Record) => JsonValue, string | undefined]>([
    ['a string', () => 'session-1', notObject],
    ['null', () => null, notObject],
    ['an array', (record) => [record], notObject],
    ['a numeric session ID', patched({sessionId: 5}), badId],
    ['a numeric protocol version', patched({protocolVersion: 5}), badVersion],
    ['a protocol version of 65 characters', patched({protocolVersion: 'v'.repeat(65)}), badVersion],
    ['a protocol version of 64 characters', patched({protocolVersion: 'v'.repeat(64)}), undefined],
    ['no protocol version', without('protocolVersion'), undefined],
    ['requestIdsReserved -1', patched({requestIdsReserved: -1}), badReserved],
    ['requestIdsReserved 2^52 + 1', patched({requestIdsReserved: 2 ** 52 + 1}), badReserved],
    ['requestIdsReserved 2^52', patched({requestIdsReserved: 2 ** 52}), undefined],
    ['no requestIdsReserved', without('requestIdsReserved'), undefined],
  ])('%s: %s', async (_what, change, reason) => {
    useMock()
    const store = await storedSession()
    const session = (await store.get(sessionKey)) as Record
    await store.set(sessionKey, change(session))
    const {client, transport, events} = await connect({store})

    expect(eventsOf(events, 'record-discarded')).toEqual(
      reason === undefined ? [] : [{type: 'record-discarded', key: sessionKey, reason}],
    )
    expect(transport.sessionId).toBe(reason === undefined ? 'session-1' : 'session-2')
    await client.close()
  })
})

describe('a stored stream record, field by field', () => {
  const cursor = (length: number): string =>
    `a cursor of ${length} characters, or no header value (limits.maxEventIdBytes)`
  const invalid = (reason: string): string => `invalid record of stream standalone: ${reason}`
  const retry = invalid('a retry that is no whole number of milliseconds')
  const notCall = invalid('a call that is not one')
  const noSession = 'a record that names no session'

  it.each<[string, JsonValue, string | undefined]>([
    ['a string', 'e1', noSession],
    ['a record without sessionId', {lastEventId: 'e1'}, noSession],
    ['no cursor', {sessionId: 'session-1'}, invalid('no cursor')],
    ['an empty cursor', {sessionId: 'session-1', lastEventId: ''}, invalid('no cursor')],
    ['a numeric cursor', {sessionId: 'session-1', lastEventId: 5}, invalid('no cursor')],
    ['a cursor of 5000 characters', {sessionId: 'session-1', lastEventId: 'e'.repeat(5000)}, invalid(cursor(5000))],
    ['retryMs -1', {sessionId: 'session-1', lastEventId: 'e1', retryMs: -1}, retry],
    ['retryMs 1.5', {sessionId: 'session-1', lastEventId: 'e1', retryMs: 1.5}, retry],
    ['retryMs 0', {sessionId: 'session-1', lastEventId: 'e1', retryMs: 0}, undefined],
    ['a call that is a string', {sessionId: 'session-1', lastEventId: 'e1', call: 'tools/call'}, notCall],
    ['a call that is null', {sessionId: 'session-1', lastEventId: 'e1', call: null}, notCall],
    [
      'a call that is an array',
      {sessionId: 'session-1', lastEventId: 'e1', call: [{method: 'tools/call', clientId: 1}]},
      notCall,
    ],
    ['a call without a method', {sessionId: 'session-1', lastEventId: 'e1', call: {clientId: 1}}, notCall],
    [
      'a call with a numeric name',
      {sessionId: 'session-1', lastEventId: 'e1', call: {method: 'tools/call', clientId: 1, name: 5}},
      notCall,
    ],
    [
      'a call whose clientId is a boolean',
      {sessionId: 'session-1', lastEventId: 'e1', call: {method: 'tools/call', clientId: true}},
      notCall,
    ],
    ['a call without clientId', {sessionId: 'session-1', lastEventId: 'e1', call: {method: 'tools/call'}}, notCall],
    [
      'a call with a string clientId and a name',
      {sessionId: 'session-1', lastEventId: 'e1', call: {method: 'tools/call', clientId: 'c1', name: 'echo'}},
      undefined,
    ],
    [
      'a call with a numeric clientId and no name',
      {sessionId: 'session-1', lastEventId: 'e1', call: {method: 'ping', clientId: 1}},
      undefined,
    ],
    [
      'a call with a trace context',
      {
        sessionId: 'session-1',
        lastEventId: 'e1',
        call: {
          method: 'ping',
          clientId: 1,
          traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`,
          tracestate: 'a=1',
        },
      },
      undefined,
    ],
    [
      'a call with a numeric traceparent',
      {sessionId: 'session-1', lastEventId: 'e1', call: {method: 'ping', clientId: 1, traceparent: 1}},
      notCall,
    ],
  ])('%s: %s', async (_what, record, reason) => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(standaloneKey, record)
    const {client, events} = await connect({store})
    await until(() => mock.requests('GET').length >= 2)

    expect(eventsOf(events, 'record-discarded')).toEqual(
      reason === undefined ? [] : [{type: 'record-discarded', key: standaloneKey, reason}],
    )
    expect(mock.requests('GET')[1]!.lastEventId).toBe(reason === undefined ? 'e1' : undefined)
    await client.close()
    if (reason !== undefined) expect(await store.get(standaloneKey)).toBeUndefined()
  })

  it.each([
    ['exactly limits.maxEventIdBytes characters is resumed from', 'e1234567', undefined],
    ['one character more is discarded', 'e12345678', invalid(cursor(9))],
  ])('a cursor of %s', async (_what, lastEventId, reason) => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(standaloneKey, {sessionId: 'session-1', lastEventId})
    const {client, events} = await connect({store, limits: {maxEventIdBytes: 8}})
    await until(() => mock.requests('GET').length >= 2)

    expect(eventsOf(events, 'record-discarded')).toEqual(
      reason === undefined ? [] : [{type: 'record-discarded', key: standaloneKey, reason}],
    )
    expect(mock.requests('GET')[1]!.lastEventId).toBe(reason === undefined ? lastEventId : undefined)
    await client.close()
  })

  it('a record of another session is neither used nor discarded', async () => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(standaloneKey, {sessionId: 'session-0', lastEventId: 'e1'})
    const {client, events} = await connect({store})
    await until(() => mock.requests('GET').length >= 2)

    expect(eventsOf(events, 'record-discarded')).toEqual([])
    expect(mock.requests('GET')[1]!.lastEventId).toBeUndefined()
    await client.close()
  })

  it('a server request record whose message is no object is discarded with its reason', async () => {
    useMock()
    const store = await storedSession()
    const key = `${prefix}request:7`
    await store.set(key, {sessionId: 'session-1', message: 'ping'})
    const {client, events} = await connect({store})

    expect(eventsOf(events, 'record-discarded')).toEqual([
      {type: 'record-discarded', key, reason: 'not a JSON-RPC message under a JSON-RPC ID'},
    ])
    await client.close()
  })

  it('a key the store lists but no longer holds is skipped, not discarded', async () => {
    useMock()
    const store = await storedSession()
    const listing = over(store, {list: async (listed) => [...(await store.list(listed)), `${listed}gone`]})
    const {client, transport, events} = await connect({store: listing})

    expect(transport.sessionId).toBe('session-1')
    expect(eventsOf(events, 'record-discarded')).toEqual([])
    await client.close()
  })

  it('a store whose list fails is reported once, under the prefix it listed, and the session goes on', async () => {
    useMock()
    const store = await storedSession()
    const failing = over(store, {list: () => Promise.reject(new Error('list is down'))})
    const {client, transport, events} = await connect({store: failing})

    expect(transport.sessionId).toBe('session-1')
    expect(eventsOf(events, 'store-error')).toEqual([
      {type: 'store-error', key: `${prefix}stream:`, error: new Error('list is down')},
    ])
    await client.close()
  })
})

describe('the wire-ID bound of the era without sessions, as stored', () => {
  it.each<[string, JsonValue, (ids: number[]) => void]>([
    ['2^52 is taken: requests start there', 2 ** 52, (ids) => expect(Math.min(...ids)).toBe(2 ** 52)],
    ['2^52 + 1 is ignored: requests start low', 2 ** 52 + 1, (ids) => expect(Math.max(...ids)).toBeLessThan(100)],
    ['1.5 is ignored: requests have whole IDs', 1.5, (ids) => expect(ids.every(Number.isSafeInteger)).toBe(true)],
  ])('%s', async (_what, stored, check) => {
    useMock()
    const store = new MemoryStore()
    await store.set(`${prefix}wire-ids`, stored)
    const {fetch, ids} = recordingIds()
    const {client} = await connect({store, fetch})
    await client.listTools()
    expect(ids.length).toBeGreaterThan(1)
    check(ids)
    await client.close()
  })
})

describe('what ending a session deletes', () => {
  it("its streams' and server requests' records and itself, and neither the wire-ID bound nor the journaled calls", async () => {
    useMock()
    const store = await storedSession()
    await store.set(`${prefix}wire-ids`, 3)
    await store.set(`${prefix}call:c1`, {callId: 'c1'})
    await store.set(`${prefix}request:7`, {sessionId: 'session-1', message: {jsonrpc: '2.0', id: 7, method: 'ping'}})
    await store.set(standaloneKey, {sessionId: 'session-1', lastEventId: 'e1'})
    const {client, transport} = await connect({store})
    await transport.terminateSession()

    expect((await store.list(prefix)).sort()).toEqual([`${prefix}call:c1`, `${prefix}wire-ids`])
    await client.close()
  })
})

/** The paths of the fields of `value` whose value is undefined: a JSON store would drop them. */
function undefinedFields(value: unknown, path = ''): string[] {
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, field]) =>
    field === undefined ? [`${path}${key}`] : undefinedFields(field, `${path}${key}.`),
  )
}

describe('what the records written hold', () => {
  it('no field without a value: a session the app named (no initialize result), a stream without retry, a call that names nothing', async () => {
    useMock()
    const named = await connect()
    const sessionId = named.transport.sessionId
    const written: {key: string; value: JsonValue}[] = []
    const memory = new MemoryStore()
    const store = over(memory, {set: (key, value) => (written.push({key, value}), memory.set(key, value))})
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {id?: number; method?: string}
        if (body.method !== 'ping') return undefined
        const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'pinged'}}
        return sse([frame('p1', note), frame('p2', {jsonrpc: '2.0', id: body.id, result: {}})])
      }),
    )
    const {client} = await connect({store, sessionId})
    await client.callTool({name: 'slow', arguments: {steps: 2}}, undefined, {onprogress: () => {}})
    await client.ping()
    await client.close()

    expect(written.map(({key}) => key.slice(prefix.length))).toEqual(
      expect.arrayContaining(['session', expect.stringMatching(/^stream:/)]),
    )
    expect(written.filter(({value}) => (value as {call?: {method?: string}}).call?.method === 'ping')).not.toEqual([])
    expect(written.flatMap(({key, value}) => undefinedFields(value, `${key.slice(prefix.length)}: `))).toEqual([])
    await named.client.close()
  })
})

describe('a slow store', () => {
  it('with storeTimeoutMs 2^31 (past what a timer can wait) has no deadline: a get that takes 30 ms is not given up', async () => {
    useMock()
    const store = await storedSession()
    const slow = over(store, {get: (key) => later(30, () => store.get(key))})
    const {client, transport, events} = await connect({store: slow, storeTimeoutMs: 2 ** 31})

    expect(eventsOf(events, 'store-error')).toEqual([])
    expect(transport.sessionId).toBe('session-1')
    await client.close()
  })

  it('close() waits for the deletion of a discarded record that takes 30 ms', async () => {
    useMock()
    const store = await storedSession()
    await store.set(standaloneKey, {sessionId: 'session-1', lastEventId: ''})
    const slow = over(store, {delete: (key) => later(30, () => store.delete(key))})
    const {client, events} = await connect({store: slow})
    expect(eventsOf(events, 'record-discarded')).toHaveLength(1)
    await client.close()

    expect(await store.get(standaloneKey)).toBeUndefined()
  })
})

describe('a stored retry', () => {
  it.each<[string, Record, Record]>([
    ['above limits.maxRetryMs is cut to it', {retryMs: 1_000_000}, {retryMs: 100}],
    ['that is none stays none', {}, {}],
  ])('%s: the record the stream writes next says so', async (_what, stored, written) => {
    const mock = useMock()
    const store = await storedSession()
    await store.set(standaloneKey, {sessionId: 'session-1', lastEventId: 'e1', ...stored})
    const note = {jsonrpc: '2.0', method: 'notifications/tools/list_changed'}
    const gets = interceptGets(mock, (get) => (get.lastEventId === 'e1' ? sse([frame('e2', note)], 'open') : undefined))
    const saved: JsonValue[] = []
    const recording = over(store, {
      set: (key, value) => (key === standaloneKey && saved.push(value), store.set(key, value)),
    })
    const {client} = await connect({store: recording, limits: {maxRetryMs: 100}})
    await until(() => saved.length > 0)

    expect(gets[0]!.lastEventId).toBe('e1')
    expect(saved).toStrictEqual([{sessionId: 'session-1', lastEventId: 'e2', ...written}])
    await client.close()
  })
})

describe('writes of one record', () => {
  it('never reach the store two at a time: a reservation asked for while a queued one is being written waits for it', async () => {
    useMock()
    const memory = new MemoryStore()
    const writing = new Set<string>()
    const overlaps: string[] = []
    let sessionWrites = 0
    let more: Promise<unknown> = Promise.resolve()
    const {client} = await connect({
      store: over(memory, {
        set: async (key, value) => {
          if (writing.has(key)) overlaps.push(key)
          writing.add(key)
          // The second write of the session record was queued behind the first, the third behind the second: more
          // requests come while each is written.
          if (key === sessionKey && [2, 3].includes(++sessionWrites)) {
            const before = more
            more = later(5, () => Promise.all([before, ...Array.from({length: 110}, () => client.ping())]))
          }
          await new Promise((resolve) => setTimeout(resolve, 20))
          writing.delete(key)
          return memory.set(key, value)
        },
      }),
    })
    // Past two blocks while the first write is in flight: their writes queue behind it, as one.
    await Promise.all(Array.from({length: 210}, () => client.ping()))
    await more

    expect(sessionWrites).toBeGreaterThan(3)
    expect(overlaps).toEqual([])
    await client.close()
  })
})

describe('store writers over a long session', () => {
  it('a record written and deleted leaves no writer behind: memory does not grow with the calls made', async () => {
    useMock()
    const {client, transport} = await connect({store: new MemoryStore()})
    // Each call's progress has its stream's cursor written, then deleted once the call is answered.
    for (let call = 0; call < 40; call++)
      await client.callTool({name: 'slow', arguments: {steps: 2, delayMs: 0}}, undefined, {onprogress: () => {}})
    // The session's record and the standalone stream's may keep theirs while they live.
    expect(queryObjects(CoalescedWriter, {format: 'count'})).toBeLessThanOrEqual(2)
    await transport.close()
  })
})

describe('a start with nothing stored', () => {
  it('lists nothing: there are no streams or server requests of no session to look for', async () => {
    useMock()
    const memory = new MemoryStore()
    const calls: string[] = []
    const store = over(memory, {
      get: (key) => (calls.push(`get ${key}`), memory.get(key)),
      list: (listed) => (calls.push(`list ${listed}`), memory.list(listed)),
    })
    const {client} = await connect({store})
    expect(calls.filter((call) => call.startsWith('list'))).toEqual([])
    expect(calls).toContain(`get ${sessionKey}`)
    await client.close()
  })
})
