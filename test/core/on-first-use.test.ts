/**
 * What a transport with default options does not use is loaded on its first use only (docs/design.md#layout): the
 * call journal by `start()` when `callJournal` is true (given the journal itself, as a service worker must, it loads
 * nothing), and, in a page without Web Crypto, the SHA-256 of the server URL's query by the first store access.
 * Each module's loads are counted through vitest's mock of it (the module itself, passed through); its first use
 * must lose and reorder nothing, and a module that does not load is a typed error of the operation that needed it,
 * tried again by the next.
 */
import {createHash} from 'node:crypto'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type FetchLike,
  type Fence,
  type JsonValue,
  type Lease,
} from '../../src/index.ts'
import {callJournal} from '../../src/journal.ts'
import {connectClient} from '../fixtures/client.ts'
import {storedSession, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore, SlowApplyStore} from '../fixtures/recording-store.ts'
import {initialize, outcome, scripted, started} from '../fixtures/scripted-fetch.ts'

const modules = {journal: '../../src/calls/call-journal.ts', digest: '../../src/wire/sha256.ts'} as const
type Part = keyof typeof modules
const loads: Record<Part, number> = {journal: 0, digest: 0}
/** What a module that does not load rejects its import with (a chunk that did not arrive). */
const missing = new Error('Failed to fetch dynamically imported module')

/** Counts the loads of `part`'s module from now on; the first `failing` of them fail with {@link missing}. */
function watch(part: Part, failing = 0): void {
  let failures = failing
  // Scoped to the test, not hoisted: the Stryker run shares one worker between files (vitest.stryker.config.ts).
  vi.doMock(modules[part], async (importOriginal: () => Promise<unknown>) => {
    loads[part]++
    if (failures-- > 0) throw missing
    return importOriginal()
  })
}

afterEach(() => {
  for (const part of Object.keys(modules) as Part[]) {
    vi.doUnmock(modules[part])
    loads[part] = 0
  }
})

/** A store that logs every call made of it, reads and leases included. */
class TouchedStore extends MemoryStore {
  readonly touched: string[] = []

  override get(key: string): Promise<JsonValue | undefined> {
    this.touched.push(`get ${key}`)
    return super.get(key)
  }

  override set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    this.touched.push(`set ${key}`)
    return super.set(key, value, fence)
  }

  override list(prefix: string): Promise<string[]> {
    this.touched.push(`list ${prefix}`)
    return super.list(prefix)
  }

  override acquire(name: string, ttlMs: number): Promise<Lease | undefined> {
    this.touched.push(`acquire ${name}`)
    return super.acquire(name, ttlMs)
  }
}

/** The JSON-RPC method (or `answer`) of each POST `fetch` sent, in order, with what the store held of calls then. */
function recordingFetch(store: RecordingStore): {fetch: FetchLike; posts: {rpc: string; storedCalls: number}[]} {
  const posts: {rpc: string; storedCalls: number}[] = []
  const fetch: FetchLike = (input, init) => {
    if (init?.method === 'POST') {
      const message = JSON.parse(init.body as string) as {method?: string}
      posts.push({
        rpc: message.method ?? 'answer',
        storedCalls: [...store.keys].filter((key) => key.includes('#call:')).length,
      })
    }
    return globalThis.fetch(input, init)
  }
  return {fetch, posts}
}

describe('the call journal, loaded on first use', () => {
  it('is never loaded with callJournal off, through a session of tool calls', async () => {
    useMock()
    watch('journal')
    const transport = new ResumableHTTPClientTransport(new URL(url))
    const {client} = await connectClient(transport)
    await client.callTool({name: 'echo', arguments: {text: 'hi'}})
    expect(transport.calls.list()).toEqual([])
    await expect(transport.calls.wait('none')).rejects.toThrow(new TypeError('The call journal holds no call "none"'))
    await client.close()
    expect(loads.journal).toBe(0)
  })

  it('is loaded by start(), not at construction: the first tools/call of a fresh transport is in the store before its POST, then delivered and let go', async () => {
    useMock()
    // Its writes take effect only once they resolve: a record seen when the POST leaves was awaited.
    const store = new SlowApplyStore(5)
    await storedSession(store)
    watch('journal')
    const {fetch, posts} = recordingFetch(store)
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, callJournal: true, fetch})
    expect(loads.journal).toBe(0)
    expect(transport.calls.list()).toEqual([])
    const {client} = await connectClient(transport)
    expect(loads.journal).toBe(1)
    // The stored session answers initialize: the tools/call is the first message this transport sends.
    const result = await client.callTool({name: 'echo', arguments: {text: 'first'}})
    expect(result.content).toEqual([{type: 'text', text: 'echo: {"text":"first"}'}])
    expect(posts).toEqual([{rpc: 'tools/call', storedCalls: 1}])
    await client.close()
    expect([...store.keys].filter((key) => key.includes('#call:'))).toEqual([])
    expect(loads.journal).toBe(1)
  })

  it('keeps the order of requests sent together with the first tools/call, as later ones keep it (durability relaxed: nothing waits for the store)', async () => {
    useMock()
    const store = new RecordingStore()
    await storedSession(store)
    watch('journal')
    const {fetch, posts} = recordingFetch(store)
    const transport = new ResumableHTTPClientTransport(new URL(url), {
      store,
      callJournal: true,
      durability: 'relaxed',
      fetch,
    })
    const {client} = await connectClient(transport)
    const batch = (): Promise<unknown[]> =>
      Promise.all([client.listTools(), client.callTool({name: 'echo', arguments: {text: 'between'}}), client.ping()])
    await batch()
    const first = posts.splice(0).map((post) => post.rpc)
    await batch()
    const later = posts.splice(0).map((post) => post.rpc)
    expect(first).toEqual(['tools/list', 'tools/call', 'ping'])
    expect(later).toEqual(first)
    await client.close()
    expect(loads.journal).toBe(1)
  })

  it('is never imported when given itself, as a service worker must: it journals the first tools/call all the same', async () => {
    useMock()
    // Any import of the journal now fails, as import() does in a service worker.
    watch('journal', Number.POSITIVE_INFINITY)
    const store = new SlowApplyStore(5)
    await storedSession(store)
    const {fetch, posts} = recordingFetch(store)
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, callJournal, fetch})
    const {client} = await connectClient(transport)
    await client.callTool({name: 'echo', arguments: {text: 'first'}})
    expect(posts).toEqual([{rpc: 'tools/call', storedCalls: 1}])
    await client.close()
    expect(loads.journal).toBe(0)
  })

  it('fails start() with a network error naming it when it does not load, before the store is touched; a start() after close() loads it', async () => {
    watch('journal', 1)
    const store = new TouchedStore()
    const {fetch} = scripted()
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, callJournal: true, fetch})
    const failed = await outcome(transport.start())
    expect(isTransportError(failed, 'network'), String(failed)).toBe(true)
    expect(failed).toMatchObject({
      message: expect.stringMatching(
        /^The call journal \(options\.callJournal\) could not be loaded: .+; where import\(\) is not allowed \(a service worker\), give options\.callJournal the journal itself: import \{callJournal\} from 'mcp-resumable-http\/journal'$/,
      ),
      cause: expect.objectContaining({cause: missing}),
    })
    expect(store.touched).toEqual([])
    await transport.close()
    await transport.start()
    expect(loads.journal).toBe(2)
    expect(store.touched.length).toBeGreaterThan(0)
    await transport.close()
  })
})

describe("the SHA-256 of the server URL's query", () => {
  const query = '?token=ALICE-7c1e'
  /** The namespace of the URL with {@link query}, as the store has held it since before it was computed lazily. */
  const namespace = `mcp-resumable-http:${url}?sha256=${createHash('sha256').update(query).digest('hex').slice(0, 32)}`
  /** A page over plain HTTP: `crypto` without `subtle`. */
  const insecureContext = (): void => {
    const secure = globalThis.crypto
    vi.stubGlobal('crypto', {getRandomValues: secure.getRandomValues.bind(secure)})
  }
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  /** A session stored under {@link namespace}, and a transport of that URL on the store, not started. */
  async function storedUnderQuery(): Promise<{
    store: TouchedStore
    transport: ResumableHTTPClientTransport
    sent: {method: string; headers: Headers}[]
  }> {
    const store = new TouchedStore()
    await store.set(`${namespace}#session`, {sessionId: 'kept-1', requestIdsReserved: 200})
    store.touched.length = 0
    const {fetch, sent} = scripted()
    return {store, sent, transport: new ResumableHTTPClientTransport(new URL(`${url}${query}`), {store, fetch})}
  }

  it('is computed by prior() and start() together, with Web Crypto, loading nothing, and names the records as before: both find the session stored there', async () => {
    watch('digest')
    const {store, sent, transport} = await storedUnderQuery()
    const [era] = await Promise.all([transport.prior(), transport.start()])
    expect(era).toEqual({kind: 'legacy'})
    expect(transport.sessionId).toBe('kept-1')
    expect(store.touched.filter((call) => !call.includes(namespace))).toEqual([])
    // The session re-attaches: its standalone stream is opened in it.
    await until(() => sent.length === 1)
    expect(sent.map((request) => [request.method, request.headers.get('mcp-session-id')])).toEqual([['GET', 'kept-1']])
    await transport.close()
    expect(loads.digest).toBe(0)
  })

  it('is computed, in a page without Web Crypto, by the SHA-256 module the first store access loads, not construction: the same name, the same session', async () => {
    insecureContext()
    watch('digest')
    const {store, transport} = await storedUnderQuery()
    expect(loads.digest).toBe(0)
    const [era] = await Promise.all([transport.prior(), transport.start()])
    expect([era, transport.sessionId, loads.digest]).toEqual([{kind: 'legacy'}, 'kept-1', 1])
    expect(store.touched.filter((call) => !call.includes(namespace))).toEqual([])
    await transport.close()
    // A URL without a query loads nothing.
    const plain = await started({store: new RecordingStore(), fetch: scripted().fetch})
    await plain.transport.send(initialize)
    await plain.transport.close()
    expect(loads.digest).toBe(1)
  })

  it('fails prior() and start() with a network error naming it when it does not load, touching no store; it is loaded again by the next', async () => {
    insecureContext()
    watch('digest', 2)
    const {store, transport} = await storedUnderQuery()
    for (const failed of [await outcome(transport.prior()), await outcome(transport.start())]) {
      expect(isTransportError(failed, 'network'), String(failed)).toBe(true)
      expect(failed).toMatchObject({
        message: expect.stringMatching(
          /^The SHA-256 of the server URL's query, which names its records in the store, could not be loaded: /,
        ),
        cause: expect.objectContaining({cause: missing}),
      })
    }
    expect(store.touched).toEqual([])
    await transport.close()
    await transport.start()
    expect([transport.sessionId, loads.digest]).toEqual(['kept-1', 3])
    expect(store.touched.every((call) => call.includes(namespace))).toBe(true)
    await transport.close()
  })
})
