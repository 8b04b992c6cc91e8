import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {describe, expect, expectTypeOf, it} from 'vitest'
import {ResumableHTTPClientTransport, TransportError, isTransportError} from '../../src/index.ts'
import {connect, useMock} from '../fixtures/harness.ts'

describe('drop-in replacement for the SDK transport', () => {
  it('implements the SDK Transport contract, constructor shape included', () => {
    expectTypeOf<ResumableHTTPClientTransport>().toExtend<Transport>()
    // The one-line swap: same constructor arguments for the common options.
    expectTypeOf<ConstructorParameters<typeof ResumableHTTPClientTransport>[0]>().toEqualTypeOf<URL>()
    const options = {requestInit: {headers: {authorization: 'Bearer x'}}, fetch: globalThis.fetch, sessionId: 's'}
    const ours: Transport = new ResumableHTTPClientTransport(new URL('http://h/mcp'), options)
    const theirs: Transport = new StreamableHTTPClientTransport(new URL('http://h/mcp'), options)
    expect(typeof ours.send).toBe(typeof theirs.send)
  })

  it('merges requestInit headers into every request, under the protocol headers', async () => {
    const mock = useMock()
    const seen: (string | null)[] = []
    const {client} = await connect({
      requestInit: {headers: {authorization: 'Bearer t', 'mcp-session-id': 'spoofed'}},
      fetch: (input, init) => {
        seen.push(new Headers(init?.headers).get('authorization'))
        return fetch(input, init)
      },
    })
    await client.callTool({name: 'echo'})
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(seen.every((value) => value === 'Bearer t')).toBe(true)
    expect(mock.requests('POST', 'tools/call')[0]!.sessionId).toBe('session-1')
    await client.close()
  })
})

describe('TransportError', () => {
  it('carries code, status and cause, and is recognised across realms by name and code', () => {
    const cause = new Error('socket hang up')
    const error = new TransportError('http', 'POST failed with HTTP 500', {status: 500, cause})
    expect(error).toMatchObject({name: 'TransportError', code: 'http', status: 500, cause})
    expect(isTransportError(error)).toBe(true)
    expect(isTransportError(error, 'http')).toBe(true)
    expect(isTransportError(error, 'protocol')).toBe(false)
    const foreign = Object.assign(new Error('x'), {name: 'TransportError', code: 'session-expired'})
    expect(isTransportError(foreign, 'session-expired')).toBe(true)
    expect(isTransportError(new Error('x'))).toBe(false)
    expect(isTransportError('TransportError')).toBe(false)
  })
})

describe('the SDK transport members that resume streams by hand', () => {
  it('onresumptiontoken hears every event ID of the request stream, as with the SDK transport', async () => {
    const mock = useMock()
    const {client} = await connect()
    const tokens: string[] = []
    await client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, {onprogress: () => {}, onresumptiontoken: (token) => tokens.push(token)})
    const [stream] = mock.session().streams.filter((candidate) => candidate.id.startsWith('p'))
    expect(tokens).toEqual(stream!.events.map((event) => event.id))
    await client.close()
  })

  it('resumeStream is refused with a TypeError that says the transport resumes streams itself', async () => {
    useMock()
    const {client, transport} = await connect()
    await expect(transport.resumeStream()).rejects.toThrow(/resumed by the transport itself/)
    await client.close()
  })
})
