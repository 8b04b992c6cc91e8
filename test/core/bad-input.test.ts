/**
 * Bad input from every side: the server (broken SSE, data that is not JSON-RPC, bad `retry`), the app's store
 * and callbacks, and the constructor's arguments. None of it may take a healthy connection down.
 */
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {StreamableHTTPClientTransportOptions} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {McpError} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type ReconnectOptions,
  type ResumableHTTPClientTransportOptions,
  type ResumptionStore,
} from '../../src/index.ts'
import {connect, eventsOf, network, until, url, useMock} from '../fixtures/harness.ts'
import {msUntil} from '../fixtures/timing.ts'
import {answerToolCalls, codeOf, failure, frame, result, sse} from '../fixtures/wire.ts'

afterEach(() => {
  vi.useRealTimers()
})

describe('bad data from the server', () => {
  it.each([
    ['non-JSON data', 'data: {not json\n\n'],
    ['JSON broken across data lines', 'data: {"jsonrpc": "2.0",\ndata: "method":\n\n'],
    ['JSON that is not JSON-RPC', 'data: {"hello": "world"}\n\n'],
    [
      'a batch with a non-JSON-RPC member',
      `data: [${JSON.stringify({jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 1}})}, 42]\n\n`,
    ],
  ])(
    'an SSE event with %s is reported to onerror as protocol; the stream goes on and the response arrives',
    async (_what, bad) => {
      useMock()
      const {client, transport, errors} = await connect()
      answerToolCalls((id) => sse([`id: e1\n${bad}`, frame('e2', result(id))]))
      const answer = await client.callTool({name: 'echo'})
      expect(answer.content).toEqual([{type: 'text', text: 'ok'}])
      expect(errors).toHaveLength(1)
      expect(isTransportError(errors[0], 'protocol')).toBe(true)
      expect(transport.metrics.streamResumptions).toBe(0)
      await client.close()
    },
  )

  it.each([
    ['JSON that is not JSON-RPC', () => HttpResponse.json({hello: 'world'})],
    ['a body that is not JSON', () => new HttpResponse('{oops', {headers: {'content-type': 'application/json'}})],
  ])(
    'a JSON answer with %s rejects the call with outcome-unknown: the server took it, it may have run',
    async (_what, reply) => {
      useMock()
      const {client} = await connect()
      answerToolCalls(reply)
      expect(codeOf(await failure(client.callTool({name: 'echo'})))).toBe('outcome-unknown')
      await client.close()
    },
  )

  it('a JSON answer without the response of its request settles the call at once with outcome-unknown', async () => {
    useMock()
    const {client} = await connect()
    answerToolCalls((id) => HttpResponse.json(result(`not-${id}`)))
    const error = await failure(client.callTool({name: 'echo'}))
    expect(error).toBeInstanceOf(McpError)
    expect(codeOf(error)).toBe('outcome-unknown')
    await client.close()
  })

  it.each(['abc', '-5', '1.5', '5s', '1e3'])(
    'a retry field %j (not all digits) is ignored: the last valid retry still rules',
    async (bad) => {
      useMock()
      const transport = new ResumableHTTPClientTransport(new URL(url))
      const messages: JSONRPCMessage[] = []
      transport.onmessage = (message) => messages.push(message)
      await transport.start()
      const params = {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}}
      await transport.send({jsonrpc: '2.0', id: 0, method: 'initialize', params})
      // One chunk, so that the stream closes as it opens: the `retry` wait counts from its close.
      answerToolCalls(() => sse([`retry: 300\nid: e1\ndata: \n\nretry: ${bad}\nid: e2\ndata: \n\n`]))
      const resumes: (string | null)[] = []
      network.use(
        http.get(url, ({request}) => {
          resumes.push(request.headers.get('last-event-id'))
          return sse([frame('e3', result(1))])
        }),
      )
      vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
      await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name: 'echo'}})

      expect(await msUntil(() => resumes.length === 1, 2000)).toBe(300)
      expect(resumes).toEqual(['e2'])
      await msUntil(() => messages.length === 2, 2000)
      expect(messages[1]).toEqual(result(1))
      await transport.close()
    },
  )
})

describe('a misbehaving app', () => {
  it.each(['throws', 'rejects'] as const)(
    'a store that %s on every call is reported once as store-error; the connection keeps working in memory',
    async (how) => {
      const broken = (operation: string): Promise<never> => {
        const error = new Error(`store ${operation} failed`)
        if (how === 'throws') throw error
        return Promise.reject(error)
      }
      const store: ResumptionStore = {
        get: () => broken('get'),
        set: () => broken('set'),
        delete: () => broken('delete'),
        list: () => broken('list'),
      }
      const mock = useMock()
      const {client, transport, events} = await connect({store})
      expect(transport).toBeInstanceOf(ResumableHTTPClientTransport)
      await until(() => mock.requests('GET').length === 1)
      mock.faults.cutNext({after: 2, how: 'error', on: 'POST'})
      const answer = await client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, {onprogress: () => {}})
      expect(answer.content).toEqual([{type: 'text', text: 'done after 3 steps'}])

      expect(transport.metrics.streamResumptions).toBe(1)
      // Once failed, the store is not called again: one report, and the transport carries on in memory.
      expect(eventsOf(events, 'store-error')).toEqual([
        {type: 'store-error', key: expect.stringMatching(/#session$/), error: new Error('store get failed')},
      ])
      await client.close()
    },
  )

  it('an onEvent listener that throws breaks nothing: the call resumes and completes, onerror stays quiet', async () => {
    const mock = useMock()
    const {client, transport, events, errors} = await connect({
      onEvent: () => {
        throw new Error('listener bug')
      },
    })
    await until(() => mock.requests('GET').length === 1)
    mock.faults.cutNext({after: 2, how: 'error', on: 'POST'})
    const answer = await client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, {onprogress: () => {}})
    expect(answer.content).toEqual([{type: 'text', text: 'done after 3 steps'}])
    expect(eventsOf(events, 'reconnect')).toHaveLength(1)
    expect(transport.metrics.streamResumptions).toBe(1)
    expect(errors).toEqual([])
    await client.close()
  })

  it('an onmessage that throws is reported through onerror, and later messages are still delivered', async () => {
    useMock()
    const transport = new ResumableHTTPClientTransport(new URL(url))
    const delivered: JSONRPCMessage[] = []
    const thrown: Error[] = []
    const reported: Error[] = []
    transport.onmessage = (message) => {
      delivered.push(message)
      const error = new Error(`app bug ${delivered.length}`)
      thrown.push(error)
      throw error
    }
    transport.onerror = (error) => reported.push(error)
    await transport.start()
    const params = {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}}
    await transport.send({jsonrpc: '2.0', id: 0, method: 'initialize', params})
    await transport.send({jsonrpc: '2.0', id: 1, method: 'tools/list'})
    await until(() => delivered.length === 2)

    expect(delivered.map((message) => ('id' in message ? message.id : undefined))).toEqual([0, 1])
    expect(reported).toEqual(thrown)
    await transport.close()
  })
})

describe('bad constructor arguments', () => {
  it('a string instead of a URL is a TypeError', () => {
    expect(() => new ResumableHTTPClientTransport('http://x' as unknown as URL)).toThrow(TypeError)
  })

  it('a fetch that is not a function is a TypeError naming options.fetch', () => {
    const fetch = 'fetch' as unknown as typeof globalThis.fetch
    expect(() => new ResumableHTTPClientTransport(new URL(url), {fetch})).toThrow(/options\.fetch/)
  })

  it.each<[string, ReconnectOptions]>([
    ['maxAttempts', {maxAttempts: 0}],
    ['maxAttempts', {maxAttempts: '3' as unknown as number}],
    ['minDelayMs', {minDelayMs: -1}],
    ['maxDelayMs', {maxDelayMs: Number.NaN}],
    ['factor', {factor: Number.POSITIVE_INFINITY}],
  ])('a bad reconnect.%s is a TypeError naming it', (name, reconnect) => {
    const create = (): unknown => new ResumableHTTPClientTransport(new URL(url), {reconnect})
    expect(create).toThrow(TypeError)
    expect(create).toThrow(`reconnect.${name}`)
  })
  it('an option this transport does not know is a TypeError naming it and the options there are', () => {
    const options = {store: undefined, reconect: {maxAttempts: 3}} as unknown as ResumableHTTPClientTransportOptions
    const create = (): unknown => new ResumableHTTPClientTransport(new URL(url), options)
    expect(create).toThrow(TypeError)
    expect(create).toThrow(/Unknown option "reconect": the options are store, .*reconnect,/)
  })

  it.each([
    ['an object with neither shape', {tokens: () => undefined}],
    ['a token that is not a function', {token: 'secret'}],
    ['an onUnauthorized that is not a function', {token: () => Promise.resolve('t'), onUnauthorized: true}],
  ])('an authProvider of neither accepted shape (%s) is a TypeError naming both', (_what, authProvider) => {
    const options = {authProvider} as unknown as ResumableHTTPClientTransportOptions
    const create = (): unknown => new ResumableHTTPClientTransport(new URL(url), options)
    expect(create).toThrow(TypeError)
    expect(create).toThrow(
      /authProvider must be an OAuthClientProvider .* or an AuthProvider \(token\(\) and optionally onUnauthorized\(\)/,
    )
  })

  it('finishAuth without an OAuthClientProvider is a TypeError', async () => {
    const minimal = new ResumableHTTPClientTransport(new URL(url), {authProvider: {token: () => Promise.resolve('t')}})
    await expect(minimal.finishAuth('code')).rejects.toThrow(/finishAuth needs an OAuthClientProvider/)
    await expect(new ResumableHTTPClientTransport(new URL(url)).finishAuth('code')).rejects.toThrow(TypeError)
  })

  it('the SDK transport options, passed through a variable of the SDK type, are accepted', () => {
    const sdkOptions: StreamableHTTPClientTransportOptions = {
      sessionId: 'session-1',
      fetch: (input, init) => fetch(input, init),
      requestInit: {headers: {'x-app': '1'}},
      redirectPolicy: 'same-origin',
      reconnectionOptions: {
        maxRetries: 3,
        initialReconnectionDelay: 10,
        maxReconnectionDelay: 50,
        reconnectionDelayGrowFactor: 2,
      },
    }
    const transport = new ResumableHTTPClientTransport(new URL(url), sdkOptions)
    expect(transport).toBeInstanceOf(ResumableHTTPClientTransport)
  })

  it('reconnect and reconnectionOptions together are a TypeError: one of the two', () => {
    const create = (): unknown =>
      new ResumableHTTPClientTransport(new URL(url), {reconnect: {}, reconnectionOptions: {}})
    expect(create).toThrow(/both given: pass one/)
  })

  it('reconnectionOptions.maxRetries 0 is a TypeError naming reconnect.maxAttempts: 1 instead', () => {
    const create = (): unknown => new ResumableHTTPClientTransport(new URL(url), {reconnectionOptions: {maxRetries: 0}})
    expect(create).toThrow(TypeError)
    expect(create).toThrow('use reconnect: {maxAttempts: 1}')
  })
  type SdkReconnection = NonNullable<ResumableHTTPClientTransportOptions['reconnectionOptions']>

  it.each<[string, SdkReconnection]>([
    ['maxRetries', {maxRetries: -1}],
    ['initialReconnectionDelay', {initialReconnectionDelay: Number.NaN}],
    ['reconnectionDelayGrowFactor', {reconnectionDelayGrowFactor: -2}],
  ])('a bad reconnectionOptions.%s is a TypeError naming the SDK field', (name, reconnectionOptions) => {
    const create = (): unknown => new ResumableHTTPClientTransport(new URL(url), {reconnectionOptions})
    expect(create).toThrow(TypeError)
    expect(create).toThrow(`reconnectionOptions.${name} must be`)
  })

  it('a reconnectionOptions field the SDK does not have is a TypeError listing the fields', () => {
    const reconnectionOptions = {maxRetry: 3} as unknown as SdkReconnection
    expect(() => new ResumableHTTPClientTransport(new URL(url), {reconnectionOptions})).toThrow(
      /Unknown field reconnectionOptions\.maxRetry: the fields are .*maxRetries/,
    )
  })
  it.each([null, 'strict', 42])('options that are not an object (%s) are a TypeError', (options) => {
    expect(
      () => new ResumableHTTPClientTransport(new URL(url), options as unknown as ResumableHTTPClientTransportOptions),
    ).toThrow('options must be an object')
  })
})

describe('a store that fails when the session is read', () => {
  it('is reported once through onerror with a store error, and once as store-error', async () => {
    const failing = (): Promise<never> => Promise.reject(new Error('store get failed'))
    const store: ResumptionStore = {get: failing, set: failing, delete: failing, list: failing}
    useMock()
    const {client, events, errors} = await connect({store})
    await client.callTool({name: 'echo'})
    expect(errors.map((error) => [isTransportError(error, 'store'), error.message])).toEqual([
      [true, 'The store failed: store get failed; going on without it'],
    ])
    expect(eventsOf(events, 'store-error')).toHaveLength(1)
    await client.close()
  })
})
