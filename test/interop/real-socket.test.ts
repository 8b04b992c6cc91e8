/** Over real sockets on 127.0.0.1: a destroyed connection is a real network failure, not an injected one. */
import {connect} from 'node:net'
import {afterEach, describe, expect, it} from 'vitest'
import {createReferenceServer} from '../../src/testing/index.ts'
import {listen, type Listening} from '../../src/testing/node.ts'
import {codeOf, connectTo, eventsOf, until} from '../fixtures/client.ts'
import {startTcpProxy, type TcpProxy} from '../fixtures/tcp-proxy.ts'

let server: Listening | undefined
let proxy: TcpProxy | undefined
afterEach(async () => {
  await proxy?.close()
  await server?.close()
  proxy = undefined
})

describe('real sockets', () => {
  it('a socket destroyed mid-stream is resumed from the last stored event; the tool ran once', async () => {
    const mock = createReferenceServer()
    server = await listen(mock)
    const {client, transport, events} = await connectTo(server.url)
    const progress: number[] = []
    const call = client.callTool({name: 'slow', arguments: {steps: 6, delayMs: 30}}, undefined, {
      onprogress: ({progress: step}) => progress.push(step),
    })
    await until(() => progress.length === 2)
    server.dropConnections()
    const result = await call

    expect(result.content).toEqual([{type: 'text', text: 'done after 6 steps'}])
    expect(progress).toEqual([1, 2, 3, 4, 5, 6])
    expect(mock.executions).toEqual({slow: 1})
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    const resumed = eventsOf(events, 'reconnect').filter((event) => event.stream === 'request')
    expect(resumed[0]).toMatchObject({branch: 'stream-resumption', headers: {'mcp-session-id': transport.sessionId}})
    expect(resumed[0]!.headers['last-event-id']).toMatch(/^p\d+_\d+$/)
    await client.close()
  })

  it('close() ends the real connections it opened', async () => {
    const mock = createReferenceServer()
    server = await listen(mock)
    const {client} = await connectTo(server.url)
    await until(() => (mock.sessions()[0]?.streams ?? []).some((stream) => stream.connected))
    await client.close()
    await until(() => mock.session().streams.every((stream) => !stream.connected))
  })

  it('a client gone while it sends its request body costs the server nothing: no error escapes, the next client is served', async () => {
    const mock = createReferenceServer()
    server = await listen(mock)
    const escaped: unknown[] = []
    const onRejection = (reason: unknown) => escaped.push(reason)
    process.on('unhandledRejection', onRejection)
    try {
      const {port} = new URL(server.url)
      const socket = connect(Number(port), '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      // A body announced at 100 bytes, 10 of them sent, then the socket destroyed.
      socket.write(
        'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',
      )
      await until(() => socket.bytesWritten > 0)
      socket.destroy()
      const {client} = await connectTo(server.url)
      await client.close()
      expect(escaped).toEqual([])
    } finally {
      process.off('unhandledRejection', onRejection)
    }
  })
})

describe('a POST the server took, then cut', () => {
  it('is never sent again, though the server would answer it: one POST reaches the server, the tool runs once, and the call settles outcome-unknown', async () => {
    const mock = createReferenceServer()
    server = await listen(mock)
    proxy = await startTcpProxy({port: Number(new URL(server.url).port)})
    const {client} = await connectTo(proxy.url('/mcp'))
    // The server reads the whole POST and starts its answer; the connection is destroyed before a byte of it arrives.
    const cut = proxy.cutNext({request: (chunk) => chunk.includes('"tools/call"'), at: () => 0})
    const failed = await client.callTool({name: 'echo', arguments: {text: 'once'}}).catch((error: unknown) => error)
    await cut

    expect(codeOf(failed)).toBe('outcome-unknown')
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    expect(mock.executions).toEqual({echo: 1})
    // The cut was the first connection's only: the same POST again, the app's choice, is answered as usual.
    await expect(client.callTool({name: 'echo', arguments: {text: 'again'}})).resolves.toMatchObject({
      content: [{type: 'text', text: 'echo: {"text":"again"}'}],
    })
    expect(mock.executions).toEqual({echo: 2})
    await client.close()
  })
})
