/**
 * `transport.request`: a request of the app's own beside the Client's (the Tasks extension's raw dispatch), against
 * the reference server on a real socket, with the SDK Client connected. Its answer goes to the app alone; each way
 * it can fail surfaces once, as its rejection.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {isTransportError, ResumableHTTPClientTransport} from '../../src/index.ts'
import {createReferenceServer, type ReferenceServer} from '../../src/testing/index.ts'
import {listen, type Listening} from '../../src/testing/node.ts'
import {connectTo, until, type Harness} from '../fixtures/client.ts'

let listening: Listening | undefined
let harness: Harness | undefined
afterEach(async () => {
  await harness?.client.close()
  await listening?.close()
  harness = listening = undefined
})

async function connected(): Promise<{server: ReferenceServer; harness: Harness}> {
  const server = createReferenceServer()
  listening = await listen(server)
  harness = await connectTo(listening.url)
  return {server, harness}
}

describe('transport.request', () => {
  it("resolves with the request's JSON-RPC answer, result or error, which never reaches the Client; the Client's own calls go on", async () => {
    const {server, harness} = await connected()
    const {transport, client, errors} = harness
    const [listed, unknown, called] = await Promise.all([
      transport.request({method: 'tools/list'}),
      transport.request({method: 'tools/call', params: {name: 'nope'}}),
      client.callTool({name: 'echo', arguments: {from: 'client'}}),
    ])
    expect(listed).toMatchObject({
      jsonrpc: '2.0',
      result: {tools: expect.arrayContaining([expect.objectContaining({name: 'echo'})])},
    })
    expect(unknown).toMatchObject({error: {code: -32602, message: 'Unknown tool: nope'}})
    expect(called).toMatchObject({content: [{type: 'text', text: 'echo: {"from":"client"}'}]})
    // Each went on the wire under an ID of its own, within the session.
    const ids = server.requests('POST').map((entry) => entry.rpcMethod)
    expect(ids.filter((method) => method === 'tools/call')).toHaveLength(2)
    expect(errors).toEqual([])
    expect(transport.metrics).toMatchObject({unmatchedResponses: 0, duplicatesDropped: 0})
  })

  it('sends its params: its progress is its own (the Client hears none of it), and its stream is resumed from its cursor when cut', async () => {
    const {server, harness} = await connected()
    server.faults.cutNext({after: 3, how: 'error', on: 'POST'})
    const answer = await harness.transport.request({
      method: 'tools/call',
      params: {name: 'slow', arguments: {steps: 4, delayMs: 20}, _meta: {progressToken: 'mine'}},
    })
    expect(answer).toMatchObject({result: {content: [{type: 'text', text: 'done after 4 steps'}]}})
    expect(server.executions).toEqual({slow: 1})
    expect(harness.transport.metrics.streamResumptions).toBe(1)
    expect(harness.errors).toEqual([])
  })

  it('rejects with the TransportError that ended it: session-expired when the server forgets the session mid-call', async () => {
    const {server, harness} = await connected()
    const pending = harness.transport.request({
      method: 'tools/call',
      params: {name: 'slow', arguments: {steps: 50, delayMs: 20}},
    })
    await until(() => server.executions['slow'] === 1)
    server.faults.expireSession()
    const error = await pending.catch((caught: unknown) => caught)
    expect(isTransportError(error, 'session-expired')).toBe(true)
    // The Client hears of the session's end from its standalone stream, and of nothing else.
    expect(harness.errors.filter((reported) => !isTransportError(reported, 'session-expired'))).toEqual([])
  })

  it('rejects with aborted once its signal aborts, and its late answer reaches no one', async () => {
    const {server, harness} = await connected()
    const controller = new AbortController()
    const pending = harness.transport.request(
      {method: 'tools/call', params: {name: 'slow', arguments: {steps: 3, delayMs: 30}}},
      {signal: controller.signal},
    )
    await until(() => server.executions['slow'] === 1)
    controller.abort()
    const error = await pending.catch((caught: unknown) => caught)
    expect(isTransportError(error, 'aborted')).toBe(true)
    await until(() => server.session().streams.every((stream) => stream.kind !== 'request' || stream.finished))
    expect(harness.errors).toEqual([])
    expect(harness.transport.metrics.unmatchedResponses).toBe(0)
    expect(harness.transport.pendingRequests).toBe(0)
  })

  it('refuses before start() with aborted, and a request without a method with a TypeError', async () => {
    const transport = new ResumableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'))
    await expect(transport.request({method: 'tools/list'})).rejects.toMatchObject({
      name: 'TransportError',
      code: 'aborted',
    })
    const {harness} = await connected()
    await expect(harness.transport.request({} as never)).rejects.toThrow(
      new TypeError('request.method must be a string'),
    )
  })
})
