/**
 * Authorization for the HTTP layer: the bearer token on every request, and an SDK's own OAuth client (`auth()` of
 * `@modelcontextprotocol/sdk`, an optional peer loaded on first use, or the module the app gives) when the server
 * answers 401 or 403 `insufficient_scope`. No OAuth is written here: discovery, registration, PKCE, token exchange
 * and refresh are the SDK's; this module decides when to run them and whether the request goes out once more.
 */
import type {OAuthClientProvider} from '@modelcontextprotocol/sdk/client/auth.js'
import {TransportError} from '../errors.ts'

/** The part of `fetch` the transport uses; pass a wrapped one for auth, tracing or tests. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

/** What the transport gives the flow: the v2 SDK's `AuthOptions`; the v1 SDK's `auth()` reads the fields it knows. */
export interface OAuthFlowOptions {
  /** The MCP server URL. */
  serverUrl: URL
  /** The code the authorization redirect brought back: the flow exchanges it for tokens. */
  authorizationCode?: string
  /** The redirect's `iss` parameter (RFC 9207), checked against the authorization server by a flow that knows it. */
  iss?: string
  /** The scopes to ask for: those challenged so far, and those of the current token. */
  scope?: string
  /** The protected resource metadata URL a challenge named. */
  resourceMetadataUrl?: URL
  /** The fetch to reach the authorization server with. */
  fetchFn?: FetchLike
  /** True when the scope asked for exceeds the token's: a refresh cannot widen it, so the user authorizes again. */
  forceReauthorization?: boolean
}

/**
 * The OAuth client module the transport runs on a challenge (see the `oauthClient` option). Both SDK majors fit
 * as they are: `@modelcontextprotocol/sdk/client/auth.js` (v1) and `@modelcontextprotocol/client` (v2).
 */
export interface OAuthClientModule {
  /** Runs the flow: refresh, or discovery, registration and a new authorization (`'REDIRECT'`: the user must log in). */
  auth(provider: OAuthClientProvider, options: OAuthFlowOptions): Promise<'AUTHORIZED' | 'REDIRECT'>
  /** Reads a 401 or 403 answer's `WWW-Authenticate` challenge: `{}` for an answer without one. */
  extractWWWAuthenticateParams(response: Response): {
    resourceMetadataUrl?: URL | undefined
    scope?: string | undefined
    error?: string | undefined
  }
  /** Thrown when the user must authorize (`finishAuth`). */
  UnauthorizedError: new (message?: string) => Error
}

/** What {@link AuthProvider.onUnauthorized} is given: the shape of the v2 SDK's `UnauthorizedContext`. */
export interface UnauthorizedContext {
  /** The 401 answer: its `WWW-Authenticate` header names the resource metadata and the scope. */
  response: Response
  /** The MCP server URL, for the SDK's `auth()` or its discovery helpers. */
  serverUrl: URL
  /** The fetch to reach the authorization server with. */
  fetchFn: FetchLike
}

/**
 * The minimal provider of the v2 SDK (`@modelcontextprotocol/client`'s `AuthProvider`): a bearer token for every
 * request, and a chance to renew it when the server answers 401, after which the request is sent once more.
 */
export interface AuthProvider {
  /** The current bearer token, or undefined to send none. Called before every request. */
  token(): Promise<string | undefined>
  /**
   * Called on 401: renew the credentials so that the next `token()` returns a valid one. Without it, a 401
   * rejects with the SDK's `UnauthorizedError`.
   */
  onUnauthorized?(context: UnauthorizedContext): Promise<void>
}

/** The SDK transport's `maxStepUpRetries` default: one step-up (403 `insufficient_scope`) per request. */
const maxStepUps = 1

/** The v2 SDK's mark (`Symbol.for`, shared by every copy of it) on an error that escaped a transport's auth flow. */
const authSeamEscape = Symbol.for('mcp.authSeamEscape')
/** Errors that came out of an authorization flow: a stream that meets one ends instead of running the flow again. */
const flowFailures = new WeakSet<object>()

/** True for an error thrown by the authorization flow (the SDK's `UnauthorizedError`, an OAuth error, ...). */
export function isAuthorizationFailure(error: unknown): boolean {
  // A WeakSet holds no primitive, and says so without throwing.
  return flowFailures.has(error as object)
}

/** What one request has used of its second chances. */
export interface AuthAttempt {
  unauthorized: boolean
  stepUps: number
}

/** One transport's authorization: its provider, what the server's challenges said, and the flow under way. */
export class Authorizer {
  readonly #token: () => Promise<string | undefined>
  readonly #oauth: OAuthClientProvider | undefined
  readonly #minimal: AuthProvider | undefined
  readonly #serverUrl: URL
  readonly #fetch: () => FetchLike
  #sdk: Promise<OAuthClientModule> | undefined
  #resourceMetadataUrl: URL | undefined
  #scope: string | undefined
  /** One flow at a time: requests refused together wait for the same one (a refresh token is used once). */
  #flow: Promise<void> | undefined

  constructor(provider: unknown, serverUrl: URL, fetch: () => FetchLike, oauthClient?: OAuthClientModule) {
    this.#serverUrl = serverUrl
    this.#fetch = fetch
    if (oauthClient !== undefined) this.#sdk = Promise.resolve(checkOAuthClient(oauthClient))
    const candidate = provider as Partial<OAuthClientProvider & AuthProvider> | null
    if (typeof candidate?.tokens === 'function' && typeof candidate.clientInformation === 'function') {
      const oauth = (this.#oauth = provider as OAuthClientProvider)
      this.#token = async () => (await oauth.tokens())?.access_token
    } else if (
      typeof candidate?.token === 'function' &&
      ['undefined', 'function'].includes(typeof candidate.onUnauthorized)
    ) {
      const minimal = (this.#minimal = provider as AuthProvider)
      this.#token = () => minimal.token()
    } else {
      throw new TypeError(
        'options.authProvider must be an OAuthClientProvider (tokens(), clientInformation(), ... of @modelcontextprotocol/sdk/client/auth.js) or an AuthProvider (token() and optionally onUnauthorized(), as in @modelcontextprotocol/client)',
      )
    }
  }

  /** The bearer token for the next request. */
  token(): Promise<string | undefined> {
    return this.#token()
  }

  /**
   * The answer `response` came to a request sent with `sentToken`: resolves true when the request must be sent
   * again (401: the server did not run it; 403 `insufficient_scope`: stepped up), false to hand the response over.
   * Rejects with the flow's own error, `UnauthorizedError` when the user must authorize (see `finishAuth`).
   */
  async recover(response: Response, sentToken: string | undefined, attempt: AuthAttempt): Promise<boolean> {
    if (response.status === 401 && !attempt.unauthorized) {
      attempt.unauthorized = true
      await this.#flowFor(response, sentToken, () => this.#unauthorized(response))
      return true
    }
    if (response.status !== 403 || this.#oauth === undefined || attempt.stepUps >= maxStepUps) return false
    const sdk = await this.#loadSdk()
    const {error, scope, resourceMetadataUrl} = sdk.extractWWWAuthenticateParams(response)
    if (error !== 'insufficient_scope') return false
    attempt.stepUps++
    const granted = (await this.#oauth.tokens())?.scope
    this.#challenged(granted === undefined ? scope : `${granted} ${scope ?? ''}`.trim(), resourceMetadataUrl)
    // [spec 2026-07-28 authorization] a refresh cannot widen the scope (RFC 6749 §6): a scope beyond the token's
    // needs a new authorization.
    const grantedSet = new Set(granted?.split(' '))
    const beyond = this.#scope?.split(' ').some((name) => !grantedSet.has(name)) ?? false
    await this.#flowFor(response, sentToken, () => this.#authorize({forceReauthorization: beyond}))
    return true
  }

  /** Completes the authorization-code flow with the code (and the `iss`, RFC 9207) the redirect brought back. */
  async finishAuth(authorizationCode: string, iss: string | undefined): Promise<void> {
    if (this.#oauth === undefined)
      throw new TypeError('finishAuth needs an OAuthClientProvider as options.authProvider')
    await this.#marked(() => this.#authorize({authorizationCode, ...(iss === undefined ? {} : {iss})}))
  }

  /** Runs `flow`, or joins the one under way; skipped when another flow renewed the token since the request left. */
  async #flowFor(response: Response, sentToken: string | undefined, flow: () => Promise<void>): Promise<void> {
    if (this.#flow === undefined && response.status === 401 && (await this.#token()) !== sentToken) return
    this.#flow ??= this.#marked(flow).finally(() => (this.#flow = undefined))
    await this.#flow
  }

  async #unauthorized(response: Response): Promise<void> {
    const sdk = await this.#loadSdk()
    // Both SDKs read an answer without a challenge as none ({}).
    const {scope, resourceMetadataUrl} = sdk.extractWWWAuthenticateParams(response)
    this.#challenged(scope, resourceMetadataUrl)
    if (this.#oauth !== undefined) return this.#authorize({})
    // Stryker disable next-line OptionalChaining: #minimal is set whenever #oauth is not
    if (this.#minimal?.onUnauthorized === undefined) throw new sdk.UnauthorizedError()
    await this.#minimal.onUnauthorized({response, serverUrl: this.#serverUrl, fetchFn: this.#fetch()})
  }

  /** The SDK's `auth()`: refresh, or a new authorization (a redirect: `UnauthorizedError` until `finishAuth`). */
  async #authorize(flow: Pick<OAuthFlowOptions, 'authorizationCode' | 'iss' | 'forceReauthorization'>): Promise<void> {
    const sdk = await this.#loadSdk()
    const result = await sdk.auth(this.#oauth!, {
      serverUrl: this.#serverUrl,
      ...flow,
      ...(this.#scope === undefined ? {} : {scope: this.#scope}),
      ...(this.#resourceMetadataUrl === undefined ? {} : {resourceMetadataUrl: this.#resourceMetadataUrl}),
      fetchFn: this.#fetch(),
    })
    if (result !== 'AUTHORIZED') throw new sdk.UnauthorizedError()
  }

  /** A challenge's scope joins those asked for before (a step-up keeps what was granted), and its metadata URL. */
  #challenged(scope: string | undefined, resourceMetadataUrl: URL | undefined): void {
    if (scope !== undefined)
      this.#scope = [...new Set([...(this.#scope?.split(' ') ?? []), ...scope.split(' ')])].join(' ')
    this.#resourceMetadataUrl = resourceMetadataUrl ?? this.#resourceMetadataUrl
  }

  async #marked(flow: () => Promise<void>): Promise<void> {
    try {
      await flow()
    } catch (error) {
      if (typeof error === 'object' && error !== null) {
        flowFailures.add(error)
        // [SDK interop] the v2 SDK's stamp for an error out of the auth flow: its version negotiation then rejects
        // the connect with this error (the user must authorize) instead of calling it a network failure.
        if (Object.isExtensible(error)) Object.defineProperty(error, authSeamEscape, {value: true, configurable: true})
      }
      throw error
    }
  }

  /** The app's `oauthClient`, or the v1 SDK's client auth module, imported once, and only by a transport given a provider. */
  #loadSdk(): Promise<OAuthClientModule> {
    this.#sdk ??= import('@modelcontextprotocol/sdk/client/auth.js').catch((cause: unknown) => {
      throw new TransportError(
        'http',
        'The server asks for authorization (HTTP 401/403), and options.authProvider needs @modelcontextprotocol/sdk installed to run it (or options.oauthClient)',
        {cause},
      )
    })
    return this.#sdk
  }
}

/** `options.oauthClient`, checked at construction: a module without the flow would fail only at the first 401. */
function checkOAuthClient(module: OAuthClientModule): OAuthClientModule {
  const candidate = module as Partial<Record<keyof OAuthClientModule, unknown>> | null
  if (
    typeof candidate?.auth === 'function' &&
    typeof candidate.extractWWWAuthenticateParams === 'function' &&
    typeof candidate.UnauthorizedError === 'function'
  )
    return module
  throw new TypeError(
    "options.oauthClient must be an SDK's OAuth client module, with auth(), extractWWWAuthenticateParams() and UnauthorizedError: import * as oauthClient from '@modelcontextprotocol/client' (v2) or '@modelcontextprotocol/sdk/client/auth.js' (v1)",
  )
}
