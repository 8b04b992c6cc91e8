/**
 * `oauthClient`: the OAuth client module the transport runs for its `authProvider` (docs/design.md#eras). The
 * module given here (test/fixtures/oauth-module.ts) records what the transport asks of it and saves the tokens a
 * real flow would.
 */
import * as v2 from '@modelcontextprotocol/client'
import type {OAuthClientProvider} from '@modelcontextprotocol/client'
import * as v1 from '@modelcontextprotocol/sdk/client/auth.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {
  ResumableHTTPClientTransport,
  type OAuthClientModule,
  type ResumableHTTPClientTransportOptions,
} from '../../src/index.ts'
import {connect, network, url, useMock} from '../fixtures/harness.ts'
import {HeadlessOAuthClient} from '../fixtures/oauth-client.ts'
import {grantingModule} from '../fixtures/oauth-module.ts'

/** The server lets through requests bearing `token`, and answers any other with `refusal`. */
function gate(token: string, refusal: () => Response): string[] {
  const seen: string[] = []
  network.use(
    http.all(url, ({request}) => {
      const authorization = request.headers.get('authorization') ?? 'none'
      seen.push(authorization)
      return authorization === `Bearer ${token}` ? undefined : refusal()
    }),
  )
  return seen
}

const challenge = (status: number, header: string): Response =>
  new HttpResponse(null, {status, headers: {'www-authenticate': header}})

describe('oauthClient: the OAuth client the transport runs', () => {
  it('a 401 runs the auth() of the module given, and the request goes out again with the token it saved', async () => {
    useMock()
    const seen = gate('fresh', () => challenge(401, 'Bearer scope="mcp:tools"'))
    const oauthClient = grantingModule([{token: 'fresh'}])
    const {client} = await connect({authProvider: new HeadlessOAuthClient(), oauthClient})
    expect(oauthClient.calls).toEqual([expect.objectContaining({serverUrl: new URL(url), scope: 'mcp:tools'})])
    expect(seen.slice(0, 2)).toEqual(['none', 'Bearer fresh'])
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    await client.close()
  })

  it.each([
    [
      'a scope the token lacks: a new authorization, a refresh could not widen it',
      'mcp:write',
      'mcp:read mcp:write',
      true,
    ],
    ['a scope the token has: the flow may refresh', 'mcp:read', 'mcp:read', false],
  ])(
    'a 403 insufficient_scope asks the flow for the scope of the token with the challenged one; %s',
    async (_what, challenged, union, forced) => {
      useMock()
      const authProvider = new HeadlessOAuthClient()
      authProvider.saveTokens({
        access_token: 'narrow',
        token_type: 'Bearer',
        scope: 'mcp:read',
        refresh_token: 'refresh',
      })
      const seen = gate('wide', () => challenge(403, `Bearer error="insufficient_scope", scope="${challenged}"`))
      const oauthClient = grantingModule([{token: 'wide', scope: union}])
      const {client} = await connect({authProvider, oauthClient})
      expect(oauthClient.calls).toEqual([expect.objectContaining({scope: union, forceReauthorization: forced})])
      expect(seen.slice(0, 2)).toEqual(['Bearer narrow', 'Bearer wide'])
      await client.close()
    },
  )

  it("finishAuth gives the flow the redirect's code and its iss (RFC 9207)", async () => {
    const oauthClient = grantingModule([{token: 'fresh'}])
    const transport = new ResumableHTTPClientTransport(new URL(url), {
      authProvider: new HeadlessOAuthClient(),
      oauthClient,
    })
    await transport.finishAuth('the-code', 'https://as.example')
    await transport.finishAuth('another-code')
    expect(oauthClient.calls).toEqual([
      expect.objectContaining({authorizationCode: 'the-code', iss: 'https://as.example'}),
      expect.not.objectContaining({iss: expect.anything()}),
    ])
  })

  it("a login the user must complete rejects the connect with the given module's UnauthorizedError", async () => {
    useMock()
    gate('never', () => challenge(401, 'Bearer'))
    const oauthClient = grantingModule([{token: 'unused'}], 'REDIRECT')
    const failed = await connect({authProvider: new HeadlessOAuthClient(), oauthClient}).catch(
      (error: unknown) => error,
    )
    expect(failed).toBeInstanceOf(v2.UnauthorizedError)
    expect(oauthClient.calls).toHaveLength(1)
  })

  it('both SDK majors fit as modules, and the v2 OAuthClientProvider as authProvider', () => {
    const v2Provider: OAuthClientProvider = new HeadlessOAuthClient()
    for (const oauthClient of [v1, v2] satisfies OAuthClientModule[]) {
      expect(new ResumableHTTPClientTransport(new URL(url), {authProvider: v2Provider, oauthClient})).toBeInstanceOf(
        ResumableHTTPClientTransport,
      )
    }
  })

  it.each<[string, ResumableHTTPClientTransportOptions, RegExp]>([
    [
      'a module without auth()',
      {authProvider: new HeadlessOAuthClient(), oauthClient: {...v2, auth: undefined} as unknown as OAuthClientModule},
      /oauthClient must be an SDK's OAuth client module, with auth\(\)/,
    ],
    [
      'no authProvider to run it for',
      {oauthClient: v2},
      /oauthClient runs the OAuth flow of an authProvider: give options.authProvider too/,
    ],
  ])('%s is a TypeError at construction that says what to give', (_what, options, message) => {
    expect(() => new ResumableHTTPClientTransport(new URL(url), options)).toThrow(message)
  })
})
