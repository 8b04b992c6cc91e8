/**
 * One HTTP exchange (src/wire/http.ts, docs/design.md#sending): the headers a request carries, the redirects the
 * transport follows itself, the bodies it drops, and what a failed fetch or a refused request says. Through
 * `send()` with the `fetch` option (or a patched global fetch) scripted by test/fixtures/scripted-fetch.ts. Most
 * tests were written for mutants that survived (docs/mutation.md).
 */
import {describe, expect, it, vi} from 'vitest'
import {isTransportError, type AuthProvider} from '../../src/index.ts'
import {until} from '../fixtures/client.ts'
import {
  answerInitialize,
  body,
  endpoint,
  initialize,
  initialized,
  initializeResult,
  outcome,
  redirect,
  released,
  scripted,
  started,
} from '../fixtures/scripted-fetch.ts'

function expectError(error: unknown, code: string, message: string): void {
  expect(isTransportError(error), String(error)).toBe(true)
  expect(error).toMatchObject({code, message})
}

describe('a redirect the transport follows itself', () => {
  const refused = (from: string, why: string): string =>
    `POST ${from} was redirected (HTTP 307) ${why}: not followed (redirectPolicy 'same-origin')`
  const elsewhere = (shown: string): string =>
    `to another origin, ${shown}; add it to allowedRedirectOrigins to follow it with the whole request`

  it.each([
    ['from http to https on the default ports of the same host', endpoint, 'https://mcp.test/mcp', undefined],
    [
      'from http to https on another https port',
      endpoint,
      'https://mcp.test:8443/mcp',
      elsewhere('https://mcp.test:8443/mcp'),
    ],
    [
      'from http on a port of its own to https',
      'http://mcp.test:8080/mcp',
      'https://mcp.test/mcp',
      elsewhere('https://mcp.test/mcp'),
    ],
    [
      'from http on port 443 to https',
      'http://mcp.test:443/mcp',
      'https://mcp.test/mcp',
      elsewhere('https://mcp.test/mcp'),
    ],
    ['from https down to http', 'https://mcp.test/mcp', 'http://mcp.test/mcp', elsewhere('http://mcp.test/mcp')],
    [
      'from an endpoint of another scheme to https',
      'ws://mcp.test/mcp',
      'https://mcp.test/mcp',
      elsewhere('https://mcp.test/mcp'),
    ],
    ['from http to another scheme on the same host', endpoint, 'ws://mcp.test/mcp', elsewhere('ws://mcp.test/mcp')],
    ['from http to https of another host', endpoint, 'https://other.test/mcp', elsewhere('https://other.test/mcp')],
    [
      'to a URL with a user name',
      endpoint,
      'http://user@mcp.test/moved?q=1',
      'to http://mcp.test/moved with credentials in the URL',
    ],
    [
      'to a URL with a password alone',
      endpoint,
      'http://:secret@mcp.test/moved',
      'to http://mcp.test/moved with credentials in the URL',
    ],
    ['to an invalid URL', endpoint, 'http://[::1/mcp', 'to an invalid URL'],
  ])('%s: %s → %s', async (_what, from, location, why) => {
    const {fetch, sent} = scripted((_sent, index) => (index === 0 ? redirect(307, location) : undefined))
    const {transport, messages} = await started({fetch}, from)
    const result = await outcome(transport.send(initialize))
    if (why === undefined) {
      expect(result).toBe('resolved')
      expect(sent.map((request) => [request.method, request.url, request.body])).toEqual([
        ['POST', from, JSON.stringify(initialize)],
        ['POST', location, JSON.stringify(initialize)],
      ])
      expect(messages).toEqual([{jsonrpc: '2.0', id: 0, result: initializeResult}])
    } else {
      expectError(result, 'http', refused(from, why))
      expect(result).toMatchObject({status: 307})
      expect(sent).toHaveLength(1)
    }
    expect(released).toEqual(['redirect 307'])
    await transport.close()
  })

  it("a browser's opaque redirect is refused, saying the target is hidden", async () => {
    const opaque = Object.defineProperties(new Response(null), {type: {value: 'opaqueredirect'}, status: {value: 0}})
    const {fetch, sent} = scripted(() => opaque)
    const {transport} = await started({fetch})
    const message = `POST ${endpoint} was redirected, and the browser hides where to: not followed (redirectPolicy 'same-origin'). Use the final URL of the endpoint`
    const result = await outcome(transport.send(initialize))
    expectError(result, 'http', message)
    expect(sent).toHaveLength(1)
    await transport.close()
  })
})

describe('what a request carries', () => {
  it('a POST accepts JSON and an event stream, the GET of the standalone stream an event stream alone', async () => {
    const {fetch, sent} = scripted()
    const {transport} = await started({fetch})
    await transport.send(initialize)
    await transport.send(initialized)
    await until(() => sent.some((request) => request.method === 'GET'))
    expect(sent.map((request) => [request.method, request.headers.get('accept')])).toEqual([
      ['POST', 'application/json, text/event-stream'],
      ['POST', 'application/json, text/event-stream'],
      ['GET', 'text/event-stream'],
    ])
    await transport.close()
  })

  it("bypasses the HTTP cache, whatever requestInit says: a browser's cache would hold a GET of the endpoint behind another open one", async () => {
    const {fetch, sent} = scripted()
    const {transport} = await started({fetch, requestInit: {cache: 'force-cache'}})
    await transport.send(initialize)
    await transport.send(initialized)
    await until(() => sent.some((request) => request.method === 'GET'))
    expect(sent.map((request) => [request.method, request.cache])).toEqual([
      ['POST', 'no-store'],
      ['POST', 'no-store'],
      ['GET', 'no-store'],
    ])
    await transport.close()
  })
})

describe('an answer the transport does not read', () => {
  it('a 401 is released once the authorization flow renewed the token, and the request goes out again with it', async () => {
    let token = 'stale'
    const authProvider: AuthProvider = {
      token: () => Promise.resolve(token),
      onUnauthorized: () => {
        token = 'fresh'
        return Promise.resolve()
      },
    }
    const {fetch, sent} = scripted((_sent, index) =>
      index === 0 ? new Response(body('401'), {status: 401}) : undefined,
    )
    const {transport} = await started({fetch, authProvider})
    await transport.send(initialize)
    expect(sent.map((request) => request.headers.get('authorization'))).toEqual(['Bearer stale', 'Bearer fresh'])
    expect(released).toEqual(['401'])
    await transport.close()
  })

  it('a 401 whose authorization flow fails is released, and the request rejects with the flow’s error', async () => {
    const refusal = new Error('the user said no')
    const authProvider: AuthProvider = {
      token: () => Promise.resolve('stale'),
      onUnauthorized: () => Promise.reject(refusal),
    }
    const {fetch, sent} = scripted(() => new Response(body('401'), {status: 401}))
    const {transport} = await started({fetch, authProvider})
    expect(await outcome(transport.send(initialize))).toBe(refusal)
    expect(sent).toHaveLength(1)
    expect(released).toEqual(['401'])
    await transport.close()
  })
})

describe('a fetch that fails', () => {
  const failed = (why: string): string => `POST ${endpoint} failed: ${why}`

  it.each([
    [
      'a network failure with its cause',
      new TypeError('fetch failed', {cause: new Error('connect ECONNREFUSED 127.0.0.1:9')}),
      'fetch failed (connect ECONNREFUSED 127.0.0.1:9)',
    ],
    ['a network failure without a cause', new TypeError('fetch failed'), 'fetch failed'],
    ['a network failure whose cause is no Error', new TypeError('fetch failed', {cause: 'reset'}), 'fetch failed'],
  ])('the fetch option failing with %s is a network error that says so', async (_what, thrown, why) => {
    const {transport} = await started({fetch: () => Promise.reject(thrown)})
    const result = await outcome(transport.send(initialize))
    expect(isTransportError(result, 'outcome-unknown'), String(result)).toBe(true)
    expectError((result as Error).cause, 'network', failed(why))
    expect(((result as Error).cause as Error).cause).toBe(thrown)
    await transport.close()
  })

  it('the fetch option throwing an error of its own (no network failure) rejects the request with that very error', async () => {
    const thrown = new Error('the app’s fetch says no')
    const {transport} = await started({fetch: () => Promise.reject(thrown)})
    expect(await outcome(transport.send(initialize))).toBe(thrown)
    await transport.close()
  })

  it.each([
    ['an Error', new Error('patched fetch broke'), 'patched fetch broke'],
    ['a string', 'patched fetch broke', 'patched fetch broke'],
  ])(
    'the global fetch failing with %s is a network error: only the app’s own fetch decides its errors',
    async (_what, thrown, why) => {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a patched fetch may reject with anything
      vi.stubGlobal('fetch', () => Promise.reject(thrown))
      const {transport} = await started({})
      const result = await outcome(transport.send(initialize))
      expectError((result as Error).cause, 'network', failed(why))
      await transport.close()
    },
  )

  it('close() while a POST is on its way rejects it as aborted, not as a network failure', async () => {
    let fetching = false
    vi.stubGlobal('fetch', (_url: URL, init: RequestInit) => {
      fetching = true
      return new Promise((_resolve, reject) =>
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as fetch does: the signal's reason
        init.signal!.addEventListener('abort', () => reject(init.signal!.reason)),
      )
    })
    const {transport} = await started({})
    const sending = outcome(transport.send(initialize))
    await until(() => fetching)
    await transport.close()
    const result = await sending
    expect(isTransportError(result, 'aborted'), String(result)).toBe(true)
  })
})

describe('an answer the transport refuses', () => {
  const failing = new ReadableStream({
    start(controller) {
      controller.error(new Error('connection reset'))
    },
  })

  it.each([
    ['no body', () => null, 'POST initialize failed with HTTP 400', ''],
    ['a short body', () => 'bad request', 'POST initialize failed with HTTP 400: "bad request"', 'bad request'],
    [
      'a body of 70 000 characters',
      () => 'x'.repeat(70_000),
      `POST initialize failed with HTTP 400: "${'x'.repeat(200)}…"`,
      'x'.repeat(65_536),
    ],
    ['a body that fails to arrive', () => failing, 'POST initialize failed with HTTP 400', ''],
  ])(
    'a 400 with %s rejects with an http error quoting the start of the body, and keeps at most 64 KiB of it',
    async (_what, make, message, kept) => {
      const {fetch} = scripted(() => new Response(make(), {status: 400}))
      const {transport} = await started({fetch})
      const result = await outcome(transport.send(initialize))
      expectError(result, 'http', message)
      expect(result).toMatchObject({status: 400, data: {status: 400, text: kept}})
      await transport.close()
    },
  )
})

describe('the content type of an answer', () => {
  it.each(['application/json; charset=utf-8', 'application/json ; charset=utf-8', 'Application/JSON'])(
    '%s is JSON: the answer is delivered',
    async (contentType) => {
      const {fetch} = scripted((sent) => (sent.method === 'POST' ? answerInitialize(contentType) : undefined))
      const {transport, messages} = await started({fetch})
      await transport.send(initialize)
      expect(messages).toEqual([{jsonrpc: '2.0', id: 0, result: initializeResult}])
      await transport.close()
    },
  )

  it.each(['text/plain', 'application/json-seq'])(
    '%s is not JSON, though the body is: the request may have run, and nothing is delivered',
    async (contentType) => {
      const {fetch} = scripted((sent) => (sent.method === 'POST' ? answerInitialize(contentType) : undefined))
      const {transport, messages} = await started({fetch})
      const result = await outcome(transport.send(initialize))
      expectError(
        result,
        'outcome-unknown',
        `initialize 0 answered 200 with content type ${JSON.stringify(contentType)}: it may have run, and was not sent again`,
      )
      expect(messages).toEqual([])
      await transport.close()
    },
  )
})
