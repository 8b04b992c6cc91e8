/**
 * Secrets in messages, over real sockets: the query values of the server URL and the values of the secret
 * headers never appear in an error thrown to the caller, in `onerror`, or in a `TransportEvent`.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport, type TransportError, type TransportEvent} from '../../src/index.ts'
import {createReferenceServer, listen, type Listening} from '../../src/testing/node.ts'
import {connectTo, eventsOf, until} from '../fixtures/client.ts'
import {recordingOrigin} from './origins.ts'

const opened: Listening[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((origin) => origin.close()))
})

/** Every text an app may log: error messages (with their causes) and events, errors included. */
function texts(errors: unknown[], events: TransportEvent[]): string[] {
  const describe = (value: unknown): string =>
    value instanceof Error
      ? `${value.name}: ${value.message} ${describe(value.cause)}`
      : value === undefined
        ? ''
        : JSON.stringify(value)
  return [
    ...errors.map(describe),
    ...events.map((event) =>
      JSON.stringify(event, (_key, value: unknown) => (value instanceof Error ? describe(value) : value)),
    ),
  ]
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: unknown) => error,
  )
}

describe('secrets never appear in messages', () => {
  it('a URL with user:password@ is refused at construction with a TypeError that says to pass credentials as headers, without the password', () => {
    const construct = (): unknown =>
      new ResumableHTTPClientTransport(new URL('http://alice:pw-hunter2-secret@127.0.0.1:9/mcp'))
    expect(construct).toThrow(TypeError)
    expect(construct).toThrow(/requestInit\.headers/)
    expect(construct).not.toThrow(/pw-hunter2-secret/)
  })

  it('the query token is in no error thrown, no onerror report and no reconnect-failed event once the server is gone; the endpoint is named with the value masked', async () => {
    const server = await listen(createReferenceServer())
    const secret = 'tok-SECRET-4d2f9a'
    const {client, errors, events} = await connectTo(`${server.url}?token=${secret}&tenant=t-acme-01&bare-key-9q8w`, {
      reconnect: {maxAttempts: 2, minDelayMs: 1, maxDelayMs: 5},
    })
    await server.close()
    await until(() => errors.length > 0)
    const thrown = await failure(client.callTool({name: 'echo', arguments: {}}))

    expect(eventsOf(events, 'reconnect-failed').length).toBeGreaterThan(0)
    const logged = texts([thrown, ...errors], events)
    expect(
      logged.filter((text) => text.includes(secret) || text.includes('t-acme-01') || text.includes('bare-key-9q8w')),
    ).toEqual([])
    expect(String(thrown)).toContain('/mcp?token=[redacted]&tenant=[redacted]&[redacted] failed')
    await client.close()
  })

  it('the values of Authorization, Cookie, Proxy-Authorization and X-Api-Key, echoed by the server in its error body, are masked', async () => {
    const names = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key']
    const echo = await recordingOrigin(
      (request) => new Response(`denied: ${names.map((name) => request.headers.get(name)).join(' ')}`, {status: 401}),
    )
    opened.push(echo)
    const headers = {
      authorization: 'Bearer bearer-tok-1a2b3c',
      cookie: 'sid=cookie-val-4d5e6f',
      'proxy-authorization': 'Basic cHJveHktc2VjcmV0',
      'x-api-key': 'api-key-7g8h9i',
    }
    const error = await failure(connectTo(echo.url, {requestInit: {headers}}))

    expect(echo.received[0]!.headers).toMatchObject(headers)
    expect((error as Error).message).toContain('HTTP 401')
    for (const secret of ['bearer-tok-1a2b3c', 'cookie-val-4d5e6f', 'cHJveHktc2VjcmV0', 'api-key-7g8h9i']) {
      expect((error as Error).message).not.toContain(secret)
    }
  })

  it('a header the app names in secretHeaders is masked too: in the onerror report and the reconnect-failed events of a stream the server keeps refusing', async () => {
    const server = createReferenceServer()
    // The server refuses the standalone GET with an error that quotes the header.
    const mcp = await listen({
      handle: (request) =>
        request.method === 'GET'
          ? Promise.resolve(new Response(`bad tenant ${request.headers.get('x-tenant-token')}`, {status: 503}))
          : server.handle(request),
    })
    opened.push(mcp)
    const tenant = 'tenant-secret-0z9y8x'
    const {client, errors, events} = await connectTo(mcp.url, {
      requestInit: {headers: {'x-tenant-token': tenant}},
      secretHeaders: ['x-tenant-token'],
      reconnect: {maxAttempts: 2, minDelayMs: 1, maxDelayMs: 5},
    })
    await until(() => errors.length > 0)

    expect(eventsOf(events, 'reconnect-failed')).toHaveLength(2)
    expect(texts(errors, events).filter((text) => text.includes(tenant))).toEqual([])
    expect(errors[0]!.message).toContain('bad tenant [redacted]')
    await client.close()
  })
})

describe('secrets echoed in data that is not JSON-RPC', () => {
  it('an initialize answer that is not JSON and quotes the API key fails with the key masked, and with no cause that quotes it', async () => {
    const key = 'api-key-echoed-5k4j3h'
    const echo = await recordingOrigin(
      (request) =>
        new Response(`{"unauthorized": "${request.headers.get('x-api-key')}"`, {
          headers: {'content-type': 'application/json'},
        }),
    )
    opened.push(echo)
    const error = await failure(connectTo(echo.url, {requestInit: {headers: {'x-api-key': key}}}))

    expect(echo.received[0]!.headers['x-api-key']).toBe(key)
    expect((error as Error).message).toContain('not JSON')
    expect(texts([error], []).filter((text) => text.includes(key))).toEqual([])
  })
})

describe('what the redactor counts as a secret', () => {
  /** The body of a 401 the server answers with `body`, as the error carries it (`data.text`). */
  async function maskedBody(query: string, headers: Record<string, string>, body: string): Promise<string | undefined> {
    const echo = await recordingOrigin(() => new Response(body, {status: 401}))
    opened.push(echo)
    const error = await failure(connectTo(`${echo.url}${query}`, {requestInit: {headers}}))
    return (error as TransportError).data?.text
  }

  it.each([
    [
      'a query value, decoded and as sent',
      '?token=tok%2Fslash-9',
      {},
      'got tok/slash-9 and tok%2Fslash-9',
      'got [redacted] and [redacted]',
    ],
    [
      'the value of a header that is not secret',
      '',
      {'x-trace': 'trace-value-1'},
      'trace trace-value-1',
      'trace trace-value-1',
    ],
    [
      'an Authorization value, whole and its credential alone',
      '',
      {authorization: 'Bearer tok-abc-123'},
      'Bearer tok-abc-123 / tok-abc-123',
      '[redacted] / [redacted]',
    ],
    [
      'the value of a cookie after the first',
      '',
      {cookie: 'sid=cookie-1a; theme=cookie-2b'},
      '(cookie-2b)',
      '([redacted])',
    ],
    [
      'a credential after two spaces',
      '',
      {authorization: 'Bearer  double-space-tok'},
      '(double-space-tok)',
      '([redacted])',
    ],
    ['a part that starts with =, only whole', '', {cookie: '=plain-part cred-zz99'}, 'x=cred-zz99', 'x=cred-zz99'],
    ['a value shorter than 4 characters', '?page=1', {}, 'page 1 of 3', 'page 1 of 3'],
    ['a value of 4 characters', '?k=abcd', {}, 'k abcd', 'k [redacted]'],
    [
      'a secret that contains a shorter one, whole',
      '?k=abcd',
      {authorization: 'Bearer abcdefgh'},
      '(abcdefgh)',
      '([redacted])',
    ],
  ])('%s: the 401 body the server echoes is masked as expected', async (_what, query, headers, body, expected) => {
    expect(await maskedBody(query, headers, body)).toBe(expected)
  })

  it('a failed connection names the endpoint with no query when it has none, and each query name once with its value masked', async () => {
    const gone = await listen(createReferenceServer())
    await gone.close()
    for (const [query, shown] of [
      ['', ''],
      ['?a=1&&bare-key', '?a=[redacted]&[redacted]'],
    ]) {
      const error = await failure(connectTo(`${gone.url}${query}`, {reconnect: {maxAttempts: 1}}))
      expect((error as Error).message).toContain(`POST ${gone.url}${shown} failed:`)
    }
  })
})
