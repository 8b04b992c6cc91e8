/**
 * The error class through the public API: what a failed request's error carries (the v2 SDK's brands, `data`),
 * how a fetch failure's cause chain tells a connection never opened, how errors of another copy of the library
 * are recognised, and what an app's own abort says (docs/failures.md).
 */
import {SdkError, SdkHttpError} from '@modelcontextprotocol/client'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {describe, expect, it} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  TransportError,
  transportErrorCodeOf,
  type FetchLike,
} from '../../src/index.ts'
import {connect, until, useMock} from '../fixtures/harness.ts'
import {failure} from '../fixtures/wire.ts'

const initialize: JSONRPCMessage = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 'test', version: '1'}},
}

/** What sending `initialize` rejects with, through a fetch of the test's making. */
async function sendFailure(fetch: FetchLike): Promise<unknown> {
  const transport = new ResumableHTTPClientTransport(new URL('http://mcp.test/mcp'), {
    fetch,
    reconnect: {maxAttempts: 1, minDelayMs: 1, maxDelayMs: 1},
  })
  await transport.start()
  const error = await failure(transport.send(initialize))
  await transport.close()
  return error
}

/** A fetch failure (a TypeError, at depth 1) whose cause chain holds an `ECONNREFUSED` error at `depth`. */
function refusedAt(depth: number): TypeError {
  const code = {code: 'ECONNREFUSED'}
  if (depth === 1) return Object.assign(new TypeError('fetch failed'), code)
  let error: Error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), code)
  for (let above = depth - 1; above > 1; above--) error = new Error(`wrapper ${above}`, {cause: error})
  return new TypeError('fetch failed', {cause: error})
}

describe('the error of a failed request', () => {
  it('an HTTP failure is both an SdkError and an SdkHttpError of the v2 SDK; a network failure is neither and carries no data', async () => {
    const http = await sendFailure(() => Promise.resolve(new Response('busy', {status: 503})))
    expect(http).toBeInstanceOf(SdkError)
    expect(http).toBeInstanceOf(SdkHttpError)
    expect((http as TransportError).data).toEqual({status: 503, text: 'busy'})

    const network = await sendFailure(() => Promise.reject(new TypeError('fetch failed')))
    expect(isTransportError(network)).toBe(true)
    expect(network).not.toBeInstanceOf(SdkError)
    expect((network as TransportError).data).toBeUndefined()
    expect((network as TransportError).status).toBeUndefined()
  })

  it.each([
    ['a failure with no code', new TypeError('fetch failed'), 'outcome-unknown'],
    ['ECONNREFUSED on the thrown error', refusedAt(1), 'not-sent'],
    ['ECONNREFUSED 7 links down its causes', refusedAt(7), 'not-sent'],
    ['ECONNREFUSED 8 links down, past what is read', refusedAt(8), 'outcome-unknown'],
    [
      'a code that says nothing of the connection',
      Object.assign(new TypeError('fetch failed'), {code: 'ECONNRESET'}),
      'outcome-unknown',
    ],
  ])('%s: the request rejects %s', async (_what, thrown, code) => {
    const error = await sendFailure(() => Promise.reject(thrown))
    expect(transportErrorCodeOf(error)).toBe(code)
  })
})

describe('errors from another copy of the library, and errors that are none', () => {
  const named = (code: unknown): Error => Object.assign(new Error('elsewhere'), {name: 'TransportError', code})

  it.each([
    ['an Error named TransportError with a string code', named('http'), true, 'http'],
    ['an Error named TransportError without a code', named(undefined), false, undefined],
    ['an Error with a string code and another name', Object.assign(new Error('x'), {code: 'http'}), false, undefined],
    [
      'an object that is no Error, named TransportError with a code',
      {name: 'TransportError', code: 'http', message: 'x'},
      false,
      undefined,
    ],
    [
      'an McpError whose data holds a code',
      Object.assign(new Error('rpc'), {data: {code: 'not-sent'}}),
      false,
      'not-sent',
    ],
    [
      'an error whose data holds an unknown code',
      Object.assign(new Error('rpc'), {data: {code: 'nope'}}),
      false,
      undefined,
    ],
    ['an error without data', new Error('plain'), false, undefined],
    ['null', null, false, undefined],
    ['undefined', undefined, false, undefined],
  ])('%s: isTransportError says %s, transportErrorCodeOf %s', (_what, value, one, code) => {
    expect(isTransportError(value)).toBe(one)
    expect(transportErrorCodeOf(value)).toBe(code)
  })
})

describe("an app's own abort", () => {
  it('rejects calls.wait() with an aborted TransportError that says its signal stopped it, the reason as its cause', async () => {
    useMock()
    const {client, transport} = await connect({callJournal: true})
    const call = client.callTool({name: 'slow', arguments: {steps: 50, delayMs: 20}}).catch(() => undefined)
    await until(() => transport.calls.list().length === 1)
    const stop = new AbortController()
    const reason = new Error('the user left')
    const waiting = failure(transport.calls.wait(transport.calls.list()[0]!.callId, stop.signal))
    stop.abort(reason)
    const error = await waiting
    expect(error).toMatchObject({code: 'aborted', message: 'The operation was stopped by its signal'})
    expect((error as Error).cause).toBe(reason)
    await client.close()
    await call
  })
})
