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
async function transportAnswering(
  answer: (body: {id?: number | string}) => Response,
  options: ConstructorParameters<typeof ResumableHTTPClientTransport>[1] = {},
) {
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
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/read',
      params: {uri: 'file:///données', _meta: envelope},
    })
    await transport.send({jsonrpc: '2.0', id: 2, method: 'prompts/get', params: {name: ' padded', _meta: envelope}})
    await transport.send({jsonrpc: '2.0', id: 3, method: 'tools/list', params: {_meta: envelope}})
    const mcp = seen.map((headers) => [
      headers.get('mcp-protocol-version'),
      headers.get('mcp-method'),
      headers.get('mcp-name'),
      headers.get('mcp-session-id'),
    ])
    expect(mcp).toEqual([
      ['2026-07-28', 'resources/read', `=?base64?${btoa('file:///donn\u00c3\u00a9es')}?=`, null],
      ['2026-07-28', 'prompts/get', `=?base64?${btoa(' padded')}?=`, null],
      ['2026-07-28', 'tools/list', null, null],
    ])
    await transport.close()
  })

  it('a 2025 message gets none of the new headers, and requestInit cannot set them', async () => {
    const requestInit = {
      headers: {'Mcp-Method': 'forged', 'Mcp-Name': 'forged', 'Mcp-Param-Region': 'forged', 'X-App': 'kept'},
    }
    const {transport, seen} = await transportAnswering(ok, {requestInit})
    await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo'}})
    const headers = seen[0]!
    expect([
      headers.get('mcp-method'),
      headers.get('mcp-name'),
      headers.get('mcp-param-region'),
      headers.get('x-app'),
    ]).toEqual([null, null, null, 'kept'])
    await transport.close()
  })

  it('a method that cannot be a header value fails the send with protocol, and nothing is sent', async () => {
    const {transport, seen} = await transportAnswering(ok)
    const error = await transport
      .send({jsonrpc: '2.0', id: 1, method: 'tools/call\n', params: {_meta: envelope}})
      .catch((rejection: unknown) => rejection)
    expect(isTransportError(error, 'protocol')).toBe(true)
    expect(seen).toEqual([])
    expect(transport.pendingRequests).toBe(0)
    await transport.close()
  })
})

describe('HTTP failures, as the v2 SDK reads them', () => {
  it.each([401, 403, 503])(
    'HTTP %i rejects with a TransportError that is also an SdkHttpError, with the status and the body',
    async (status) => {
      const {transport} = await transportAnswering(() => new HttpResponse('{"error":"no"}', {status}))
      const error = await transport
        .send({jsonrpc: '2.0', id: 1, method: 'server/discover', params: {_meta: envelope}})
        .catch((rejection: unknown) => rejection)
      expect(isTransportError(error)).toBe(true)
      expect(error).toBeInstanceOf(SdkHttpError)
      expect((error as SdkHttpError).data).toEqual({status, text: '{"error":"no"}'})
      await transport.close()
    },
  )

  it("a 400 carrying the JSON-RPC error of a 2026-07-28 request is that request's answer, under the id the Client gave", async () => {
    const rejection = ({id}: {id?: number | string}): Response =>
      HttpResponse.json({jsonrpc: '2.0', id, error: {code: -32020, message: 'header mismatch'}}, {status: 400})
    const {transport, delivered} = await transportAnswering(rejection)
    await transport.send({jsonrpc: '2.0', id: 'probe-1', method: 'server/discover', params: {_meta: envelope}})
    expect(delivered).toEqual([{jsonrpc: '2.0', id: 'probe-1', error: {code: -32020, message: 'header mismatch'}}])
    // The same answer to a 2025 request is an HTTP failure: that era has no such answer.
    const error = await transport
      .send({jsonrpc: '2.0', id: 2, method: 'tools/list'})
      .catch((failure: unknown) => failure)
    expect(isTransportError(error, 'http')).toBe(true)
    await transport.close()
  })
})

describe('the end of a request stream (onRequestStreamEnd)', () => {
  it('is heard once the stream that answered the request ends, and not for a request cancelled by its signal', async () => {
    const {transport, delivered} = await transportAnswering(({id}) =>
      sse([
        frame('e1', {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'x'}}),
        frame('e2', {jsonrpc: '2.0', id, result: {}}),
      ]),
    )
    const ended: string[] = []
    await transport.send(
      {jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo', _meta: envelope}},
      {onRequestStreamEnd: () => ended.push('first')},
    )
    await until(() => ended.length === 1)
    expect(delivered.map((message) => ('id' in message ? message.id : 'notification'))).toEqual(['notification', 1])

    const cancel = new AbortController()
    const held = transport.send(
      {jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'echo', _meta: envelope}},
      {requestSignal: cancel.signal, onRequestStreamEnd: () => ended.push('cancelled')},
    )
    cancel.abort()
    await held.catch(() => {})
    await transport.close()
    expect(ended).toEqual(['first'])
  })
})

describe('a 400 that may answer a 2026-07-28 request (issue #18)', () => {
  const rpcError = {code: -32020, message: 'header mismatch'}
  it.each<[string, number, (id: number | string | undefined) => string]>([
    [
      'another status, though its body is the error',
      403,
      (id) => JSON.stringify({jsonrpc: '2.0', id, error: rpcError}),
    ],
    ['a body that is not JSON', 400, () => 'bad header'],
    ['a body that is JSON null', 400, () => 'null'],
    ['another JSON-RPC version', 400, (id) => JSON.stringify({jsonrpc: '1.0', id, error: rpcError})],
    [
      'the error of another request',
      400,
      (id) => JSON.stringify({jsonrpc: '2.0', id: Number(id) + 1, error: rpcError}),
    ],
    ['a result, no error', 400, (id) => JSON.stringify({jsonrpc: '2.0', id, result: {}})],
    [
      'an error code that is no number',
      400,
      (id) => JSON.stringify({jsonrpc: '2.0', id, error: {...rpcError, code: '-32020'}}),
    ],
    ['an error without its message', 400, (id) => JSON.stringify({jsonrpc: '2.0', id, error: {code: -32020}})],
  ])(
    'with %s is no answer: the send rejects with the HTTP failure, and nothing is delivered',
    async (_, status, body) => {
      const {transport, delivered} = await transportAnswering(
        ({id}) => new HttpResponse(body(id), {status, headers: {'content-type': 'application/json'}}),
      )
      const error = await transport
        .send({jsonrpc: '2.0', id: 'probe-1', method: 'server/discover', params: {_meta: envelope}})
        .catch((failure: unknown) => failure)
      expect([isTransportError(error, 'http'), (error as {status?: number}).status, delivered]).toEqual([
        true,
        status,
        [],
      ])
      await transport.close()
    },
  )
})

describe('the headers of a 2026-07-28 request, field by field (issue #18)', () => {
  it.each<[string, string]>([
    ['', `=?base64?${btoa('')}?=`],
    ['=?base64?aGk=?=', `=?base64?${btoa('=?base64?aGk=?=')}?=`],
    ['=?base64?plain', '=?base64?plain'],
    ['plain?=', 'plain?='],
    ['echo tool', 'echo tool'],
  ])('the tool name %j goes as Mcp-Name %j', async (name, header) => {
    const {transport, seen} = await transportAnswering(ok)
    await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name, _meta: envelope}})
    expect(seen[0]!.get('mcp-name')).toBe(header)
    await transport.close()
  })

  // The params hold every field a method may name: each method's header shows which one it took.
  const named = {
    'tools/call': 'n',
    'prompts/get': 'n',
    'resources/read': 'u',
    'tasks/get': 't',
    'tasks/update': 't',
    'tasks/cancel': 't',
  }
  it.each(Object.entries(named))('%s goes with the field it names in Mcp-Name (%s)', async (method, header) => {
    const {transport, seen} = await transportAnswering(ok)
    await transport.send({jsonrpc: '2.0', id: 1, method, params: {name: 'n', uri: 'u', taskId: 't', _meta: envelope}})
    expect(seen[0]!.get('mcp-name')).toBe(header)
    await transport.close()
  })

  it('a method that names nothing sends no Mcp-Name, whatever its params hold; a message that is no request, or whose envelope version is no string, gets no header of the era', async () => {
    const {transport, seen} = await transportAnswering(({id}) =>
      id === undefined ? new HttpResponse(null, {status: 202}) : ok({id}),
    )
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {undefined: 'x', name: 'y', _meta: envelope},
    })
    await transport.send({jsonrpc: '2.0', method: 'notifications/roots/list_changed', params: {_meta: envelope}})
    // A response to no request the transport knows goes as the app wrote it, a stray `params` too.
    await transport.send({jsonrpc: '2.0', id: 7, result: {}, params: {_meta: envelope}} as never)
    await transport.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
      params: {_meta: {'io.modelcontextprotocol/protocolVersion': 20260728}},
    })
    expect(
      seen.map((headers) => [headers.get('mcp-method'), headers.get('mcp-name'), headers.get('mcp-protocol-version')]),
    ).toEqual([
      ['tools/list', null, '2026-07-28'],
      [null, null, null],
      [null, null, null],
      [null, null, null],
    ])
    await transport.close()
  })

  it("per-request headers of a 2025 message cannot set what the transport sets: credentials, the protocol's headers, the media types", async () => {
    const {transport, seen} = await transportAnswering(ok)
    const names = [
      'Authorization',
      'DPoP',
      'Mcp-Protocol-Version',
      'Mcp-Method',
      'Mcp-Name',
      'Mcp-Session-Id',
      'Last-Event-ID',
      'Content-Type',
      'Accept',
    ]
    await transport.send(
      {jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo'}},
      {headers: Object.fromEntries(names.map((name) => [name, 'forged']))},
    )
    const sent = seen[0]!
    expect(names.map((name) => sent.get(name))).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      'application/json',
      'application/json, text/event-stream',
    ])
    await transport.close()
  })

  it('per-request headers go as given, but those the transport sets are dropped, in any case of their names', async () => {
    const {transport, seen} = await transportAnswering(ok)
    const headers = {
      'Mcp-Param-Region': 'eu',
      'MCP-NAME': 'forged',
      'Last-Event-ID': 'forged',
      'mcp-session-id': 'forged',
      'Mcp-Protocol-Version': '1999-01-01',
    }
    await transport.send(
      {jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo', _meta: envelope}},
      {headers},
    )
    const sent = seen[0]!
    expect(
      ['mcp-param-region', 'mcp-name', 'last-event-id', 'mcp-session-id', 'mcp-protocol-version'].map((name) =>
        sent.get(name),
      ),
    ).toEqual(['eu', 'echo', null, null, '2026-07-28'])
    await transport.close()
  })

  it.each<[string, Record<string, string>, Record<string, unknown>, string]>([
    [
      'a header name that is no token',
      {'bad name': 'x'},
      {name: 'echo', _meta: envelope},
      'The request was not sent: the header name "bad name" is not an HTTP token',
    ],
    [
      'a header value that is not visible ASCII',
      {'Mcp-Param-City': 'Zürich'},
      {name: 'echo', _meta: envelope},
      'The request was not sent: the value of header Mcp-Param-City is not visible ASCII (encode it first, as the v2 Client encodes Mcp-Param-* values)',
    ],
    [
      'a header value that is no string',
      {'Mcp-Param-Count': 5 as never},
      {name: 'echo', _meta: envelope},
      'The request was not sent: the value of header Mcp-Param-Count is not visible ASCII (encode it first, as the v2 Client encodes Mcp-Param-* values)',
    ],
    [
      'a protocol version that is not visible ASCII',
      {},
      {name: 'echo', _meta: {'io.modelcontextprotocol/protocolVersion': '2026-07-28\n'}},
      'The request was not sent: the method or protocol version of this request is not visible ASCII',
    ],
  ])('%s fails the send with protocol and says why, and nothing is sent', async (_, headers, params, message) => {
    const {transport, seen} = await transportAnswering(ok)
    const error = await transport
      .send({jsonrpc: '2.0', id: 1, method: 'tools/call', params}, {headers})
      .catch((rejection: unknown) => rejection)
    expect([isTransportError(error, 'protocol'), (error as Error).message, seen]).toEqual([true, message, []])
    await transport.close()
  })
})
