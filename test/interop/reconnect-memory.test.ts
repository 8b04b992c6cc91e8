/**
 * Memory flat over any number of reconnects (docs/design.md#reading-a-connection): a server that ends the standalone
 * stream after each event with `retry: 0` (the 2025-11-25 polling pattern, or a proxy cutting idle streams), over
 * real sockets and the platform's fetch. No signal handed to fetch carries listeners of past connections, the objects
 * made per connection do not pile up, and close() leaves nothing of a stream behind. Counted with `v8.queryObjects`
 * (after a full garbage collection), never timed: the heap figures are the bench's (`npm run bench`, reconnects).
 */
import {getEventListeners} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {queryObjects, setFlagsFromString} from 'node:v8'
import {runInNewContext} from 'node:vm'
import {afterEach, describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {Connection, Stream} from '../../src/streams/stream.ts'
import {until} from '../fixtures/client.ts'

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  server = undefined
})

/** A server whose standalone GET brings one event and `retry: 0`, then ends: the client reconnects at once, for ever. */
async function pollingServer(): Promise<{url: URL; gets: () => number}> {
  let gets = 0
  const polling = createServer((request, response) => {
    if (request.method === 'GET') {
      gets++
      const note = JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: {level: 'info', data: gets},
      })
      response.writeHead(200, {'content-type': 'text/event-stream'}).end(`retry: 0\nid: ${gets}\ndata: ${note}\n\n`)
      return
    }
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      const message = JSON.parse(body) as {id?: number; method?: string}
      if (message.method !== 'initialize') return void response.writeHead(202).end()
      const result = {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: 'polling', version: '1.0.0'}}
      response
        .writeHead(200, {'content-type': 'application/json', 'mcp-session-id': 's1'})
        .end(JSON.stringify({jsonrpc: '2.0', id: message.id, result}))
    })
  })
  server = polling
  await new Promise<void>((resolve) => polling.listen(0, '127.0.0.1', resolve))
  const {port} = polling.address() as AddressInfo
  return {url: new URL(`http://127.0.0.1:${port}/mcp`), gets: () => gets}
}

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Collects garbage, and lets the finalizers it schedules run (fetch lets go of a request's abort listener in one). */
async function collect(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** How many objects of each kind are alive, after {@link collect} (`queryObjects` collects again before it counts). */
async function alive(...kinds: (abstract new (...args: never[]) => unknown)[]): Promise<number[]> {
  await collect()
  return kinds.map((kind) => queryObjects(kind, {format: 'count'}))
}

describe('thousands of reconnects of the standalone stream', () => {
  it('leave no listener behind on a signal fetch is given, nothing per connection in the heap, and nothing of a stream after close()', async () => {
    const {url, gets} = await pollingServer()
    const warnings: string[] = []
    const onWarning = (warning: Error): void => void warnings.push(warning.name)
    process.on('warning', onWarning)
    let mostListeners = 0
    const handed: WeakRef<AbortSignal>[] = []
    const transport = new ResumableHTTPClientTransport(url, {
      reconnect: {minDelayMs: 0, maxDelayMs: 10},
      fetch: (input, init) => {
        const signal = init!.signal!
        // What a signal carries when fetch gets it: listeners of connections before this one, if it is long-lived.
        mostListeners = Math.max(mostListeners, getEventListeners(signal, 'abort').length)
        handed.push(new WeakRef(signal))
        return fetch(input, init)
      },
    })
    transport.onmessage = () => {}
    await transport.start()
    await transport.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}},
    })
    transport.setProtocolVersion('2025-11-25')
    await transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})

    await until(() => gets() >= 2000, 30_000)
    // Each connection's signal (and what hangs on it) goes with the connection. It reconnects meanwhile: the last
    // two handed before may still be under way.
    const past = handed.slice(0, -2)
    await collect()
    const signalsAlive = past.filter((ref) => ref.deref() !== undefined).length
    const connectionsAlive = (await alive(Connection))[0]
    await transport.close()
    process.off('warning', onWarning)

    // fetch lets go of its listener on a signal only once its request is garbage-collected: on a signal handed to
    // every GET they piled up by the thousand (MaxListenersExceededWarning past 1,500).
    expect(mostListeners).toBeLessThanOrEqual(1)
    expect(handed.length).toBeGreaterThanOrEqual(2000)
    expect(signalsAlive).toBe(0)
    expect(connectionsAlive).toBeLessThanOrEqual(2)
    expect(warnings).not.toContain('MaxListenersExceededWarning')
    // The transport is still referenced here: it holds nothing of its streams.
    expect(await alive(Stream, Connection)).toEqual([0, 0])
  }, 60_000)
})
