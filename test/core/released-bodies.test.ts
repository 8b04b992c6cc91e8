/**
 * An answer whose body the transport has no use for is released at once (its body cancelled), so that its connection
 * is not held until the garbage collector finds it (src/wire/http.ts `discard`).
 */
import {describe, expect, it} from 'vitest'
import {until} from '../fixtures/harness.ts'
import {body, initialize, initialized, outcome, released, scripted, started, type Sent} from '../fixtures/scripted-fetch.ts'

const call = {jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: {name: 'echo'}}
const isCall = (sent: Sent): boolean => sent.body?.includes('"tools/call"') === true

describe('an answer the transport does not read', () => {
  it.each<[string, (sent: Sent) => Response | undefined, (transport: Awaited<ReturnType<typeof started>>['transport']) => Promise<unknown>]>([
    ['a DELETE answered 200 with a body', (sent) => (sent.method === 'DELETE' ? new Response(body('answer'), {status: 200}) : undefined), (transport) => transport.terminateSession()],
    ['a request answered 404 in its session: the session expired', (sent) => (isCall(sent) ? new Response(body('answer'), {status: 404}) : undefined), (transport) => outcome(transport.send(call))],
    ['a request answered 200 in neither JSON nor an event stream: its outcome is unknown', (sent) => (isCall(sent) ? new Response(body('answer'), {headers: {'content-type': 'text/plain'}}) : undefined), (transport) => outcome(transport.send(call))],
    ['a notification answered 202 with a body', (sent) => (sent.body?.includes('"notifications/initialized"') === true ? new Response(body('answer'), {status: 202}) : undefined), (transport) => transport.send(initialized)],
    ['the standalone GET answered 405 with a body: no stream offered', (sent) => (sent.method === 'GET' ? new Response(body('answer'), {status: 405}) : undefined), (transport) => transport.send(initialized)],
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
      sent.body?.includes('"initialize"') === true ? new Response(body('answer', answer), {headers: {'content-type': 'application/json', 'mcp-session-id': 'a\u0001b'}}) : undefined,
    )
    const {transport} = await started({fetch})
    expect(await outcome(transport.send(initialize))).toBeInstanceOf(Error)
    await until(() => released.length > 0, 1000)
    expect(released).toEqual(['answer'])
    await transport.close()
  })
})

