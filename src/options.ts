import {Authorizer, type AuthProvider, type FetchLike, type OAuthClientModule} from './wire/auth.ts'
import {resolveReconnectPolicy, type ReconnectOptions, type ReconnectPolicy} from './policy/backoff.ts'
import type {OAuthClientProvider} from '@modelcontextprotocol/sdk/client/auth.js'
import type {TransportEvent} from './events.ts'
import type {HttpClient} from './wire/http.ts'
import {resolveLimits, type LimitOptions, type Limits} from './policy/limits.ts'
import {checkOptionValues} from './policy/option-values.ts'
import {StoreNamespace} from './wire/namespace.ts'
import {resolveOwnership, type OwnershipOptions, type ResolvedOwnership} from './persistence/ownership.ts'
import {checkStore, MemoryStore, type ResumptionStore} from './persistence/store.ts'
import {createRedactor, defaultSecretHeaders} from './wire/redaction.ts'

export interface ResumableHTTPClientTransportOptions extends OwnershipOptions {
  /**
   * Where the session and the stream cursors are kept. Use a persistent store to resume across restarts.
   * @defaultValue `new MemoryStore()`
   */
  store?: ResumptionStore | undefined
  /**
   * Separates sessions kept in one store for the same server, for example by user ID: give each user of one
   * endpoint their own, or they share a session. The server URL (origin, path and a digest of the query) names
   * the records besides.
   * @defaultValue none: the server URL alone names the records
   */
  storeKey?: string | undefined
  /**
   * A session the app kept itself (1 to 1024 visible ASCII characters, as the server gave it): the transport
   * attaches to it (session resumption, no cursors) and the Client skips `initialize`. Any other value is a
   * `TypeError` at construction.
   * @defaultValue the session found in `store`, if any
   */
  sessionId?: string | undefined
  /**
   * The fetch to use. When omitted, `globalThis.fetch` is read at each call, so msw and app patches apply.
   * @defaultValue `globalThis.fetch`
   */
  fetch?: FetchLike | undefined
  /**
   * Merged into every request (headers, credentials, ...). The transport's protocol headers win over these, and so
   * does its `cache: 'no-store'` (nothing of MCP is ever served from an HTTP cache). `method` and `body` are each
   * request's own and `redirect` is {@link ResumableHTTPClientTransportOptions.redirectPolicy}'s:
   * setting one is a TypeError (`redirect` is taken with `'follow'`). So is a `signal`: one init goes with every
   * request, so its signal could stop none of them alone (the SDK transport drops it). Stop one request with the
   * Client's own `signal` request option (`client.callTool(params, undefined, {signal})`: it POSTs
   * `notifications/cancelled` and the request's POST is closed), and everything with `close()`.
   * @defaultValue `{}`
   */
  requestInit?: RequestInit | undefined
  /**
   * How a redirect of one of the transport's requests is handled (the SDK transport's option, with its values).
   *
   * - `'same-origin'`: the transport follows a redirect itself, at most 5 in a row, only when it keeps the method
   *   (307 and 308; any redirect of a GET) and stays within the origin of the server URL (or goes from http to
   *   https on the same host with default ports) or goes to an origin of `allowedRedirectOrigins`. Any other
   *   redirect fails the request with a `TransportError` of code `http`, so that the session ID, the body,
   *   `Last-Event-ID` and the app's headers never reach another origin. Browsers hide the target of a redirect
   *   that fetch does not follow: there, every redirect fails so. `requestInit.redirect` is refused.
   * - `'follow'`: redirects are left to fetch and `requestInit.redirect`; Node's fetch sends the app's headers
   *   (but `Authorization` and `Cookie`), the session ID and, on 307 and 308, the body to wherever the server
   *   points. Only for a server you trust.
   * @defaultValue 'same-origin'
   */
  redirectPolicy?: 'same-origin' | 'follow' | undefined
  /**
   * Origins (`'https://mcp-2.example.com'`) besides the server's own that `redirectPolicy: 'same-origin'` follows
   * a redirect to, with the whole request: session ID, body, `Last-Event-ID` and the app's headers.
   * @defaultValue `[]`
   */
  allowedRedirectOrigins?: readonly string[] | undefined
  /**
   * Headers of `requestInit.headers` whose values are secrets, besides `Authorization`, `Cookie` and
   * `Proxy-Authorization` (always). Their values, like the query values of the server URL, are masked in every
   * error message and event. Replaces the default list.
   * @defaultValue `['x-api-key', 'api-key', 'x-auth-token']`
   */
  secretHeaders?: readonly string[] | undefined
  /**
   * Authorization, as the SDK transport does it: the SDK's `OAuthClientProvider`, or the v2 SDK's minimal
   * {@link AuthProvider} (`token()`, `onUnauthorized()`). Its bearer token goes on every request (POSTs, the
   * standalone GET, resume GETs with their `Last-Event-ID`, DELETE). On 401 the SDK's `auth()` runs (refresh, or a
   * new authorization) and the request is sent once more, unchanged: the server did not run it. On 403
   * `insufficient_scope` the scope is stepped up, once per request. When the user must authorize, the call
   * rejects with the SDK's `UnauthorizedError`: complete with `transport.finishAuth(code)`, then
   * connect again. Needs `@modelcontextprotocol/sdk` installed (loaded on the first challenge). The token wins
   * over an `Authorization` header in `requestInit`; the authorization server is reached with `fetch`, without
   * `requestInit`.
   * @defaultValue none: no `Authorization` header is added
   */
  authProvider?: OAuthClientProvider | AuthProvider | undefined
  /**
   * The OAuth client the transport runs for `authProvider` on 401, on 403 `insufficient_scope` and in
   * `finishAuth`: an SDK's module as imported, with `auth()`, `extractWWWAuthenticateParams()` and
   * `UnauthorizedError`. Give the v2 SDK's (`import * as oauthClient from '@modelcontextprotocol/client'`) for the
   * 2026-07-28 authorization rules it implements (`application_type` at registration, the redirect's `iss` checked,
   * see `finishAuth`); the errors of the flow, `UnauthorizedError` included, are then that module's.
   * @defaultValue the v1 SDK's `@modelcontextprotocol/sdk/client/auth.js`, loaded on the first challenge
   */
  oauthClient?: OAuthClientModule | undefined
  /** How broken streams are reopened: see {@link ReconnectOptions} for each default. */
  reconnect?: ReconnectOptions | undefined
  /**
   * The SDK transport's name for {@link ResumableHTTPClientTransportOptions.reconnect}, accepted with its
   * meaning so that SDK options can be passed unchanged; give one of the two, not both.
   * @defaultValue none: `reconnect`'s defaults apply
   */
  reconnectionOptions?: StreamableHTTPReconnectionOptions | undefined
  /**
   * Receives a typed event for every reconnect decision, duplicate, settlement and store failure.
   * @defaultValue none
   */
  onEvent?: ((event: TransportEvent) => void) | undefined
  /**
   * `strict`: the cursor of an event is in the store before the event reaches the Client, so a crash can
   * neither skip an event nor deliver one twice (one store write per batch of events read meanwhile, coalesced).
   * `relaxed`: cursors are stored in the background; after a crash the last events before it may be
   * delivered again (they are then new to the new process's Client). Faster on a slow store. The same holds for
   * the call journal: `strict` sends a `tools/call` (and delivers a task handle or an `input_required` round) once
   * its record is stored; `relaxed` stores it in the background, so a crash right after may leave no record of it.
   * @defaultValue 'strict'
   */
  durability?: 'strict' | 'relaxed' | undefined
  /**
   * How long a response stream reconnected with `Last-Event-ID` may bring no event (since it opened, or since its
   * last one; a comment is none) while its request is pending. Then it is resumed again from its newest cursor: a
   * server whose resumed connection replays and then falls silent (server-everything's event store) replays the
   * answer it stored meanwhile. The fourth such silence in a row with nothing new settles the request
   * `outcome-unknown`: a server that does not know the event ID may answer 200 and then never send anything (the
   * SDK example's `InMemoryEventStore` does). A correct server answers each resumption with nothing new and the
   * stream goes on, at the cost of one GET per `resumeTimeoutMs` of silence. Never on the POST's own connection nor
   * on the standalone stream. `Infinity` waits for ever.
   * @defaultValue 60000 (the SDK Client's default request timeout)
   */
  resumeTimeoutMs?: number | undefined
  /**
   * Send `DELETE` to end the session on `close()`. Off by default: sessions are meant to outlive the process.
   * @defaultValue false
   */
  terminateOnClose?: boolean | undefined
  /**
   * Keep the call journal (`transport.calls`,
   * {@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/eras.md#durable-calls-in-both-eras | durable calls}):
   * every `tools/call` recorded in the store before it is sent, task handles polled and `input_required` rounds kept,
   * so that a restarted process learns what became of its predecessor's calls. It costs each `tools/call` two store
   * writes (its record, then its removal once answered), so it is on only when the app will read it. `true` loads the
   * journal with `import()` in `start()` (a chunk of its own in a bundled app: an app without it never loads it). A
   * service worker may not `import()`: there, give the journal itself, `callJournal` of `mcp-resumable-http/journal`.
   * @defaultValue false
   */
  callJournal?: boolean | CallJournalModule | undefined
  /** Caps on what the server controls: see {@link LimitOptions} for each default. */
  limits?: LimitOptions | undefined
  /**
   * How long one call of `store` (get, set, delete, list) may take. A call that fails or takes longer is
   * reported once (`store-error`), and the transport then carries on in memory: it makes no further call to that
   * store, keeps its session, cursors and server requests in this process only, and every write it would have
   * waited for counts as done. `connect()`, `send()` and `close()` thus never wait on a store for longer than
   * this. A restart resumes from what the store held before the failure; the next transport tries the store
   * again. `Infinity` waits for ever.
   * @defaultValue 5000
   */
  storeTimeoutMs?: number | undefined
}

/**
 * The call journal itself: `callJournal` of `mcp-resumable-http/journal`, for `options.callJournal` where it cannot
 * be loaded on first use (a service worker may not `import()`).
 */
export interface CallJournalModule {
  /** @internal What the transport makes its journal with (src/calls/call-journal.ts). */
  readonly CallJournal: new (host: never) => object
}

/**
 * The SDK's `StreamableHTTPReconnectionOptions`, mapped field by field onto {@link ReconnectOptions}. A field
 * left out takes the SDK's default, not `reconnect`'s: these options keep the SDK's meaning. One difference
 * remains: delays here are jittered (up to twice the computed delay), so that clients cut together do not
 * reconnect together.
 */
export interface StreamableHTTPReconnectionOptions {
  /** Maps to `reconnect.maxDelayMs`. @defaultValue 30000 */
  maxReconnectionDelay?: number | undefined
  /** Maps to `reconnect.minDelayMs`. @defaultValue 1000 */
  initialReconnectionDelay?: number | undefined
  /** Maps to `reconnect.factor`. @defaultValue 1.5 */
  reconnectionDelayGrowFactor?: number | undefined
  /**
   * Reconnection attempts in a row before a stream is given up: maps to `reconnect.maxAttempts`. At least 1:
   * this transport always tries to reopen a broken stream.
   * @defaultValue 2
   */
  maxRetries?: number | undefined
}

export interface ResolvedOptions {
  store: ResumptionStore
  namespace: StoreNamespace
  sessionId: string | undefined
  http: HttpClient
  reconnect: ReconnectPolicy
  durability: 'strict' | 'relaxed'
  resumeTimeoutMs: number
  onEvent: (event: TransportEvent) => void
  terminateOnClose: boolean
  callJournal: boolean | CallJournalModule
  limits: Limits
  storeTimeoutMs: number
  ownership: ResolvedOwnership
}

export function resolveOptions(url: URL, options: ResumableHTTPClientTransportOptions = {}): ResolvedOptions {
  if (!(url instanceof URL)) throw new TypeError('The server URL must be a URL, e.g. `new URL("https://host/mcp")`')
  if (url.username !== '' || url.password !== '') {
    // Said without the URL: it holds the credentials.
    throw new TypeError(
      'The server URL must not contain credentials (user:password@): pass them as headers in requestInit.headers, e.g. Authorization',
    )
  }
  checkKeys(options)
  checkOptionValues(options as Readonly<Record<string, unknown>>)
  if (options.store !== undefined) checkStore(options.store)
  const onEvent = options.onEvent
  const requestInit = options.requestInit ?? {}
  const fetchOption = options.fetch
  // Read at call time, as for the MCP requests: msw and app patches apply to the authorization server too.
  if (options.oauthClient !== undefined && options.authProvider === undefined)
    throw new TypeError('options.oauthClient runs the OAuth flow of an authProvider: give options.authProvider too')
  const auth =
    options.authProvider === undefined
      ? undefined
      : new Authorizer(options.authProvider, url, () => fetchOption ?? globalThis.fetch, options.oauthClient)
  return Object.freeze({
    store: options.store ?? new MemoryStore(),
    // Two servers, two query strings of one server, or two storeKeys never share a session or a cursor.
    namespace: new StoreNamespace(url, options.storeKey),
    sessionId: options.sessionId,
    http: {
      url,
      fetch: options.fetch,
      requestInit,
      redirectPolicy: redirectPolicy(options.redirectPolicy),
      allowedRedirectOrigins: new Set((options.allowedRedirectOrigins ?? []).map(originOf)),
      redact: createRedactor(url, requestInit.headers, options.secretHeaders ?? defaultSecretHeaders),
      auth,
    },
    reconnect: reconnectPolicy(options),
    durability: options.durability ?? 'strict',
    resumeTimeoutMs: options.resumeTimeoutMs ?? 60_000,
    // Stryker disable next-line ConditionalExpression: guard(undefined) throws inside its own try
    onEvent: onEvent === undefined ? () => {} : guard(onEvent),
    terminateOnClose: options.terminateOnClose ?? false,
    callJournal: options.callJournal ?? false,
    limits: resolveLimits(options.limits),
    storeTimeoutMs: options.storeTimeoutMs ?? 5000,
    ownership: resolveOwnership(options),
  })
}

function redirectPolicy(value: unknown): 'same-origin' | 'follow' {
  if (value === undefined || value === 'same-origin' || value === 'follow') return value ?? 'same-origin'
  throw new TypeError(`options.redirectPolicy must be 'same-origin' or 'follow', got ${JSON.stringify(value)}`)
}

/** The origin of an entry of `allowedRedirectOrigins`, which must be an http(s) origin. */
function originOf(entry: string): string {
  let url: URL | undefined
  try {
    url = new URL(entry)
  } catch {
    // Reported below, with the entry.
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new TypeError(
      `options.allowedRedirectOrigins must hold http(s) origins such as 'https://host:8443', got ${JSON.stringify(entry)}`,
    )
  }
  return url.origin
}

// Every key the transport reads.
const known = new Set<string>([
  'store',
  'storeKey',
  'sessionId',
  'fetch',
  'requestInit',
  'reconnect',
  'reconnectionOptions',
  'onEvent',
  'durability',
  'resumeTimeoutMs',
  'terminateOnClose',
  'callJournal',
  'redirectPolicy',
  'allowedRedirectOrigins',
  'secretHeaders',
  'limits',
  'storeTimeoutMs',
  'authProvider',
  'oauthClient',
  'ownership',
  'leaseTtlMs',
])

/**
 * A key this transport does not read must not be ignored in silence (a JavaScript caller, or SDK options
 * passed through a variable, gets no compile error): every unknown key is a `TypeError` naming what to use.
 */
function checkKeys(options: unknown): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
  for (const key of Object.keys(options)) {
    if (known.has(key)) continue
    throw new TypeError(
      `Unknown option ${JSON.stringify(key)}: the options are ${[...known].join(', ')} (see https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/options.md)`,
    )
  }
}

// Each SDK reconnection field: its name in `reconnect`, and the SDK's default (kept: the SDK's meaning).
const sdkFields = {
  initialReconnectionDelay: ['minDelayMs', 1000],
  maxReconnectionDelay: ['maxDelayMs', 30_000],
  reconnectionDelayGrowFactor: ['factor', 1.5],
  maxRetries: ['maxAttempts', 2],
} as const satisfies Record<keyof StreamableHTTPReconnectionOptions, readonly [keyof ReconnectOptions, number]>

function reconnectPolicy(options: ResumableHTTPClientTransportOptions): ReconnectPolicy {
  const sdk = options.reconnectionOptions
  if (sdk === undefined) return resolveReconnectPolicy(options.reconnect)
  if (options.reconnect !== undefined) {
    throw new TypeError('options.reconnect and options.reconnectionOptions (its SDK name) were both given: pass one')
  }
  const given: unknown = sdk
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new TypeError(`options.reconnectionOptions must be an object of ${Object.keys(sdkFields).join(', ')}`)
  const unknown = Object.keys(sdk).find((key) => !(key in sdkFields))
  if (unknown !== undefined) {
    throw new TypeError(
      `Unknown field reconnectionOptions.${unknown}: the fields are ${Object.keys(sdkFields).join(', ')}`,
    )
  }
  if (sdk.maxRetries === 0) {
    throw new TypeError(
      'reconnectionOptions.maxRetries 0 (never reconnect) is not supported: a broken stream is always reopened at least once; use reconnect: {maxAttempts: 1}',
    )
  }
  const mapped: ReconnectOptions = {}
  const defaults: Partial<Record<keyof ReconnectPolicy, number>> = {}
  for (const [field, [name, fallback]] of Object.entries(sdkFields)) {
    const value = sdk[field as keyof typeof sdkFields]
    if (value !== undefined) mapped[name] = value
    defaults[name] = fallback
  }
  try {
    return resolveReconnectPolicy(mapped, defaults)
  } catch (error) {
    // Name the field the caller wrote, not ours.
    let message = (error as Error).message
    for (const [field, [name]] of Object.entries(sdkFields))
      message = message.replace(`reconnect.${name}`, `reconnectionOptions.${field}`)
    throw new TypeError(message, {cause: error})
  }
}

// A throwing listener must not break the transport it observes.
function guard(listener: (event: TransportEvent) => void): (event: TransportEvent) => void {
  return (event) => {
    try {
      listener(event)
    } catch {
      // The listener's own bug; nothing the transport can do about it.
    }
  }
}
