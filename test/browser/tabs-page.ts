/**
 * The page of test/e2e/two-tabs.test.ts, bundled by Vite and opened in several tabs of headless Chromium: each
 * tab connects an SDK Client over the transport with an IdbStore, whose leases are Web Locks. Everything the
 * test checks is on `window.__tab`; `window.__startSlow()` starts the reference server's slow tool, and
 * `window.__echo()` calls its echo tool.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport, type TransportMetrics} from '../../src/index.ts'
import {IdbStore} from '../../src/idb.ts'

export interface TabState {
  phase: 'connecting' | 'connected' | 'failed'
  sessionId: string | undefined
  /** Whether IdbStore's leases are Web Locks here. */
  webLocks: boolean
  /** Progress of this tab's own slow call. */
  progress: number[]
  /** Answers to calls of an earlier tab, delivered on a stream this tab resumed. */
  unmatched: unknown[]
  metrics: TransportMetrics | undefined
  errors: string[]
}

declare global {
  interface Window {
    __tab: TabState
    __startSlow: () => void
    __echo: () => Promise<string>
  }
}

const state: TabState = {
  phase: 'connecting',
  sessionId: undefined,
  webLocks: IdbStore.webLocks,
  progress: [],
  unmatched: [],
  metrics: undefined,
  errors: [],
}
window.__tab = state
const message = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error))

const transport = new ResumableHTTPClientTransport(new URL('/mcp', location.href), {
  store: new IdbStore(),
  reconnect: {minDelayMs: 50, maxDelayMs: 200},
  onEvent: (event) => {
    if (event.type === 'unmatched-response') state.unmatched.push(event.message)
    if (event.type === 'store-error') state.errors.push(`store-error ${event.key}: ${message(event.error)}`)
  },
})
const client = new Client({name: 'tab', version: '1.0.0'})
client.onerror = (error) => state.errors.push(`client.onerror: ${message(error)}`)

window.__startSlow = () => {
  client
    .callTool({name: 'slow', arguments: {steps: 8, delayMs: 300}}, undefined, {
      onprogress: ({progress}) => state.progress.push(progress),
      timeout: 60_000,
    })
    .catch((error: unknown) => state.errors.push(message(error)))
}

window.__echo = async () => JSON.stringify((await client.callTool({name: 'echo', arguments: {tab: 'adopter'}})).content)

client
  .connect(transport)
  .then(() => {
    state.sessionId = transport.sessionId
    state.phase = 'connected'
    setInterval(() => (state.metrics = transport.metrics), 20)
  })
  .catch((error: unknown) => {
    state.errors.push(message(error))
    state.phase = 'failed'
  })
