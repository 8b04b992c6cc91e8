// The clients the benchmark compares, each behind one shape:
//   { name, stream(count) -> {events, ms}, echo() -> ms, close() }
// `ours` and `sdk` are driven at the Transport level (no SDK Client); `raw` is the least any client must do
// (fetch, decode, SSE parse, JSON.parse); `wire` only reads the bytes, to show the server is not the limit.
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {createParser} from 'eventsource-parser'
import {getEventListeners, setMaxListeners} from 'node:events'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {MeterProvider, MetricReader} from '@opentelemetry/sdk-metrics'
import {SimpleSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import {ResumableHTTPClientTransport} from '../dist/index.js'
import {FileStore} from '../dist/node.js'
import {InstrumentedHTTPClientTransport} from '../dist/otel.js'

const protocolVersion = '2025-11-25'

const initializeParams = {
  protocolVersion,
  capabilities: {},
  clientInfo: {name: 'bench-client', version: '1'},
}

/** A Transport driven by hand: requests are matched to responses by ID, notifications are counted. */
async function transportDriver(name, transport) {
  let nextId = 1
  let notifications = 0
  const waiters = new Map()
  const errors = []
  transport.onmessage = (message) => {
    if (message.id === undefined) {
      notifications++
      return
    }
    const waiter = waiters.get(message.id)
    if (waiter === undefined) return
    waiters.delete(message.id)
    if (message.error !== undefined) waiter.reject(new Error(`${name}: ${message.error.message}`))
    else waiter.resolve(message)
  }
  transport.onerror = (error) => errors.push(error)

  const request = async (method, params) => {
    const id = nextId++
    const answered = new Promise((resolve, reject) => waiters.set(id, {resolve, reject}))
    await transport.send({jsonrpc: '2.0', id, method, params})
    return answered
  }

  await transport.start()
  const init = await request('initialize', initializeParams)
  transport.setProtocolVersion(init.result.protocolVersion)
  await transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})

  return {
    name,
    transport,
    errors,
    async stream(count) {
      const before = notifications
      const start = performance.now()
      await request('tools/call', {name: 'stream', arguments: {count}})
      const ms = performance.now() - start
      return {events: notifications - before, ms}
    },
    async echo() {
      const start = performance.now()
      await request('tools/call', {name: 'echo', arguments: {text: 'hi'}})
      return performance.now() - start
    },
    async close() {
      await transport.close()
    },
  }
}

export function createOurs(url, options) {
  return transportDriver('ours', new ResumableHTTPClientTransport(new URL(url), options))
}

/** A reader that exports nothing: the SDK aggregates every measurement, as it does between two exports. */
class IdleReader extends MetricReader {
  onForceFlush() {
    return Promise.resolve()
  }
  onShutdown() {
    return Promise.resolve()
  }
}

/**
 * Ours through `mcp-resumable-http/otel`, on the real SDK: every span processed (by an exporter that drops it), every
 * metric aggregated. No context manager is registered: an app's (AsyncLocalStorage under the Node SDK) would slow
 * every client in this process, not this one alone.
 */
export function createOursOtel(url) {
  const exporter = {export: (spans, done) => done({code: 0}), shutdown: () => Promise.resolve()}
  const tracerProvider = new TracerProvider({spanProcessors: [new SimpleSpanProcessor({exporter})]})
  const meterProvider = new MeterProvider({readers: [new IdleReader()]})
  return transportDriver(
    'ours+otel',
    new InstrumentedHTTPClientTransport(new URL(url), {telemetry: {tracerProvider, meterProvider}}),
  )
}

/** Ours persisting every cursor to a FileStore (strict durability: stored before delivery). */
export async function createOursFile(url) {
  const directory = await mkdtemp(join(tmpdir(), 'mcp-bench-'))
  const store = new FileStore(join(directory, 'resumption.json'))
  const driver = await transportDriver('ours+file', new ResumableHTTPClientTransport(new URL(url), {store}))
  const close = driver.close
  driver.close = async () => {
    await close()
    await rm(directory, {recursive: true, force: true})
  }
  return driver
}

export async function createSdk(url) {
  const transport = new StreamableHTTPClientTransport(new URL(url))
  const driver = await transportDriver('sdk', transport)
  // The SDK hands one long-lived AbortSignal to every fetch, and undici's abort listeners pile up on it
  // (freed only by GC): Node would print MaxListenersExceededWarning hundreds of times. Silence the warning
  // (no effect on speed) and report the count instead.
  const signal = transport._abortController?.signal
  if (signal !== undefined) setMaxListeners(0, signal)
  driver.abortListeners = () => (signal === undefined ? undefined : getEventListeners(signal, 'abort').length)
  return driver
}

/** A POST as a bare client sends it: the protocol's headers and nothing else. */
function postMessage(url, body, sessionId) {
  const headers = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': protocolVersion,
  }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  return fetch(url, {method: 'POST', headers, body: JSON.stringify(body)})
}

function streamCall(id, count) {
  return {jsonrpc: '2.0', id, method: 'tools/call', params: {name: 'stream', arguments: {count}}}
}

/** fetch + TextDecoder + eventsource-parser + JSON.parse: the floor under any client. */
export async function createRaw(url) {
  let nextId = 1
  let sessionId
  const post = (body) => postMessage(url, body, sessionId)

  const init = await post({jsonrpc: '2.0', id: nextId++, method: 'initialize', params: initializeParams})
  sessionId = init.headers.get('mcp-session-id') ?? undefined
  await init.json()
  const initialized = await post({jsonrpc: '2.0', method: 'notifications/initialized'})
  await initialized.arrayBuffer()

  return {
    name: 'raw',
    errors: [],
    async stream(count) {
      const id = nextId++
      const start = performance.now()
      const response = await post(streamCall(id, count))
      let events = 0
      let answered = false
      const parser = createParser({
        onEvent(event) {
          const message = JSON.parse(event.data)
          if (message.id === id) answered = true
          else events++
        },
      })
      const decoder = new TextDecoder()
      const reader = response.body.getReader()
      for (;;) {
        const {done, value} = await reader.read()
        if (done) break
        parser.feed(decoder.decode(value, {stream: true}))
      }
      const ms = performance.now() - start
      if (!answered) throw new Error('raw: the stream ended without its response')
      return {events, ms}
    },
    async echo() {
      const id = nextId++
      const start = performance.now()
      const response = await post({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {name: 'echo', arguments: {text: 'hi'}},
      })
      const message = await response.json()
      if (message.id !== id) throw new Error('raw: echo answered with the wrong id')
      return performance.now() - start
    },
    async close() {},
  }
}

/** Reads the stream's bytes and nothing else: the ceiling the server and the socket allow. */
export async function createWire(url) {
  let nextId = 1
  return {
    name: 'wire',
    errors: [],
    async stream(count) {
      const start = performance.now()
      const response = await postMessage(url, streamCall(nextId++, count), 'bench-session')
      let bytes = 0
      const reader = response.body.getReader()
      for (;;) {
        const {done, value} = await reader.read()
        if (done) break
        bytes += value.byteLength
      }
      return {events: count, ms: performance.now() - start, bytes}
    },
    async close() {},
  }
}
