/**
 * The page of test/browser-reload.test.ts, bundled by Vite and run in headless Chromium. Every load connects an
 * SDK Client over the transport with an IdbStore. The first load starts the reference server's slow tool; the
 * test reloads the page mid-call; the second load must find the session in IndexedDB, resume the tool's
 * stream, and receive the tool's result as an `unmatched-response` (its Client never made that call).
 * Everything the test checks is on `window.__state`.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport, type TransportEvent, type TransportMetrics} from '../../src/index.ts'
import {IdbStore} from '../../src/idb.ts'

export type ReconnectEvent = Extract<TransportEvent, {type: 'reconnect'}>
export type UnmatchedEvent = Extract<TransportEvent, {type: 'unmatched-response'}>

export interface PageState {
  /** 1 on the first load, 2 after one reload (counted in sessionStorage, which a reload keeps). */
  load: number
  phase: 'connecting' | 'calling' | 'resuming' | 'done' | 'failed'
  /** The raw IndexedDB records (key → value) as this load found them, before the transport touched them. */
  storedBefore: Record<string, unknown>
  sessionId: string | undefined
  /** Progress delivered to this load's Client. */
  progress: number[]
  /** Progress delivered on earlier loads (kept in sessionStorage as it is delivered). */
  earlierProgress: number[]
  metrics: TransportMetrics | undefined
  reconnects: ReconnectEvent[]
  unmatched: UnmatchedEvent[]
  /** Methods of notifications received for a Client of an earlier load, not delivered. */
  orphaned: (string | undefined)[]
  duplicatesDropped: number
  /** What the Client itself received, apart from progress: only the answers to its own requests. */
  echo: string | undefined
  errors: string[]
}

declare global {
  interface Window {
    __state: PageState
  }
}

const steps = 8
const load = Number(sessionStorage.getItem('load') ?? '0') + 1
sessionStorage.setItem('load', String(load))
const state: PageState = {
  load,
  phase: 'connecting',
  storedBefore: {},
  sessionId: undefined,
  progress: [],
  earlierProgress: JSON.parse(sessionStorage.getItem('progress') ?? '[]') as number[],
  metrics: undefined,
  reconnects: [],
  unmatched: [],
  orphaned: [],
  duplicatesDropped: 0,
  echo: undefined,
  errors: [],
}
window.__state = state

const message = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error))

/** Every record of the IdbStore's database, read with the bare IndexedDB API (no library in between). */
async function readDatabase(): Promise<Record<string, unknown>> {
  const request = indexedDB.open('mcp-resumable-http')
  // A first load finds no database: let IdbStore create it with its object store, as it would without us.
  request.onupgradeneeded = () => {
    request.transaction?.abort()
  }
  const db = await new Promise<IDBDatabase | undefined>((resolve, reject) => {
    request.onsuccess = () => {
      resolve(request.result)
    }
    request.onerror = () => {
      if (request.error?.name === 'AbortError') resolve(undefined)
      else reject(request.error ?? new Error('indexedDB.open failed'))
    }
  })
  if (db === undefined) return {}
  try {
    const store = db.transaction('resumption', 'readonly').objectStore('resumption')
    const [keys, values] = await Promise.all([store.getAllKeys(), store.getAll()].map(settled))
    // IdbStore's keys are strings; anything else would show up here as its JSON.
    const name = (key: IDBValidKey): string => (typeof key === 'string' ? key : JSON.stringify(key))
    return Object.fromEntries((keys as IDBValidKey[]).map((key, index) => [name(key), (values as unknown[])[index]]))
  } finally {
    db.close()
  }
}

function settled(request: IDBRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => {
      resolve(request.result)
    }
    request.onerror = () => {
      reject(request.error ?? new Error('IndexedDB request failed'))
    }
  })
}

function onEvent(event: TransportEvent): void {
  if (event.type === 'reconnect') state.reconnects.push(event)
  if (event.type === 'unmatched-response') state.unmatched.push(event)
  if (event.type === 'orphaned-notification') state.orphaned.push(event.method)
  if (event.type === 'duplicate-dropped') state.duplicatesDropped++
  if (event.type === 'store-error') state.errors.push(`store-error ${event.key}: ${message(event.error)}`)
}

async function main(): Promise<void> {
  state.storedBefore = await readDatabase()
  const transport = new ResumableHTTPClientTransport(new URL('/mcp', location.href), {
    store: new IdbStore(),
    onEvent,
    reconnect: {minDelayMs: 50, maxDelayMs: 200},
  })
  const client = new Client({name: 'reload-page', version: '1.0.0'})
  client.onerror = (error) => {
    state.errors.push(`client.onerror: ${message(error)}`)
  }
  await client.connect(transport)
  state.sessionId = transport.sessionId
  const refresh = (): void => {
    state.metrics = transport.metrics
  }
  setInterval(refresh, 20)
  refresh()

  if (load === 1) {
    state.phase = 'calling'
    // Never settles here: the test reloads the page in the middle of it.
    await client.callTool({name: 'slow', arguments: {steps, delayMs: 300}}, undefined, {
      onprogress: ({progress}) => {
        state.progress.push(progress)
        sessionStorage.setItem('progress', JSON.stringify([...state.earlierProgress, ...state.progress]))
      },
      timeout: 60_000,
    })
    state.errors.push('the first load saw the slow tool finish: the test did not reload in time')
    state.phase = 'failed'
    return
  }

  state.phase = 'resuming'
  // The first load's call finishes on the stream this load resumed: its result comes through onEvent.
  const deadline = Date.now() + 8000
  while (state.unmatched.length === 0) {
    if (Date.now() > deadline) throw new Error("the first load's tool result never arrived on the resumed stream")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  // The resumed session serves this load's own requests too.
  const result = await client.callTool({name: 'echo', arguments: {load}})
  const [content] = result.content as {type: string; text?: string}[]
  state.echo = content?.text
  refresh()
  state.phase = 'done'
}

main().catch((error: unknown) => {
  state.errors.push(message(error))
  state.phase = 'failed'
})
