/**
 * The SDK `Transport` callbacks as the transport keeps and calls them (src/delivery/callbacks.ts):
 * an app's own callbacks stay across `close()`, a handler that throws or a failed store reach
 * `onerror` once, and no `onerror` is no crash.
 */
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {isTransportError, MemoryStore, ResumableHTTPClientTransport, type TransportEvent} from '../../src/index.ts'
import {network, url} from '../fixtures/harness.ts'

const initialize: JSONRPCMessage = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}},
}

/** A server that answers initialize (session `s1`) and each request with an empty result. */
function answering(): void {
  network.use(
    http.get(url, () => new HttpResponse(null, {status: 405})),
    http.post(url, async ({request}) => {
      const body = (await request.json()) as {id?: number; method?: string}
      if (body.id === undefined) return new HttpResponse(null, {status: 202})
      const result =
        body.method === 'initialize'
          ? {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: 's', version: '1'}}
          : {}
      return HttpResponse.json({jsonrpc: '2.0', id: body.id, result}, {headers: {'mcp-session-id': 's1'}})
    }),
  )
}

const turn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0))

describe('the callbacks of the transport', () => {
  it.each([1, 2])(
    '%i callbacks the app set, one a turn, before the turn of start() stay after close(), with no Client',
    async (count) => {
      answering()
      const transport = new ResumableHTTPClientTransport(new URL(url))
      const onmessage = (): void => {}
      const onerror = (): void => {}
      transport.onmessage = onmessage
      await turn()
      if (count === 2) transport.onerror = onerror
      await turn()
      await transport.start()
      await transport.close()
      expect(transport.onmessage).toBe(onmessage)
      expect(transport.onerror).toBe(count === 2 ? onerror : undefined)
    },
  )

  it('a message handler that throws reaches onerror, and without onerror it is dropped: the transport goes on', async () => {
    answering()
    for (const withOnerror of [true, false]) {
      const transport = new ResumableHTTPClientTransport(new URL(url))
      const errors: Error[] = []
      const seen: JSONRPCMessage[] = []
      transport.onmessage = (message) => {
        seen.push(message)
        throw new Error('handler broke')
      }
      if (withOnerror) transport.onerror = (error) => errors.push(error)
      await transport.start()
      await transport.send(initialize)
      await transport.send({jsonrpc: '2.0', id: 1, method: 'ping'})
      expect(seen).toHaveLength(2)
      expect(errors.map((error) => error.message)).toEqual(withOnerror ? ['handler broke', 'handler broke'] : [])
      await transport.close()
    }
  })

  it('a store that fails is reported to onerror once, saying so, and the transport goes on without it', async () => {
    answering()
    const store = new MemoryStore()
    store.set = () => Promise.reject(new Error('disk full'))
    const events: TransportEvent[] = []
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, onEvent: (event) => events.push(event)})
    const errors: Error[] = []
    transport.onerror = (error) => errors.push(error)
    await transport.start()
    await transport.send(initialize)
    await transport.send({jsonrpc: '2.0', id: 1, method: 'ping'})
    await transport.close()
    expect(errors).toHaveLength(1)
    expect(isTransportError(errors[0], 'store')).toBe(true)
    expect(errors[0]!.message).toBe('The store failed: disk full; going on without it')
    expect((errors[0]!.cause as Error).message).toBe('disk full')
  })
})
