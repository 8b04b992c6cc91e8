/**
 * The 2026-07-28 era on the wire, message by message (docs/design.md#eras), through the public API against msw:
 * the headers derived from a request's envelope and none for a 2025 message, the protocol's headers kept from
 * `requestInit`, and the v2 SDK's error brand on HTTP failures.
 */
import {SdkHttpError} from '@modelcontextprotocol/client'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {isTransportError, ResumableHTTPClientTransport} from '../../src/index.ts'
import {network, until, url} from '../fixtures/harness.ts'
import {frame, sse} from '../fixtures/wire.ts'

const envelope = {'io.modelcontextprotocol/protocolVersion': '2026-07-28'}

/** A started transport whose POSTs msw answers with `answer`; resolves the headers each POST carried. */
async function transportAnswering(answer: (body: {id?: number | string}) => Response, options: ConstructorParameters<typeof ResumableHTTPClientTransport>[1] = {}) {
  const seen: Headers[] = []
  network.use(
    http.post(url, async ({request}) => {
      seen.push(request.headers)
      return answer((await request.json()) as {id?: number})
    }),
  )
  const transport = new ResumableHTTPClientTransport(new URL(url), options)
  const delivered: JSONRPCMessage[] = []
  transport.onmessage = (message) => void delivered.push(message)
  await transport.start()
  return {transport, seen, delivered}
}

const ok = ({id}: {id?: number | string}): Response => HttpResponse.json({jsonrpc: '2.0', id, result: {}})

describe('headers of a request', () => {
  it('a request with a 2026-07-28 envelope carries its version, method and name, Base64-wrapped when not plain ASCII, and no session', async () => {
    const {transport, seen} = await transportAnswering(ok)
    await transport.send({jsonrpc: '2.0', id: 1, method: 'resources/read', params: {uri: 'file:///données', _meta: envelope}})
    await transport.send({jsonrpc: '2.0', id: 2, method: 'prompts/get', params: {name: ' padded', _meta: envelope}})
    await transport.send({jsonrpc: '2.0', id: 3, method: 'tools/list', params: {_meta: envelope}})
    const mcp = seen.map((headers) => [headers.get('mcp-protocol-version'), headers.get('mcp-method'), headers.get('mcp-name'), headers.get('mcp-session-id')])
    expect(mcp).toEqual([
      ['2026-07-28', 'resources/read', `=?base64?${btoa('file:///donn\u00c3\u00a9es')}?=`, null],
      ['2026-07-28', 'prompts/get', `=?base64?${btoa(' padded')}?=`, null],
      ['2026-07-28', 'tools/list', null, null],
    ])
    await transport.close()
  })

  it('a 2025 message gets none of the new headers, and requestInit cannot set them', async () => {
    const requestInit = {headers: {'Mcp-Method': 'forged', 'Mcp-Name': 'forged', 'Mcp-Param-Region': 'forged', 'X-App': 'kept'}}
    const {transport, seen} = await transportAnswering(ok, {requestInit})
    await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo'}})
    const headers = seen[0]!
    expect([headers.get('mcp-method'), headers.get('mcp-name'), headers.get('mcp-param-region'), headers.get('x-app')]).toEqual([null, null, null, 'kept'])
    await transport.close()
  })

  it('a method that cannot be a header value fails the send with protocol, and nothing is sent', async () => {
    const {transport, seen} = await transportAnswering(ok)
    const error = await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call\n', params: {_meta: envelope}}).catch((rejection: unknown) => rejection)
    expect(isTransportError(error, 'protocol')).toBe(true)
    expect(seen).toEqual([])
    expect(transport.pendingRequests).toBe(0)
    await transport.close()
  })
})

describe('HTTP failures, as the v2 SDK reads them', () => {
  it.each([401, 403, 503])('HTTP %i rejects with a TransportError that is also an SdkHttpError, with the status and the body', async (status) => {
    const {transport} = await transportAnswering(() => new HttpResponse('{"error":"no"}', {status}))
    const error = await transport.send({jsonrpc: '2.0', id: 1, method: 'server/discover', params: {_meta: envelope}}).catch((rejection: unknown) => rejection)
    expect(isTransportError(error)).toBe(true)
    expect(error).toBeInstanceOf(SdkHttpError)
    expect((error as SdkHttpError).data).toEqual({status, text: '{"error":"no"}'})
    await transport.close()
  })

  it('a 400 carrying the JSON-RPC error of a 2026-07-28 request is that request\'s answer, under the id the Client gave', async () => {
    const rejection = ({id}: {id?: number | string}): Response => HttpResponse.json({jsonrpc: '2.0', id, error: {code: -32020, message: 'header mismatch'}}, {status: 400})
    const {transport, delivered} = await transportAnswering(rejection)
    await transport.send({jsonrpc: '2.0', id: 'probe-1', method: 'server/discover', params: {_meta: envelope}})
    expect(delivered).toEqual([{jsonrpc: '2.0', id: 'probe-1', error: {code: -32020, message: 'header mismatch'}}])
    // The same answer to a 2025 request is an HTTP failure: that era has no such answer.
    const error = await transport.send({jsonrpc: '2.0', id: 2, method: 'tools/list'}).catch((failure: unknown) => failure)
    expect(isTransportError(error, 'http')).toBe(true)
    await transport.close()
  })
})

describe('the end of a request stream (onRequestStreamEnd)', () => {
  it('is heard once the stream that answered the request ends, and not for a request cancelled by its signal', async () => {
    const {transport, delivered} = await transportAnswering(({id}) => sse([frame('e1', {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'x'}}), frame('e2', {jsonrpc: '2.0', id, result: {}})]))
    const ended: string[] = []
    await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo', _meta: envelope}}, {onRequestStreamEnd: () => ended.push('first')})
    await until(() => ended.length === 1)
    expect(delivered.map((message) => ('id' in message ? message.id : 'notification'))).toEqual(['notification', 1])

    const cancel = new AbortController()
    const held = transport.send({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'echo', _meta: envelope}}, {requestSignal: cancel.signal, onRequestStreamEnd: () => ended.push('cancelled')})
    cancel.abort()
    await held.catch(() => {})
    await transport.close()
    expect(ended).toEqual(['first'])
  })
})
