/**
 * What must be in the store before something goes out or comes in, checked against a store whose writes take
 * effect only when they resolve: a write merely started would not be seen.
 */
import {CreateMessageRequestSchema, type JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {describe, expect, it} from 'vitest'
import type {FetchLike, JsonValue} from '../../src/index.ts'
import {connect, until, useMock} from '../fixtures/harness.ts'
import {RecordingStore, SlowApplyStore} from '../fixtures/recording-store.ts'

/** A fetch that calls `check` with each POSTed JSON-RPC body and whether it carries a session, as it goes out. */
function checkingFetch(check: (body: Record<string, unknown>, inSession: boolean) => void): FetchLike {
  return (input, init) => {
    if (typeof init?.body === 'string')
      check(JSON.parse(init.body) as Record<string, unknown>, new Headers(init.headers).has('mcp-session-id'))
    return fetch(input, init)
  }
}

describe('request IDs', () => {
  it('every request ID goes out only once the store reserves past it, the boundary ID included, across restarts', async () => {
    useMock()
    const store = new SlowApplyStore(3)
    const sent: number[] = []
    const unreserved: {id: number; reserved: number | undefined}[] = []
    const fetch = checkingFetch((body, inSession) => {
      if (typeof body['id'] !== 'number' || typeof body['method'] !== 'string') return
      sent.push(body['id'])
      const reserved = store.appliedSession()?.requestIdsReserved
      if (inSession && !(reserved !== undefined && body['id'] < reserved)) unreserved.push({id: body['id'], reserved})
    })
    const before = await connect({store, fetch})
    // Past the first block: the ID at the boundary of a reservation is among them.
    for (let ping = 0; ping < 105; ping++) await before.client.ping()
    expect(Math.max(...sent)).toBeGreaterThan(101)
    expect(unreserved).toEqual([])
    await before.transport.close()

    const after = await connect({store, fetch})
    const firstAfter = sent.length
    await after.client.ping()
    expect(Math.min(...sent.slice(firstAfter))).toBeGreaterThan(Math.max(...sent.slice(0, firstAfter)))
    expect(unreserved).toEqual([])
    await after.client.close()
  })
})

describe('request IDs in a burst', () => {
  it('requests sent all at once go out only below the stored reservation: a write queued behind another stores the latest one', async () => {
    useMock()
    const store = new SlowApplyStore(20)
    const unreserved: {id: number; reserved: number | undefined}[] = []
    const fetch = checkingFetch((body, inSession) => {
      if (typeof body['id'] !== 'number' || typeof body['method'] !== 'string') return
      const reserved = store.appliedSession()?.requestIdsReserved
      if (inSession && !(reserved !== undefined && body['id'] < reserved)) unreserved.push({id: body['id'], reserved})
    })
    const {client} = await connect({store, fetch})
    // Three blocks of IDs handed out while one reservation write is under way: two writes queue behind it.
    await Promise.all(Array.from({length: 250}, () => client.ping()))
    expect(unreserved).toEqual([])
    await client.close()
  })
  it('a stored session reserved below the bound of the era without sessions starts past that bound', async () => {
    useMock()
    const store = new SlowApplyStore(1)
    const first = await connect({store})
    await first.transport.close()
    const wireIds = [...store.keys].find((key) => key.endsWith('#session'))!.replace(/#session$/, '#wire-ids')
    await store.set(wireIds, 5000)
    const sent: number[] = []
    const fetch = checkingFetch((body) => {
      if (typeof body['id'] === 'number') sent.push(body['id'])
    })
    const {client} = await connect({store, fetch})
    await client.listTools()
    expect(sent.length).toBeGreaterThan(0)
    expect(Math.min(...sent)).toBeGreaterThanOrEqual(5000)
    await client.close()
  })
})

describe('server requests', () => {
  it('a server request is in the store before it reaches onmessage, and the answer before its POST starts', async () => {
    const mock = useMock()
    // Server request records apply later than cursors: a request write left in the background shows.
    const store = new SlowApplyStore((key) => (key.includes('#request:') ? 15 : 1))
    const storedWhenAnswered: unknown[][] = []
    const {client, transport} = await connect({
      store,
      fetch: checkingFetch((body) => {
        if ('result' in body) storedWhenAnswered.push(store.appliedServerRequests())
      }),
    })
    const storedWhenDelivered: unknown[][] = []
    const deliver = transport.onmessage!
    transport.onmessage = (message: JSONRPCMessage, extra) => {
      if ('method' in message && message.method === 'sampling/createMessage')
        storedWhenDelivered.push(store.appliedServerRequests())
      deliver(message, extra)
    }
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: 'm',
      role: 'assistant',
      content: {type: 'text', text: 'stored first'},
    }))
    await client.callTool({name: 'ask'})
    await until(() => mock.answers.size === 1)

    expect(storedWhenDelivered).toEqual([[expect.objectContaining({method: 'sampling/createMessage'})]])
    expect(storedWhenAnswered).toEqual([
      [expect.objectContaining({result: expect.objectContaining({content: {type: 'text', text: 'stored first'}})})],
    ])
    await client.close()
  })

  it('without a session, a server request and its answer are stored nowhere: no session could ever resume them', async () => {
    const mock = useMock({sessions: false})
    const store = new SlowApplyStore(1)
    const {client} = await connect({store})
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: 'm',
      role: 'assistant',
      content: {type: 'text', text: 'not kept'},
    }))
    await client.callTool({name: 'ask'})
    await until(() => mock.answers.size === 1)
    await client.close()

    expect(store.writes.filter((write) => write.key.includes('#request:'))).toEqual([])
  })
})

describe('close()', () => {
  it('resolves only once every store write is applied, a write queued behind another one included', async () => {
    useMock()
    const store = new SlowApplyStore(10)
    const {transport} = await connect({store})
    // The session record is written when initialize is answered, then again with the negotiated version.
    await transport.close()
    expect(store.appliedSession()).toMatchObject({sessionId: 'session-1', protocolVersion: '2025-11-25'})
  })
})

/** A RecordingStore whose process dies at its first delete once `dying` is set: that delete and every later write fail. */
class DyingStore extends RecordingStore {
  dying = false
  dead = false

  override set(key: string, value: JsonValue): Promise<void> {
    return this.dead ? Promise.reject(new Error('the process is dead')) : super.set(key, value)
  }

  override delete(key: string): Promise<void> {
    if (this.dying && !this.dead) {
      this.dead = true
      // The first delete still lands; the process dies right after it.
      return super.delete(key)
    }
    return this.dead ? Promise.reject(new Error('the process is dead')) : super.delete(key)
  }
}

describe('the end of a session', () => {
  it('waits for a write of the session record under way: a late write does not bring the ended session back', async () => {
    useMock()
    // The session record is slow to write, its delete fast: a delete sent beside the write would land first.
    const store = new SlowApplyStore((key, op) => (key.endsWith('#session') && op === 'set' ? 30 : 1))
    const first = await connect({store})
    await first.transport.forgetSession()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(store.appliedSession()).toBeUndefined()
    await first.client.close()

    const next = await connect({store})
    expect(next.transport.sessionId).toBe('session-2')
    await next.client.close()
  })

  it("waits for a write of a stream's cursor under way too: the ended session leaves no record behind", async () => {
    const mock = useMock()
    const store = new SlowApplyStore((key, op) => (key.includes('#stream:') && op === 'set' ? 30 : 1))
    const {client, transport} = await connect({store})
    // The call fails once the session is forgotten: caught at once, lest its rejection go unhandled meanwhile.
    const call = client
      .callTool({name: 'slow', arguments: {steps: 20, delayMs: 5}}, undefined, {onprogress: () => {}})
      .catch(() => undefined)
    await until(() => mock.requests('POST', 'tools/call').length === 1)
    await until(() => [...store.keys].some((key) => key.includes('#stream:request:')))
    await transport.forgetSession()
    await call
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect([...store.keys].filter((key) => /#(session|stream:|request:)/.test(key))).toEqual([])
    await client.close()
  })

  it('deletes the session record before any record of it: a process that dies in between leaves no session to resume without its answers', async () => {
    const mock = useMock()
    const store = new DyingStore()
    const {client} = await connect({store})
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: 'm',
      role: 'assistant',
      content: {type: 'text', text: 'kept while the session lives'},
    }))
    await client.callTool({name: 'ask'})
    await until(() => mock.answers.size === 1)
    // The session's records by kind: `session`, `request:<id>`.
    const records = () =>
      [...store.keys].filter((key) => /#(session|request:)/.test(key)).map((key) => key.slice(key.indexOf('#') + 1))
    const hasCallStream = () => [...store.keys].some((key) => key.includes('#stream:request:'))
    // The call's stream record is gone once its answer came: the deletes left are those of the session's end.
    await until(() => records().some((key) => key.startsWith('request:')) && !hasCallStream())

    // The server forgets the session; the next request learns it (404) and the session ends in the store.
    mock.faults.restart()
    store.dying = true
    await expect(client.ping()).rejects.toMatchObject({code: 'session-expired'})
    await until(() => store.dead)

    // Whatever the dead process left, no session record names the answers it deleted.
    expect(records().filter((key) => key === 'session')).toEqual([])
    expect(records().some((key) => key.startsWith('request:'))).toBe(true)
    await client.close()
  })
})
