import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport, TransportError, isTransportError} from '../../src/index.ts'
import {connect, useMock} from '../fixtures/harness.ts'

describe('drop-in replacement for the SDK transport', () => {
  it("has the SDK transport's constructor and methods, with the same arity, and keeps the negotiated version alike", () => {
    const options = {requestInit: {headers: {authorization: 'Bearer x'}}, fetch: globalThis.fetch, sessionId: 's'}
    // The one-line swap: the same constructor arguments (the annotation is checked by the type check of the tests).
    const ours = new ResumableHTTPClientTransport(new URL('http://h/mcp'), options)
    const asTransport: Transport = ours
    const theirs = new StreamableHTTPClientTransport(new URL('http://h/mcp'), options)
    expect(ResumableHTTPClientTransport.length).toBe(StreamableHTTPClientTransport.length)
    const methods = ['start', 'send', 'close', 'setProtocolVersion', 'terminateSession'] as const
    const arity = (transport: object, name: string): unknown => {
      const method: unknown = Reflect.get(transport, name)
      return typeof method === 'function' ? method.length : typeof method
    }
    for (const name of methods) expect(arity(asTransport, name), name).toBe(arity(theirs, name))
    expect(methods.map((name) => arity(theirs, name))).toEqual([0, 2, 0, 1, 0])
    ours.setProtocolVersion('2025-06-18')
    theirs.setProtocolVersion('2025-06-18')
    expect(ours.protocolVersion).toBe(theirs.protocolVersion)
  })

  it('never lets requestInit headers stand in for the session, version or cursor headers', async () => {
    const mock = useMock()
    const spoofed = {
      'mcp-session-id': 'spoofed',
      'mcp-protocol-version': '1999-01-01',
      'last-event-id': 'spoofed-cursor',
    }
    const sent: {method: string; headers: Headers}[] = []
    const {client} = await connect({
      requestInit: {headers: {authorization: 'Bearer t', ...spoofed}},
      fetch: (input, init) => {
        sent.push({method: init?.method ?? 'GET', headers: new Headers(init?.headers)})
        return fetch(input, init)
      },
    })
    await client.callTool({name: 'echo'})
    await client.close()
    expect(sent.length).toBeGreaterThanOrEqual(4)
    for (const [name, value] of Object.entries(spoofed)) {
      expect(
        sent.map(({headers}) => headers.get(name)).filter((header) => header === value),
        name,
      ).toEqual([])
    }
    // initialize carries no session or version; nothing here resumed, so no request carries a cursor.
    expect([sent[0]!.headers.get('mcp-session-id'), sent[0]!.headers.get('mcp-protocol-version')]).toEqual([null, null])
    expect(sent.filter(({headers}) => headers.has('last-event-id'))).toEqual([])
    expect(mock.requests('GET')[0]?.lastEventId).toBeUndefined()
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
    await client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, {
      onprogress: () => {},
      onresumptiontoken: (token) => tokens.push(token),
    })
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
