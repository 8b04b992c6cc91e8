/**
 * Authorization over real sockets: the SDK `Client` (1.32) on this transport, against the SDK server behind the
 * SDK's `requireBearerAuth`, with an authorization server built from the SDK's `mcpAuthRouter`
 * (test/fixtures/oauth-server.ts), through a TCP proxy that cuts real sockets. The OAuth client is the SDK's own
 * `auth()`, driven by the transport's `authProvider`; the user approves at once (test/fixtures/oauth-client.ts).
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {auth, UnauthorizedError} from '@modelcontextprotocol/sdk/client/auth.js'
import {afterEach, describe, expect, it} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type AuthProvider,
  type ResumableHTTPClientTransportOptions,
} from '../../src/index.ts'
import {callTool, type Call, type Peer} from '../fixtures/interop.ts'
import {until} from '../fixtures/client.ts'
import {HeadlessOAuthClient} from '../fixtures/oauth-client.ts'
import {startOAuthStack, type OAuthStack} from '../fixtures/oauth-server.ts'
import {afterEventWith} from '../fixtures/tcp-proxy.ts'

const open: {stack: OAuthStack; client: Client}[] = []
afterEach(async () => {
  for (const {stack, client} of open.splice(0)) {
    await client.close()
    await stack.close()
  }
})

async function setUp(
  options: ResumableHTTPClientTransportOptions,
): Promise<{stack: OAuthStack; peer: Peer; transport: ResumableHTTPClientTransport}> {
  const stack = await startOAuthStack()
  const transport = new ResumableHTTPClientTransport(stack.url, {
    reconnect: {minDelayMs: 20, maxDelayMs: 100},
    ...options,
  })
  const client = new Client({name: 'auth', version: '1.0.0'})
  const peer: Peer = {
    kind: 'ours',
    client,
    transport,
    events: [],
    errors: [],
    logs: [],
    handled: {sampling: 0, elicitation: 0},
  }
  client.onerror = (error) => void peer.errors.push(error)
  open.push({stack, client})
  return {stack, peer, transport}
}

/** Connects as an app does: the first attempt sends the user to authorize, the redirect's code completes it. */
async function connectWithLogin(
  peer: Peer,
  transport: ResumableHTTPClientTransport,
  provider: HeadlessOAuthClient,
): Promise<unknown> {
  const refused = await peer.client.connect(transport).then(
    () => undefined,
    (error: unknown) => error,
  )
  await transport.finishAuth(provider.codes.at(-1)!)
  await peer.client.connect(transport)
  return refused
}

const toolsCall = {request: (chunk: string) => chunk.includes('"tools/call"'), at: afterEventWith('"progress":2')}

/**
 * Logs in, calls the `slow` tool and cuts its stream after progress 2; `meanwhile` acts on the
 * authorization server while the stream is broken (the server's retry is 100 ms: before the resume
 * GET leaves). Resolves once the call settled.
 */
async function slowCallBroken(
  meanwhile: (authorization: OAuthStack['authorization']) => void,
): Promise<{stack: OAuthStack; peer: Peer; provider: HeadlessOAuthClient; call: Call}> {
  const provider = new HeadlessOAuthClient()
  const {stack, peer, transport} = await setUp({authProvider: provider})
  await connectWithLogin(peer, transport, provider)
  const cut = stack.proxy.cutNext(toolsCall)
  const call = callTool(peer, 'slow')
  await cut
  meanwhile(stack.authorization)
  await call.settled
  return {stack, peer, provider, call}
}

describe('OAuth against the SDK server behind requireBearerAuth, real sockets', () => {
  it('connects after the user authorizes: UnauthorizedError as the SDK throws it, then finishAuth, then the token on every request', async () => {
    const provider = new HeadlessOAuthClient()
    const {stack, peer, transport} = await setUp({authProvider: provider})
    const refused = await connectWithLogin(peer, transport, provider)
    expect(refused).toBeInstanceOf(UnauthorizedError)
    await until(() => stack.requests.some((request) => request.method === 'GET' && request.status === 200))
    const call = callTool(peer, 'echo')
    await call.settled
    expect(call.text).toBe('echo')
    await transport.terminateSession()
    const token = provider.tokens()!.access_token
    const afterLogin = stack.requests.slice(1)
    // The initialize refused, then every request: initialize, initialized, the standalone GET, the call, DELETE.
    expect(stack.requests[0]).toMatchObject({method: 'POST', token: undefined, status: 401})
    expect(afterLogin.map((request) => request.method).sort()).toEqual(['DELETE', 'GET', 'POST', 'POST', 'POST'])
    expect(afterLogin.every((request) => request.token === token && request.status < 300)).toBe(true)
    expect(stack.authorization.issued).toEqual({authorizationCode: 1, refreshToken: 0})
  })

  it('refreshes a token that expired while a tool stream was broken: the resume GET is sent again with the same Last-Event-ID, and the tool ran once', async () => {
    const {stack, peer, provider, call} = await slowCallBroken((authorization) => authorization.expireAccessTokens())
    expect(call.state).toBe('result')
    expect(call.progress).toEqual([1, 2, 3, 4, 5, 6])
    expect(stack.server.executions['slow']).toBe(1)
    expect(stack.server.requests('POST', 'tools/call')).toHaveLength(1)
    const resumes = stack.requests.filter((request) => request.lastEventId !== undefined)
    const [first, second] = provider.savedTokens
    expect(resumes).toMatchObject([
      {method: 'GET', token: first!.access_token, status: 401},
      {method: 'GET', token: second!.access_token, status: 200, lastEventId: resumes[0]!.lastEventId},
    ])
    expect(stack.authorization.issued).toEqual({authorizationCode: 1, refreshToken: 1})
    expect(peer.errors).toEqual([])
  })

  it('ends a resumed stream whose authorization needs the user again: the call settles outcome-unknown, onerror hears UnauthorizedError once, no GET retried', async () => {
    const {stack, peer, call} = await slowCallBroken((authorization) => {
      authorization.expireAccessTokens()
      authorization.revokeRefreshTokens()
    })
    expect(call.failure).toBe('outcome-unknown')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(peer.errors).toHaveLength(1)
    expect(peer.errors[0]).toBeInstanceOf(UnauthorizedError)
    expect(stack.requests.filter((request) => request.lastEventId !== undefined)).toMatchObject([{status: 401}])
    expect(stack.server.executions['slow']).toBe(1)
  })

  it('refreshes once for requests refused together: the rotated refresh token is used once, and both calls succeed', async () => {
    const provider = new HeadlessOAuthClient()
    const {stack, peer, transport} = await setUp({authProvider: provider})
    await connectWithLogin(peer, transport, provider)
    stack.authorization.expireAccessTokens()
    const calls = [callTool(peer, 'echo'), callTool(peer, 'echo')]
    await Promise.all(calls.map((call) => call.settled))
    expect(calls.map((call) => call.text)).toEqual(['echo', 'echo'])
    expect(stack.authorization.issued).toEqual({authorizationCode: 1, refreshToken: 1})
    expect(stack.requests.filter((request) => request.method === 'POST' && request.status === 401)).toHaveLength(3)
  })

  it('takes the v2 minimal AuthProvider: its token on every request, and on 401 its onUnauthorized once before the request goes out again', async () => {
    const oauth = new HeadlessOAuthClient()
    let renewals = 0
    const authProvider: AuthProvider = {
      token: () => Promise.resolve(oauth.tokens()?.access_token),
      // What a v2 app writes: the SDK's auth(), completed with the code of the redirect.
      onUnauthorized: async ({serverUrl, fetchFn}) => {
        renewals++
        if ((await auth(oauth, {serverUrl, fetchFn})) === 'REDIRECT')
          await auth(oauth, {serverUrl, fetchFn, authorizationCode: oauth.codes.at(-1)!})
      },
    }
    const {stack, peer, transport} = await setUp({authProvider})
    await peer.client.connect(transport)
    expect(renewals).toBe(1)
    const initializes = stack.requests.filter((request) => request.method === 'POST').slice(0, 2)
    expect(initializes).toMatchObject([
      {token: undefined, status: 401},
      {token: oauth.tokens()!.access_token, status: 200},
    ])
  })

  it('hands over a second 401 in a row as an http error: the request went out twice, never more', async () => {
    const {stack, peer, transport} = await setUp({
      authProvider: {token: () => Promise.resolve('not-a-token'), onUnauthorized: () => Promise.resolve()},
    })
    const refused = await peer.client.connect(transport).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(isTransportError(refused, 'http') && refused.status).toBe(401)
    expect(stack.requests).toMatchObject([
      {method: 'POST', status: 401},
      {method: 'POST', status: 401},
    ])
  })
})
