/**
 * An answer whose body the transport has no use for is released at once (its body cancelled), so that its connection
 * is not held until the garbage collector finds it (src/wire/http.ts `discard`); so is a request's own stream once
 * its answer came on another (src/streams/stream.ts `Stream.markAnswered`).
 */
import {describe, expect, it} from 'vitest'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {TransportEvent} from '../../src/index.ts'
import {eventsOf, until} from '../fixtures/harness.ts'
import {
  body,
  initialize,
  initialized,
  outcome,
  released,
  scripted,
  started,
  type Sent,
} from '../fixtures/scripted-fetch.ts'

const call = {jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: {name: 'echo'}}
const isCall = (sent: Sent): boolean => sent.body?.includes('"tools/call"') === true

describe('an answer the transport does not read', () => {
  it.each<
    [
      string,
      (sent: Sent) => Response | undefined,
      (transport: Awaited<ReturnType<typeof started>>['transport']) => Promise<unknown>,
    ]
  >([
    [
      'a DELETE answered 200 with a body',
      (sent) => (sent.method === 'DELETE' ? new Response(body('answer'), {status: 200}) : undefined),
      (transport) => transport.terminateSession(),
    ],
    [
      'a request answered 404 in its session: the session expired',
      (sent) => (isCall(sent) ? new Response(body('answer'), {status: 404}) : undefined),
      (transport) => outcome(transport.send(call)),
    ],
    [
      'a request answered 200 in neither JSON nor an event stream: its outcome is unknown',
      (sent) => (isCall(sent) ? new Response(body('answer'), {headers: {'content-type': 'text/plain'}}) : undefined),
      (transport) => outcome(transport.send(call)),
    ],
    [
      'a notification answered 202 with a body',
      (sent) =>
        sent.body?.includes('"notifications/initialized"') === true
          ? new Response(body('answer'), {status: 202})
          : undefined,
      (transport) => transport.send(initialized),
    ],
    [
      'the standalone GET answered 405 with a body: no stream offered',
      (sent) => (sent.method === 'GET' ? new Response(body('answer'), {status: 405}) : undefined),
      (transport) => transport.send(initialized),
    ],
  ])('%s is released', async (_what, answer, act) => {
    const {fetch} = scripted(answer)
    const {transport} = await started({fetch})
    await transport.send(initialize)
    transport.setProtocolVersion('2025-11-25')
    await act(transport)
    await until(() => released.length > 0, 1000)
    expect(released).toEqual(['answer'])
    await transport.close()
  })

  it('an initialize answered with a session ID that is no header value is released, and the request rejects', async () => {
    const answer = JSON.stringify({jsonrpc: '2.0', id: 0, result: {}})
    const {fetch} = scripted((sent) =>
      sent.body?.includes('"initialize"') === true
        ? new Response(body('answer', answer), {
            headers: {'content-type': 'application/json', 'mcp-session-id': 'a\u0001b'},
          })
        : undefined,
    )
    const {transport} = await started({fetch})
    expect(await outcome(transport.send(initialize))).toBeInstanceOf(Error)
    await until(() => released.length > 0, 1000)
    expect(released).toEqual(['answer'])
    await transport.close()
  })
})

describe('a request answered on another stream', () => {
  it("closes its own POST stream once the answer came on the standalone one: the POST's body is released, nothing is lost", async () => {
    const encoder = new TextEncoder()
    const note = (data: string): string =>
      `data: ${JSON.stringify({jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data}})}\n\n`
    let wireIdOf: (id: number) => void = () => {}
    const wireId = new Promise<number>((resolve) => (wireIdOf = resolve))
    let sendAnswer: () => void = () => {}
    const answer = new Promise<undefined>((resolve) => (sendAnswer = () => resolve(undefined)))
    // The standalone stream brings the call's answer, once the POST's stream is read, then a notification of its own.
    const standalone = new ReadableStream<Uint8Array>({
      async start(controller) {
        const id = await wireId
        await answer
        controller.enqueue(
          encoder.encode(`id: g1\ndata: ${JSON.stringify({jsonrpc: '2.0', id, result: {content: []}})}\n\n`),
        )
        controller.enqueue(encoder.encode(`id: g2\n${note('after')}`))
      },
    })
    const sse = {'content-type': 'text/event-stream'}
    const {fetch} = scripted((sent) => {
      if (sent.method === 'GET') return new Response(standalone, {headers: sse})
      if (!isCall(sent)) return undefined
      wireIdOf((JSON.parse(sent.body!) as {id: number}).id)
      // The POST's stream: a progress of its own, then open for ever.
      return new Response(body('post', `id: p1\n${note('before')}`), {headers: sse})
    })
    const events: TransportEvent[] = []
    const {transport, messages} = await started({fetch, onEvent: (event) => events.push(event)})
    await transport.send(initialize)
    transport.setProtocolVersion('2025-11-25')
    await transport.send(initialized)
    await transport.send(call)
    // The POST's stream brought all it will: the next thing it would do is wait.
    await until(() => messages.length === 2)
    sendAnswer()

    await until(() => released.includes('post'), 1000)
    await until(() => messages.length === 4)
    const said = (message: JSONRPCMessage): string =>
      'id' in message ? `answer ${String(message.id)}` : String((message as {params?: {data?: unknown}}).params?.data)
    expect(messages.slice(1).map(said)).toEqual(['before', 'answer 1', 'after'])
    expect(eventsOf(events, 'stream-closed')).toEqual([
      {type: 'stream-closed', stream: 'request', requestId: 1, reason: 'completed'},
    ])
    expect(eventsOf(events, 'reconnect')).toEqual([])
    await transport.close()
  })
})
