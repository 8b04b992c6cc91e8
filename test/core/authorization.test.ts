/**
 * Authorization (src/wire/auth.ts, docs/design.md#eras): what the transport checks of `authProvider` and `oauthClient`,
 * what it asks of the flow on a 401 or a 403 `insufficient_scope`, how often it steps up, and what a failed flow
 * rejects with. Through `send()` with a scripted `fetch` (test/fixtures/scripted-fetch.ts); the OAuth client module
 * is test/fixtures/oauth-module.ts. Most tests were
 * written for mutants that survived (docs/mutation.md).
 */
import * as v2 from '@modelcontextprotocol/client'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {describe, expect, it, vi} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type AuthProvider,
  type OAuthClientModule,
  type OAuthFlowOptions,
  type UnauthorizedContext,
} from '../../src/index.ts'
import {HeadlessOAuthClient} from '../fixtures/oauth-client.ts'
import {grantingModule} from '../fixtures/oauth-module.ts'
import {endpoint, initialize, outcome, scripted, started, type Sent} from '../fixtures/scripted-fetch.ts'

const challenge = (status: number, header?: string): Response =>
  new Response(null, {status, headers: header === undefined ? {} : {'www-authenticate': header}})
const bearer = (sent: Sent): string => sent.headers.get('authorization') ?? 'none'
const call = (id: number): JSONRPCMessage => ({jsonrpc: '2.0', id, method: 'tools/call', params: {name: 'echo'}})
const callResult = (sent: Sent): Response =>
  Response.json({jsonrpc: '2.0', id: (JSON.parse(sent.body!) as {id: number}).id, result: {content: []}})
const idOf = (sent: Sent): number | undefined =>
  sent.body === null ? undefined : (JSON.parse(sent.body) as {id?: number}).id

/** An OAuth provider that holds `token` (with `scope`) already, or none. */
function providerWith(token?: string, scope?: string): HeadlessOAuthClient {
  const provider = new HeadlessOAuthClient()
  if (token !== undefined)
    provider.saveTokens({access_token: token, token_type: 'Bearer', ...(scope === undefined ? {} : {scope})})
  return provider
}

describe('what the transport checks of its authorization options', () => {
  it('an authProvider of null is a TypeError that says what to give', () => {
    const message =
      'options.authProvider must be an OAuthClientProvider (tokens(), clientInformation(), ... of @modelcontextprotocol/sdk/client/auth.js) or an AuthProvider (token() and optionally onUnauthorized(), as in @modelcontextprotocol/client)'
    expect(() => new ResumableHTTPClientTransport(new URL(endpoint), {authProvider: null as never})).toThrow(
      new TypeError(message),
    )
  })

  it.each([
    ['null', null],
    ['a module without extractWWWAuthenticateParams', {...v2, extractWWWAuthenticateParams: undefined}],
    ['a module without UnauthorizedError', {...v2, UnauthorizedError: undefined}],
  ])('an oauthClient that is %s is a TypeError at construction naming what the module needs', (_what, oauthClient) => {
    const message =
      "options.oauthClient must be an SDK's OAuth client module, with auth(), extractWWWAuthenticateParams() and UnauthorizedError: import * as oauthClient from '@modelcontextprotocol/client' (v2) or '@modelcontextprotocol/sdk/client/auth.js' (v1)"
    expect(
      () =>
        new ResumableHTTPClientTransport(new URL(endpoint), {
          authProvider: new HeadlessOAuthClient(),
          oauthClient: oauthClient as never,
        }),
    ).toThrow(new TypeError(message))
  })
})

describe('an AuthProvider of the v2 SDK (token, onUnauthorized)', () => {
  it.each([
    ['the fetch option', true],
    ['the global fetch, read when the flow runs', false],
  ])(
    'a 401 calls onUnauthorized with the answer, the server URL and %s, then sends the request again with the new token',
    async (_what, given) => {
      let token = 'stale'
      const contexts: UnauthorizedContext[] = []
      const authProvider: AuthProvider = {
        token: () => Promise.resolve(token),
        onUnauthorized: (context) => {
          contexts.push(context)
          token = 'fresh'
          return Promise.resolve()
        },
      }
      const {fetch, sent} = scripted((_request, index) => (index === 0 ? challenge(401) : undefined))
      if (!given) vi.stubGlobal('fetch', fetch)
      const {transport} = await started({authProvider, ...(given ? {fetch} : {})})
      await transport.send(initialize)
      expect(sent.map(bearer)).toEqual(['Bearer stale', 'Bearer fresh'])
      expect(contexts).toEqual([
        {response: expect.objectContaining({status: 401}), serverUrl: new URL(endpoint), fetchFn: fetch},
      ])
      await transport.close()
    },
  )

  it('without onUnauthorized, a 401 rejects with the SDK’s UnauthorizedError', async () => {
    const {fetch, sent} = scripted(() => challenge(401))
    const {transport} = await started({fetch, authProvider: {token: () => Promise.resolve('stale')}})
    const result = await outcome(transport.send(initialize))
    expect(result).toBeInstanceOf((await import('@modelcontextprotocol/sdk/client/auth.js')).UnauthorizedError)
    expect(sent).toHaveLength(1)
    await transport.close()
  })

  it('a 403 insufficient_scope is no step-up for it (no OAuth flow to run): the refusal is the answer', async () => {
    const unauthorized: unknown[] = []
    const authProvider: AuthProvider = {
      token: () => Promise.resolve('narrow'),
      onUnauthorized: (context) => Promise.resolve(void unauthorized.push(context)),
    }
    const {fetch, sent} = scripted(() => challenge(403, 'Bearer error="insufficient_scope", scope="mcp:write"'))
    const {transport} = await started({fetch, authProvider})
    const result = await outcome(transport.send(initialize))
    expect(isTransportError(result, 'http')).toBe(true)
    expect(result).toMatchObject({status: 403})
    expect(sent).toHaveLength(1)
    expect(unauthorized).toEqual([])
    await transport.close()
  })

  it.each([
    ['a string', 'the user said no'],
    ['null', null],
    ['a frozen Error', Object.freeze(new Error('the user said no'))],
  ])('onUnauthorized rejecting with %s rejects the request with exactly that', async (_what, reason) => {
    const authProvider: AuthProvider = {
      token: () => Promise.resolve('stale'),
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an app's flow may reject with anything
      onUnauthorized: () => Promise.reject(reason),
    }
    const {fetch} = scripted(() => challenge(401))
    const {transport} = await started({fetch, authProvider})
    expect(await outcome(transport.send(initialize))).toBe(reason)
    await transport.close()
  })

  it('an error out of the flow carries the v2 SDK’s mark (Symbol.for mcp.authSeamEscape), as the v2 Client reads it', async () => {
    const refusal = new Error('the user said no')
    const authProvider: AuthProvider = {
      token: () => Promise.resolve('stale'),
      onUnauthorized: () => Promise.reject(refusal),
    }
    const {fetch} = scripted(() => challenge(401))
    const {transport} = await started({fetch, authProvider})
    await outcome(transport.send(initialize))
    expect(Object.getOwnPropertyDescriptor(refusal, Symbol.for('mcp.authSeamEscape'))).toEqual({
      value: true,
      configurable: true,
      enumerable: false,
      writable: false,
    })
    await transport.close()
  })
})

describe('the OAuth flow an OAuthClientProvider runs', () => {
  const metadata = 'https://mcp.test/.well-known/oauth-protected-resource'

  it.each<[string, string | undefined, string | undefined, Partial<OAuthFlowOptions>]>([
    ['a 401 without a challenge, no token yet', undefined, undefined, {}],
    [
      'a 401 naming the resource metadata and a scope',
      `Bearer resource_metadata="${metadata}", scope="mcp:read"`,
      undefined,
      {scope: 'mcp:read', resourceMetadataUrl: new URL(metadata)},
    ],
    [
      'a 403 insufficient_scope without a scope, for a token of mcp:read',
      'Bearer error="insufficient_scope"',
      'mcp:read',
      {scope: 'mcp:read', forceReauthorization: false},
    ],
    [
      'a 403 insufficient_scope for mcp:write, no token yet',
      'Bearer error="insufficient_scope", scope="mcp:write"',
      undefined,
      {scope: 'mcp:write', forceReauthorization: true},
    ],
    [
      'a 403 insufficient_scope without a scope, no token yet',
      'Bearer error="insufficient_scope"',
      undefined,
      {forceReauthorization: false},
    ],
  ])('%s: the flow is asked for exactly what the challenge and the token say', async (what, header, scope, asked) => {
    const status = what.startsWith('a 401') ? 401 : 403
    const oauthClient = grantingModule([{token: 'fresh', scope: 'mcp:read mcp:write'}])
    const {fetch, sent} = scripted((_request, index) => (index === 0 ? challenge(status, header) : undefined))
    const {transport} = await started({
      fetch,
      authProvider: providerWith(scope === undefined ? undefined : 'narrow', scope),
      oauthClient,
    })
    await transport.send(initialize)
    expect(oauthClient.calls).toStrictEqual([{serverUrl: new URL(endpoint), ...asked, fetchFn: fetch}])
    expect(sent.map(bearer).at(-1)).toBe('Bearer fresh')
    await transport.close()
  })

  it('a step-up after a 401 asks for the scopes of both challenges and keeps the resource metadata of the first', async () => {
    const oauthClient = grantingModule([
      {token: 'read', scope: 'mcp:read'},
      {token: 'write', scope: 'mcp:read mcp:write'},
    ])
    const {fetch, sent} = scripted((_request, index) => {
      if (index === 0) return challenge(401, `Bearer resource_metadata="${metadata}", scope="mcp:read"`)
      if (index === 1) return challenge(403, 'Bearer error="insufficient_scope", scope="mcp:write"')
      return undefined
    })
    const {transport} = await started({fetch, authProvider: providerWith(), oauthClient})
    await transport.send(initialize)
    expect(
      oauthClient.calls.map(({scope, resourceMetadataUrl, forceReauthorization}) => ({
        scope,
        resourceMetadataUrl,
        forceReauthorization,
      })),
    ).toEqual([
      {scope: 'mcp:read', resourceMetadataUrl: new URL(metadata), forceReauthorization: undefined},
      {scope: 'mcp:read mcp:write', resourceMetadataUrl: new URL(metadata), forceReauthorization: true},
    ])
    expect(sent.map(bearer)).toEqual(['none', 'Bearer read', 'Bearer write'])
    await transport.close()
  })

  it('steps up once per request: a second 403 insufficient_scope is the answer', async () => {
    const oauthClient = grantingModule([{token: 'wider', scope: 'mcp:read mcp:write'}])
    const {fetch, sent} = scripted((_request, index) =>
      index < 3 ? challenge(403, 'Bearer error="insufficient_scope", scope="mcp:admin"') : undefined,
    )
    const {transport} = await started({fetch, authProvider: providerWith('narrow', 'mcp:read'), oauthClient})
    const result = await outcome(transport.send(initialize))
    expect(result).toMatchObject({code: 'http', status: 403})
    expect(sent.map(bearer)).toEqual(['Bearer narrow', 'Bearer wider'])
    expect(oauthClient.calls).toHaveLength(1)
    await transport.close()
  })

  it.each([
    ['a 403 of another error', 403, 'Bearer error="invalid_token"'],
    ['a 403 without a challenge', 403, undefined],
    ['a 400 that says insufficient_scope', 400, 'Bearer error="insufficient_scope", scope="mcp:write"'],
  ])('%s runs no flow: the refusal is the answer', async (_what, status, header) => {
    const oauthClient = grantingModule([{token: 'wider'}])
    const {fetch, sent} = scripted((_request, index) => (index < 2 ? challenge(status, header) : undefined))
    const {transport} = await started({fetch, authProvider: providerWith('narrow', 'mcp:read'), oauthClient})
    const result = await outcome(transport.send(initialize))
    expect(result).toMatchObject({code: 'http', status})
    expect(sent).toHaveLength(1)
    expect(oauthClient.calls).toEqual([])
    await transport.close()
  })

  it('finishAuth without an iss gives the flow no iss field', async () => {
    const oauthClient = grantingModule([{token: 'fresh'}])
    const transport = new ResumableHTTPClientTransport(new URL(endpoint), {
      authProvider: new HeadlessOAuthClient(),
      oauthClient,
    })
    await transport.finishAuth('the-code')
    expect(oauthClient.calls).toHaveLength(1)
    expect(Object.keys(oauthClient.calls[0]!).sort()).toEqual(['authorizationCode', 'fetchFn', 'serverUrl'])
  })
})

describe('requests refused together', () => {
  /**
   * Calls 1 and 2 leave with the token `old` and are refused with `refusal`; call 2's refusal is held until call 1,
   * its flow over, came back with the new token. Returns the flow's calls and the tokens each call was sent with.
   */
  async function refusedTogether(
    refusal: (id: number) => Response,
    grants: {token: string; scope?: string}[],
  ): Promise<{calls: OAuthFlowOptions[]; tokens: Record<number, string[]>}> {
    const oauthClient = grantingModule(grants)
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const tokens: Record<number, string[]> = {1: [], 2: []}
    const {fetch} = scripted(async (request) => {
      const id = idOf(request)
      if (id !== 1 && id !== 2) return undefined
      tokens[id]!.push(bearer(request))
      if (bearer(request) !== 'Bearer old') {
        if (id === 1) release()
        return callResult(request)
      }
      if (id === 2) await held
      return refusal(id)
    })
    const {transport} = await started({fetch, authProvider: providerWith('old', 'mcp:read'), oauthClient})
    await transport.send(initialize)
    await Promise.all([transport.send(call(1)), transport.send(call(2))])
    await transport.close()
    return {calls: oauthClient.calls, tokens}
  }

  it('a 401 that arrives after another request’s flow renewed the token runs no flow: the request goes again with the new token', async () => {
    const {calls, tokens} = await refusedTogether(() => challenge(401), [{token: 'new'}])
    expect(calls).toHaveLength(1)
    expect(tokens).toEqual({1: ['Bearer old', 'Bearer new'], 2: ['Bearer old', 'Bearer new']})
  })

  it('a 403 insufficient_scope still steps up after another request’s flow renewed the token: the new one may lack the scope it asks for', async () => {
    const {calls, tokens} = await refusedTogether(
      (id) => challenge(403, `Bearer error="insufficient_scope", scope="${id === 1 ? 'mcp:write' : 'mcp:admin'}"`),
      [
        {token: 'new', scope: 'mcp:read mcp:write'},
        {token: 'newer', scope: 'mcp:read mcp:write mcp:admin'},
      ],
    )
    expect(calls.map(({scope}) => scope)).toEqual(['mcp:read mcp:write', 'mcp:read mcp:write mcp:admin'])
    expect(tokens).toEqual({1: ['Bearer old', 'Bearer new'], 2: ['Bearer old', 'Bearer newer']})
  })

  it('a 401 that arrives while another request’s flow runs waits for that flow to end, though the flow saved the new token already', async () => {
    const order: string[] = []
    let flowStarted!: () => void
    const flowRunning = new Promise<void>((resolve) => (flowStarted = resolve))
    let endFlow!: () => void
    const flowHeld = new Promise<void>((resolve) => (endFlow = resolve))
    const oauthClient: OAuthClientModule = {
      ...grantingModule([]),
      auth: async (provider) => {
        await provider.saveTokens({access_token: 'new', token_type: 'Bearer'})
        flowStarted()
        await flowHeld
        order.push('flow ended')
        return 'AUTHORIZED'
      },
    }
    const {fetch} = scripted(async (request) => {
      const id = idOf(request)
      if (id !== 1 && id !== 2) return undefined
      if (bearer(request) !== 'Bearer old') {
        order.push(`call ${id} sent again`)
        return callResult(request)
      }
      if (id === 1) return challenge(401)
      await flowRunning
      // Every step of the transport up to a second send is a promise reaction: they all run before this timer.
      setTimeout(endFlow, 0)
      return challenge(401)
    })
    const {transport} = await started({fetch, authProvider: providerWith('old'), oauthClient})
    await transport.send(initialize)
    await Promise.all([transport.send(call(1)), transport.send(call(2))])
    expect(order).toEqual(['flow ended', 'call 1 sent again', 'call 2 sent again'])
    await transport.close()
  })
})
