/**
 * Sending one message (docs/design.md#sending), through `send()` without a Client against a scripted server: what
 * each refusal says and carries, how the answer to a server request is sent again, and what a call's own signal
 * does. Most tests here were written for mutants that survived (docs/mutation.md).
 */
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {getEventListeners} from 'node:events'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type FetchLike,
  type JsonRpcId,
  type JsonValue,
  type ResumableHTTPClientTransportOptions,
  type TransportEvent,
} from '../../src/index.ts'
import {connect, emptied, network, until, url, useMock} from '../fixtures/harness.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {answerToolCalls, codeOf, encoder, eventStream, failure, frame, result, sse, tap} from '../fixtures/wire.ts'

interface Posted {
  method?: string
  id?: JsonRpcId
}

/** What the scripted server answers a POST; undefined: the default (initialize with session `s1`, 202, a JSON result). */
type Reply = (body: Posted, index: number) => Response | Promise<Response> | undefined

/** A server at {@link url}: every POST body is recorded; GETs are not offered (405). */
function scripted(reply: Reply = () => undefined): Posted[] {
  const posts: Posted[] = []
  network.use(
    http.get(url, () => new HttpResponse(null, {status: 405})),
    http.post(url, async ({request}) => {
      const body = (await request.json()) as Posted
      posts.push(body)
      const custom = await reply(body, posts.length - 1)
      if (custom !== undefined) return custom
      if (body.method === 'initialize') {
        const answer = {
          protocolVersion: '2025-11-25',
          capabilities: {},
          serverInfo: {name: 'scripted', version: '1.0.0'},
        }
        return HttpResponse.json({jsonrpc: '2.0', id: body.id, result: answer}, {headers: {'mcp-session-id': 's1'}})
      }
      if (body.method === undefined || body.id === undefined) return new HttpResponse(null, {status: 202})
      return HttpResponse.json(result(body.id))
    }),
  )
  return posts
}

/** A started transport, initialized with session `s1` (no notifications/initialized: no standalone GET). */
async function initialized(options: ResumableHTTPClientTransportOptions = {}) {
  const events: TransportEvent[] = []
  const messages: JSONRPCMessage[] = []
  const errors: Error[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    reconnect: {minDelayMs: 1, maxDelayMs: 5},
    ...options,
    onEvent: (event) => events.push(event),
  })
  transport.onmessage = (message) => messages.push(message)
  transport.onerror = (error) => errors.push(error)
  await transport.start()
  const params = {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}}
  await transport.send({jsonrpc: '2.0', id: 0, method: 'initialize', params})
  return {transport, events, messages, errors}
}

const call = (id: JsonRpcId, name = 'echo'): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: {name},
})
const rootsChanged: JSONRPCMessage = {jsonrpc: '2.0', method: 'notifications/roots/list_changed'}
const answer = (id: JsonRpcId): JSONRPCMessage => ({jsonrpc: '2.0', id, result: {}})
const elicitation = {
  jsonrpc: '2.0',
  id: 'srv-1',
  method: 'elicitation/create',
  params: {message: 'sure?', requestedSchema: {type: 'object', properties: {}}},
}

/** The keys of the calls journaled in `store`. */
const journaled = (store: MemoryStore): Promise<string[]> => store.list(`mcp-resumable-http:${url}#call:`)

/** Whether `error` is a TransportError of `code` with exactly `message`, and `status` when given. */
function expectError(error: unknown, code: string, message: string, status?: number): void {
  expect(isTransportError(error), String(error)).toBe(true)
  expect(error).toMatchObject({code, message, ...(status === undefined ? {} : {status})})
}

describe('what a message that is not sent says', () => {
  it.each([
    [
      'a resumption token',
      call(1),
      {resumptionToken: 'e1'},
      'protocol',
      'resumptionToken is not supported: this transport resumes streams itself',
    ],
    [
      'a request whose signal was aborted',
      call(1),
      {requestSignal: AbortSignal.abort()},
      'aborted',
      'tools/call was cancelled before it was sent',
    ],
    [
      'an answer whose signal was aborted',
      answer('srv-1'),
      {requestSignal: AbortSignal.abort()},
      'aborted',
      'The request was cancelled before it was sent',
    ],
  ] as const)(
    '%s: send rejects with an error of the code that says why, and nothing is posted',
    async (_, message, options, code, text) => {
      const posts = scripted()
      const {transport} = await initialized()
      expectError(await failure(transport.send(message, options)), code, text)
      expect(posts.map((post) => post.method)).toEqual(['initialize'])
      await transport.close()
    },
  )

  it.each([
    ['a request', call(1), 'tools/call'],
    ['a notification', rootsChanged, 'notifications/roots/list_changed'],
    ['an answer', answer('srv-1'), 'the message'],
  ])(
    '%s answered 404 in the session says the session expired and names what was not sent again; a later request is not sent',
    async (_, message, named) => {
      const posts = scripted((body) =>
        body.method === 'initialize' ? undefined : new HttpResponse(null, {status: 404}),
      )
      const {transport} = await initialized()
      expectError(
        await failure(transport.send(message)),
        'session-expired',
        `Session s1 has expired (HTTP 404); ${named} was not sent again`,
        404,
      )
      expectError(
        await failure(transport.send(call(2))),
        'session-expired',
        'Session s1 has expired; tools/call was not sent: initialize a new session',
      )
      expect(posts).toHaveLength(2)
      await transport.close()
    },
  )

  it.each([
    ['a request', call(1), 'POST tools/call'],
    ['a notification', rootsChanged, 'POST notifications/roots/list_changed'],
    ['an answer', answer('srv-1'), 'POST response'],
  ])(
    '%s refused 400 rejects with an http error naming the POST, the status and the body',
    async (_, message, named) => {
      scripted((body) => (body.method === 'initialize' ? undefined : new HttpResponse('bad', {status: 400})))
      const {transport} = await initialized()
      expectError(await failure(transport.send(message)), 'http', `${named} failed with HTTP 400: "bad"`, 400)
      await transport.close()
    },
  )

  it('a refused DELETE rejects terminateSession with an http error naming it, once the session is forgotten here', async () => {
    scripted()
    network.use(http.delete(url, () => new HttpResponse(null, {status: 403})))
    const {transport} = await initialized()
    const message =
      'DELETE failed with HTTP 403; the session was forgotten here all the same, and the server may keep it until it expires it'
    expectError(await failure(transport.terminateSession()), 'http', message, 403)
    expect(transport.sessionId).toBeUndefined()
    await transport.close()
  })
})

/**
 * A fetch that hands over the answer to a `tools/call` without a body (`body` null), as a fetch of the app's own may:
 * undici, which msw 3 answers through, gives every 200 a body, if an empty one.
 */
const bodiless: FetchLike = async (input, init) => {
  const response = await fetch(input, init)
  if (typeof init?.body !== 'string' || !init.body.includes('"tools/call"')) return response
  await response.body?.cancel()
  return new Response(null, {status: response.status, headers: response.headers})
}

describe('what a request that may have run says', () => {
  it.each<[string, () => Response, string, number, ResumableHTTPClientTransportOptions?]>([
    [
      'answered 200 without a body or content type',
      () => new HttpResponse(null, {status: 200}),
      'tools/call 7 answered 200 with no content type: it may have run, and was not sent again',
      200,
    ],
    [
      'answered 200 in HTML',
      () => new HttpResponse('<p>hi</p>', {headers: {'content-type': 'text/html'}}),
      'tools/call 7 answered 200 with content type "text/html": it may have run, and was not sent again',
      200,
    ],
    [
      'failed with 502',
      () => new HttpResponse('down', {status: 502}),
      'tools/call 7 failed with HTTP 502: it may have run, and was not sent again',
      502,
    ],
    ...['application/json', 'text/event-stream'].map(
      (type): [string, () => Response, string, number, ResumableHTTPClientTransportOptions] => [
        `answered 200 in ${type} without a body`,
        () => new HttpResponse(null, {headers: {'content-type': type}}),
        `tools/call 7 answered 200 with content type "${type}": it may have run, and was not sent again`,
        200,
        {fetch: bodiless},
      ],
    ),
  ])(
    '%s: rejects outcome-unknown naming the call as the Client sent it, with the status',
    async (_, reply, text, status, options) => {
      const posts = scripted((body) => (body.method === 'tools/call' ? reply() : undefined))
      const {transport} = await initialized(options)
      expectError(await failure(transport.send(call(7))), 'outcome-unknown', text, status)
      expect(posts.filter((post) => post.method === 'tools/call')).toHaveLength(1)
      await transport.close()
    },
  )

  it('a JSON answer that is not JSON rejects outcome-unknown with the protocol error as its cause', async () => {
    scripted((body) =>
      body.method === 'tools/call' ? new HttpResponse('{', {headers: {'content-type': 'application/json'}}) : undefined,
    )
    const {transport} = await initialized()
    const error = await failure(transport.send(call(7)))
    expectError(
      error,
      'outcome-unknown',
      'The answer to tools/call 7 could not be read: The server sent data that is not JSON: "{"',
    )
    expectError((error as Error).cause, 'protocol', 'The server sent data that is not JSON: "{"')
    await transport.close()
  })

  it('a JSON answer without the response settles the call with a JSON-RPC error -32000 carrying the code, after what it did carry', async () => {
    const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'hi'}}
    scripted((body) => (body.method === 'tools/call' ? HttpResponse.json(note) : undefined))
    const {transport, messages} = await initialized()
    await transport.send(call(7))
    expect(messages.slice(1)).toStrictEqual([
      note,
      {
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: -32000,
          message: 'The JSON answer to tools/call 7 did not contain its response',
          data: {code: 'outcome-unknown'},
        },
      },
    ])
    await transport.close()
  })
})

describe('the answer to a server request', () => {
  /** A call whose stream brings the server's elicitation `srv-1` and stays open; answer POSTs get `replies` in turn, then 202. */
  async function asked(replies: (number | 'error')[], store?: MemoryStore) {
    const answers: Posted[] = []
    let push: (text: string) => void = () => {}
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => controller.enqueue(encoder.encode(text))
      },
    })
    push(frame('e1', elicitation))
    scripted((body) => {
      if (body.method === 'tools/call') return new Response(stream, {headers: {'content-type': 'text/event-stream'}})
      if (body.method !== undefined) return undefined
      answers.push(body)
      const reply = replies[answers.length - 1] ?? 202
      return reply === 'error' ? HttpResponse.error() : new HttpResponse(reply === 202 ? null : 'busy', {status: reply})
    })
    const harness = await initialized(store === undefined ? {} : {store})
    await harness.transport.send(call(1))
    await until(() => harness.messages.some((message) => 'id' in message && message.id === 'srv-1'))
    return {...harness, answers, push}
  }

  it.each([
    ['answered 503, then accepted, is sent again and resolves', [503], 2],
    ['that met a network failure, then accepted, is sent again and resolves', ['error'], 2],
    ['answered 429 twice, then accepted, is sent a third time', [429, 429], 3],
  ] as const)('an answer %s; then its stored record is marked taken', async (_, replies, posts) => {
    const store = new MemoryStore()
    const key = `mcp-resumable-http:${url}#request:"srv-1"`
    const {transport, answers} = await asked([...replies], store)
    expect(await store.get(key)).toMatchObject({message: {method: 'elicitation/create'}})
    await transport.send(answer('srv-1'))
    expect(answers).toHaveLength(posts)
    await until(() => answers.length === posts)
    await expect.poll(() => store.get(key)).toMatchObject({message: {id: 'srv-1', result: {}}, taken: true})
    await transport.close()
  })

  it('an answer refused 400 is sent once and rejects with the refusal; the server asking again gets it again', async () => {
    const {transport, answers, push, events} = await asked([400])
    expectError(
      await failure(transport.send(answer('srv-1'))),
      'http',
      'POST response failed with HTTP 400: "busy"',
      400,
    )
    expect(answers).toHaveLength(1)
    push(frame('e2', elicitation))
    await until(() => answers.length === 2)
    expect(events.filter((event) => event.type === 'cached-answer-resent')).toEqual([
      {type: 'cached-answer-resent', requestId: 'srv-1'},
    ])
    await transport.close()
  })
})

describe("a request's own signal", () => {
  it('aborted while its POST is on its way: send rejects aborted naming the request, nothing is sent again, onRequestStreamEnd is not called and its journal record goes', async () => {
    let arrived = false
    const posts = scripted((body) => {
      if (body.method !== 'tools/call') return undefined
      arrived = true
      return new Promise<Response>(() => {})
    })
    const store = new MemoryStore()
    const {transport} = await initialized({store, callJournal: true})
    const controller = new AbortController()
    const ends: string[] = []
    const sent = failure(
      transport.send(call(3), {requestSignal: controller.signal, onRequestStreamEnd: () => ends.push('end')}),
    )
    await until(() => arrived)
    controller.abort()
    expectError(await sent, 'aborted', 'tools/call was cancelled')
    expect(ends).toEqual([])
    expect(posts.filter((post) => post.method === 'tools/call')).toHaveLength(1)
    await transport.close()
    expect(await journaled(store)).toEqual([])
  })

  it('aborted while its stream is followed: the stream ends, nothing reaches onmessage or onerror, and its journal record goes', async () => {
    const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}}
    scripted((body) => (body.method === 'tools/call' ? sse([frame('e1', note)], 'open') : undefined))
    const store = new MemoryStore()
    const {transport, messages, errors} = await initialized({store, callJournal: true})
    const controller = new AbortController()
    await transport.send(call(3), {requestSignal: controller.signal})
    await until(() => messages.length === 2)
    expect(await journaled(store)).toHaveLength(1)
    controller.abort()
    expect(await emptied(() => journaled(store))).toEqual([])
    expect(messages).toHaveLength(2)
    expect(errors).toEqual([])
    await transport.close()
  })

  it.each([
    ['failed with 502', () => new HttpResponse(null, {status: 502})],
    ['refused 400', () => new HttpResponse(null, {status: 400})],
    ['answered 404: the session expired', () => new HttpResponse(null, {status: 404})],
  ])('never aborted, its POST %s: send rejects and onRequestStreamEnd is called once', async (_, reply) => {
    scripted((body) => (body.method === 'tools/call' ? reply() : undefined))
    const {transport} = await initialized()
    const ends: string[] = []
    await failure(
      transport.send(call(3), {
        requestSignal: new AbortController().signal,
        onRequestStreamEnd: () => ends.push('end'),
      }),
    )
    expect(ends).toEqual(['end'])
    await transport.close()
  })

  it('never aborted: onRequestStreamEnd is called once its stream ends', async () => {
    scripted()
    const {transport, messages} = await initialized()
    const ends: string[] = []
    await transport.send(call(3), {
      requestSignal: new AbortController().signal,
      onRequestStreamEnd: () => ends.push('end'),
    })
    expect(messages.at(-1)).toMatchObject({id: 3, result: {}})
    expect(ends).toEqual(['end'])
    await transport.close()
  })
})

describe('a call waiting on its stream when the session ends', () => {
  const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}}

  it.each([
    ['a new initialize', {code: -32000, message: 'A new session was initialized', data: {code: 'aborted'}}],
    [
      'a 404 to another request',
      {
        code: -32000,
        message: 'Session s1 has expired (HTTP 404); tools/call was not sent again',
        data: {code: 'session-expired', status: 404},
      },
    ],
  ])('%s settles it with a JSON-RPC error saying why, its code and status in data', async (ending, error) => {
    scripted((body, index) => {
      if (body.method === 'tools/call')
        return body.id === 1 ? sse([frame('e1', note)], 'open') : new HttpResponse(null, {status: 404})
      if (body.method === 'initialize' && index > 0)
        return HttpResponse.json({
          jsonrpc: '2.0',
          id: body.id,
          result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: 's', version: '1'}},
        })
      return undefined
    })
    const {transport, messages} = await initialized()
    await transport.send(call(1))
    await until(() => messages.length === 2)
    if (ending === 'a new initialize')
      await transport.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'initialize',
        params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test', version: '1.0.0'}},
      })
    else await failure(transport.send(call(2)))
    expect(messages.filter((message) => 'id' in message && message.id === 1)).toStrictEqual([
      {jsonrpc: '2.0', id: 1, error},
    ])
    await transport.close()
  })
})

describe('a cancellation', () => {
  /** A store whose writes of a journaled call's `input_required` round wait for `open()`. */
  class GatedStore extends MemoryStore {
    held = 0
    open = (): void => {}
    #gate = new Promise<void>((resolve) => {
      this.open = resolve
    })
    override async set(key: string, value: JsonValue): Promise<void> {
      if (key.includes('#call:') && (value as {state?: unknown}).state === 'input-required') {
        this.held++
        await this.#gate
      }
      return super.set(key, value)
    }
  }

  it('of a call whose JSON answer came but is not delivered yet is posted naming its wire ID; the answer then reaches no one', async () => {
    // An input_required round is stored before the Client sees it: the cancellation comes while that write is held.
    const posts = scripted((body) =>
      body.method === 'tools/call'
        ? HttpResponse.json({jsonrpc: '2.0', id: body.id, result: {resultType: 'input_required', requestState: 'rs'}})
        : undefined,
    )
    const store = new GatedStore()
    const {transport, messages, events} = await initialized({store, callJournal: true})
    const sent = transport.send(call(3))
    await until(() => store.held === 1)
    await transport.send({jsonrpc: '2.0', method: 'notifications/cancelled', params: {requestId: 3}})
    store.open()
    await sent
    const cancelled = posts.find((post) => post.method === 'notifications/cancelled') as {
      params?: {requestId?: unknown}
    }
    expect(cancelled.params?.requestId).toBe(posts.find((post) => post.method === 'tools/call')?.id)
    expect(messages.filter((message) => 'id' in message && message.id === 3)).toEqual([])
    expect(events.filter((event) => event.type === 'unmatched-response')).toHaveLength(1)
    await transport.close()
  })
})

describe('what is stored of a call whose stream is open', () => {
  it.each([
    ['a tool call, by its tool', call(4, 'slow'), {method: 'tools/call', name: 'slow', clientId: 4}],
    [
      'a resource read, by its URI',
      {jsonrpc: '2.0', id: 4, method: 'resources/read', params: {uri: 'file:///a.txt'}},
      {method: 'resources/read', name: 'file:///a.txt', clientId: 4},
    ],
    ['a request without a name', {jsonrpc: '2.0', id: 4, method: 'ping'}, {method: 'ping', clientId: 4}],
  ] as const)('%s: a next process can say whose answer the stream brings', async (_name, message, stored) => {
    const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}}
    scripted((body) =>
      body.method !== 'initialize' && body.id !== undefined ? sse([frame('e1', note)], 'open') : undefined,
    )
    const store = new MemoryStore()
    const {transport, messages} = await initialized({store})
    await transport.send(message)
    await until(() => messages.length === 2)
    await transport.close()
    const [key] = await store.list(`mcp-resumable-http:${url}#stream:request:`)
    expect((await store.get(key!)) as {call?: unknown}).toMatchObject({lastEventId: 'e1'})
    expect(((await store.get(key!)) as {call?: unknown}).call).toStrictEqual(stored)
  })
})

describe('what the server sends that is no message', () => {
  const long = (n: number): string => 'x'.repeat(n)
  it.each([
    ['null', 'null', 'The server sent JSON that is not a JSON-RPC 2.0 message: "null"'],
    ['a number', '5', 'The server sent JSON that is not a JSON-RPC 2.0 message: "5"'],
    [
      'another JSON-RPC version',
      '{"jsonrpc":"1.0"}',
      'The server sent JSON that is not a JSON-RPC 2.0 message: "{\\"jsonrpc\\":\\"1.0\\"}"',
    ],
    [
      'a batch with a string in it',
      '[{"jsonrpc":"2.0","method":"notifications/message"},"x"]',
      'The server sent JSON that is not a JSON-RPC 2.0 message: "[{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"notifications/message\\"},\\"x\\"]"',
    ],
    ['200 characters that are not JSON', long(200), `The server sent data that is not JSON: "${long(200)}"`],
    ['201 characters that are not JSON', long(201), `The server sent data that is not JSON: "${long(200)}…"`],
  ])('a JSON answer of %s rejects outcome-unknown quoting it, at most 200 characters of it', async (_, text, why) => {
    scripted((body) =>
      body.method === 'tools/call'
        ? new HttpResponse(text, {headers: {'content-type': 'application/json'}})
        : undefined,
    )
    const {transport, messages} = await initialized()
    expectError(
      await failure(transport.send(call(7))),
      'outcome-unknown',
      `The answer to tools/call 7 could not be read: ${why}`,
    )
    expect(messages).toHaveLength(1)
    await transport.close()
  })

  it('a message with a method and a result is a request, not the answer of the call whose ID it carries', async () => {
    scripted((body) =>
      body.method === 'tools/call'
        ? sse([frame('e1', {jsonrpc: '2.0', id: body.id, method: 'ping', result: {}}), frame('e2', result(body.id!))])
        : undefined,
    )
    const {transport, messages} = await initialized()
    await transport.send(call(3))
    await until(() => messages.some((message) => 'id' in message && message.id === 3))
    expect(messages.filter((message) => 'id' in message && message.id === 3)).toEqual([result(3)])
    expect(messages.filter((message) => 'method' in message && message.method === 'ping')).toHaveLength(1)
    await transport.close()
  })

  it('a notifications/cancelled without params is posted as it is', async () => {
    const posts = scripted()
    const {transport} = await initialized()
    await transport.send({jsonrpc: '2.0', method: 'notifications/cancelled'})
    expect(posts.at(-1)).toEqual({jsonrpc: '2.0', method: 'notifications/cancelled'})
    await transport.close()
  })
})

describe('a call whose POST never connected', () => {
  it('rejects not-sent and leaves the standalone stream its cursor: the server has no request of it to send again', async () => {
    const mock = useMock()
    const gets: (string | undefined)[] = []
    let cut = (): void => {}
    network.use(
      http.get(url, ({request}) => {
        gets.push(request.headers.get('last-event-id') ?? undefined)
        if (gets.length > 1) return sse([], 'open')
        // The first GET's stream brings g1, then breaks when the test says.
        const {readable, writable} = new TransformStream<Uint8Array, Uint8Array>()
        const writer = writable.getWriter()
        void writer.write(encoder.encode(frame('g1', {jsonrpc: '2.0', method: 'notifications/tools/list_changed'})))
        cut = () => void writer.abort(new TypeError('terminated'))
        return new Response(readable, {headers: {'content-type': 'text/event-stream'}})
      }),
    )
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {code: 'ECONNREFUSED'})
    const fetch = async (target: string | URL, init?: RequestInit): Promise<Response> =>
      typeof init?.body === 'string' && init.body.includes('"tools/call"')
        ? Promise.reject(new TypeError('fetch failed', {cause: refused}))
        : globalThis.fetch(target, init)
    const {client, transport} = await connect({fetch, reconnect: {minDelayMs: 1, maxDelayMs: 2}})
    const seen = tap(transport)
    await until(() => seen.length === 1)
    const failed = await client.callTool({name: 'echo'}).catch((error: unknown) => error)
    expect(codeOf(failed)).toBe('not-sent')
    cut()
    await until(() => gets.length === 2)
    expect(gets).toEqual([undefined, 'g1'])
    expect(mock.requests('POST', 'tools/call')).toEqual([])
    await client.close()
  })
})

describe('a 2026-07-28 request in a 2025 session', () => {
  const envelope = {'io.modelcontextprotocol/protocolVersion': '2026-07-28'}

  it('goes without the session ID, and a 400 carrying its JSON-RPC error is its answer: onRequestStreamEnd is called once', async () => {
    scripted((body) =>
      body.method === 'server/discover'
        ? HttpResponse.json(
            {jsonrpc: '2.0', id: body.id, error: {code: -32020, message: 'header mismatch'}},
            {status: 400},
          )
        : undefined,
    )
    const sessions: (string | null)[] = []
    network.use(
      http.post(url, ({request}) => {
        sessions.push(request.headers.get('mcp-session-id'))
        return undefined
      }),
    )
    const {transport, messages} = await initialized()
    const ends: string[] = []
    await transport.send(
      {jsonrpc: '2.0', id: 'probe-1', method: 'server/discover', params: {_meta: envelope}},
      {onRequestStreamEnd: () => ends.push('end')},
    )
    await transport.send(call(2))
    expect(sessions).toEqual([null, null, 's1'])
    expect(messages.slice(1)).toEqual([
      {jsonrpc: '2.0', id: 'probe-1', error: {code: -32020, message: 'header mismatch'}},
      result(2),
    ])
    expect(ends).toEqual(['end'])
    await transport.close()
  })
})

describe('messages about requests the transport does not know', () => {
  it.each([
    [
      'a cancellation of a request not pending goes as the app wrote it',
      {jsonrpc: '2.0', method: 'notifications/cancelled', params: {requestId: 999, reason: 'late'}},
    ],
    [
      'an answer to a server request never received goes as the app wrote it, and nothing of it is stored',
      {jsonrpc: '2.0', id: 'never-asked', result: {}},
    ],
  ] as const)('%s', async (_what, message) => {
    useMock()
    const posted: unknown[] = []
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {method?: string}
        if (body.method === 'initialize' || body.method === 'notifications/initialized') return undefined
        posted.push(body)
        return new HttpResponse(null, {status: 202})
      }),
    )
    const store = new RecordingStore()
    const {client, transport} = await connect({store})
    const from = store.writes.length
    await transport.send(message)
    await until(() => posted.length === 1)
    expect(posted).toEqual([message])
    expect(store.writes.slice(from).filter((write) => write.key.includes('#request:'))).toEqual([])
    await client.close()
  })
})

describe('a request whose send rejected', () => {
  it('is no longer pending: a cancellation the app sends for it afterwards goes as the app wrote it, naming no wire ID', async () => {
    useMock()
    const posted: {method?: string; id?: unknown; params?: unknown}[] = []
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {method?: string}
        if (body.method === 'initialize' || body.method === 'notifications/initialized') return undefined
        posted.push(body)
        // The request's POST fails: its send rejects.
        return body.method === 'tools/call' ? HttpResponse.error() : new HttpResponse(null, {status: 202})
      }),
    )
    const {client, transport} = await connect()
    await expect(
      transport.send({jsonrpc: '2.0', id: 'app-7', method: 'tools/call', params: {name: 'echo'}}),
    ).rejects.toThrow()
    const cancellation = {
      jsonrpc: '2.0' as const,
      method: 'notifications/cancelled',
      params: {requestId: 'app-7', reason: 'gave up'},
    }
    await transport.send(cancellation)
    await until(() => posted.length === 2)
    expect(posted[0]!.id).not.toBe('app-7')
    expect(posted[1]).toEqual(cancellation)
    await client.close()
  })
})

describe("the Client's signal of one request, which a requestInit.signal is refused for", () => {
  it("ends that request as the Client's timeout does: notifications/cancelled naming its wire ID, its POST closed, the call rejected at once", async () => {
    useMock()
    let closed = false
    const calls = answerToolCalls(() => {
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(encoder.encode(frame('p1'))),
        cancel: () => {
          closed = true
        },
      })
      return new Response(body, {headers: eventStream})
    })
    const cancellations: unknown[] = []
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {method?: string; params?: unknown}
        if (body.method === 'notifications/cancelled') cancellations.push(body.params)
        return undefined
      }),
    )
    const {client, transport} = await connect()
    const controller = new AbortController()
    const call = failure(client.callTool({name: 'echo'}, undefined, {signal: controller.signal}))
    await until(() => calls.length === 1)
    controller.abort('the user stopped it')

    // [SDK interop] the Client rejects with RequestTimeout (-32001) and the abort's reason, as its own timeout does.
    expect(await call).toMatchObject({code: -32001, message: 'MCP error -32001: the user stopped it'})
    await until(() => cancellations.length === 1 && closed)
    expect(cancellations).toEqual([{requestId: calls[0]!.id, reason: 'the user stopped it'}])
    expect(transport.pendingRequests).toBe(0)
    await client.close()
  })
})

describe("a request's own signal, once its stream is over", () => {
  it('holds no listener of the transport: an app that reuses one signal for many requests does not gather one per request', async () => {
    scripted((body) => (body.method === 'tools/call' ? sse([frame('e1', result(body.id as JsonRpcId))]) : undefined))
    const {transport, messages} = await initialized()
    const controller = new AbortController()
    for (let n = 0; n < 3; n++) await transport.send(call(3 + n), {requestSignal: controller.signal})
    await until(() => messages.length === 4)
    expect(getEventListeners(controller.signal, 'abort')).toEqual([])
    await transport.close()
  })
})
