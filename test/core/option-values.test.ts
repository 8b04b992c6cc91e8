/**
 * Every option value and nested field is checked at construction, with a TypeError that names the option, what it
 * takes and the value given (docs/design.md#layout: options.ts, policy/option-values.ts, backoff.ts, limits.ts): a
 * typo in a limit never becomes a transport that reconnects at once for ever or keeps nothing, nor `durability:
 * 'fast'` a weaker crash guarantee than asked for.
 */
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport, type ResumableHTTPClientTransportOptions} from '../../src/index.ts'

const url = new URL('http://mcp.test/mcp')
const create = (options: ResumableHTTPClientTransportOptions) => (): unknown =>
  new ResumableHTTPClientTransport(url, options)

describe('reconnect', () => {
  const fields = ['maxAttempts', 'maxOutageMs', 'minDelayMs', 'maxDelayMs', 'factor'] as const

  it.each(fields.flatMap((name) => [-1, Number.NaN, Infinity].map((value) => [name, value] as const)))(
    'reconnect.%s %s is a TypeError naming the field and the value',
    (name, value) => {
      expect(create({reconnect: {[name]: value}})).toThrow(
        new TypeError(`reconnect.${name} must be a finite number >= 0, got ${String(value)}`),
      )
    },
  )

  it.each(fields.filter((name) => name !== 'maxAttempts'))('reconnect.%s 0 is accepted', (name) => {
    expect(create({reconnect: {[name]: 0}})).not.toThrow()
  })

  it('reconnect.maxAttempts 0 is a TypeError: a broken stream is always tried again once', () => {
    expect(create({reconnect: {maxAttempts: 0}})).toThrow(new TypeError('reconnect.maxAttempts must be at least 1'))
    expect(create({reconnect: {maxAttempts: 1}})).not.toThrow()
  })

  it('names the SDK field a bad reconnectionOptions value came from', () => {
    expect(create({reconnectionOptions: {maxReconnectionDelay: -5}})).toThrow(
      new TypeError('reconnectionOptions.maxReconnectionDelay must be a finite number >= 0, got -5'),
    )
  })
})

describe('limits', () => {
  const fields = [
    'maxEventBytes',
    'maxEventIdBytes',
    'dedupeBytes',
    'keptRequestBytes',
    'maxConcurrentAnswers',
    'maxRetryMs',
    'maxCalls',
    'callBytes',
  ] as const

  it.each(fields.flatMap((name) => [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53].map((value) => [name, value] as const)))(
    'limits.%s %s is a TypeError naming the field and the value',
    (name, value) => {
      expect(create({limits: {[name]: value}})).toThrow(
        new TypeError(`limits.${name} must be a whole number >= 1, got ${String(value)}`),
      )
    },
  )

  it('each limit may be 1, its smallest value', () => {
    expect(create({limits: Object.fromEntries(fields.map((name) => [name, 1]))})).not.toThrow()
  })

  it.each([null, 5, 'big'])('limits that are not an object (%s) are a TypeError', (limits) => {
    expect(create({limits: limits as never})).toThrow(new TypeError('options.limits must be an object'))
  })

  it('an unknown field is a TypeError listing the fields there are', () => {
    expect(create({limits: {maxEvents: 4} as never})).toThrow(
      new TypeError(`Unknown field limits.maxEvents: the fields are ${fields.join(', ')}`),
    )
  })
})

describe('store', () => {
  const noop = (): Promise<undefined> => Promise.resolve(undefined)

  it.each([
    ['null', null, 'get, set, delete, list'],
    ['an empty object', {}, 'get, set, delete, list'],
    ['a store with get and a set that is no function', {get: noop, set: 5}, 'set, delete, list'],
    ['a store without list', {get: noop, set: noop, delete: noop}, 'list'],
  ])('%s is a TypeError naming the methods it lacks', (_what, store, lacks) => {
    expect(create({store: store as never})).toThrow(
      new TypeError(`options.store must implement get, set, delete and list; it lacks ${lacks}`),
    )
  })

  it('a store of four plain functions is taken', () => {
    expect(create({store: {get: noop, set: noop, delete: noop, list: () => Promise.resolve([])}})).not.toThrow()
  })
})

describe('the server URL and the options that are no numbers', () => {
  it.each([
    ['a string', 'http://mcp.test/mcp'],
    ['a URL-like object', {href: 'http://mcp.test/mcp', protocol: 'http:'}],
  ])('%s as the server URL is a TypeError that shows how to make a URL', (_what, given) => {
    expect(() => new ResumableHTTPClientTransport(given as never)).toThrow(
      new TypeError('The server URL must be a URL, e.g. `new URL("https://host/mcp")`'),
    )
  })

  it.each(['http://user@mcp.test/mcp', 'http://:secret@mcp.test/mcp', 'http://user:secret@mcp.test/mcp'])(
    'a server URL with credentials (%s) is a TypeError that does not repeat them',
    (withCredentials) => {
      const message =
        'The server URL must not contain credentials (user:password@): pass them as headers in requestInit.headers, e.g. Authorization'
      expect(() => new ResumableHTTPClientTransport(new URL(withCredentials))).toThrow(new TypeError(message))
    },
  )

  it.each([0, -1, Number.NaN])(
    'resumeTimeoutMs %s is a TypeError naming the option, what it takes and the value',
    (value) => {
      expect(create({resumeTimeoutMs: value})).toThrow(
        new TypeError(`options.resumeTimeoutMs must be a number > 0 (Infinity: no deadline), got ${String(value)}`),
      )
    },
  )

  it.each([
    ['no URL', 'mcp.example.com'],
    ['another scheme', 'ftp://mcp.example.com'],
  ])('an allowedRedirectOrigins entry that is %s is a TypeError quoting it', (_what, entry) => {
    const message = `options.allowedRedirectOrigins must hold http(s) origins such as 'https://host:8443', got ${JSON.stringify(entry)}`
    expect(create({allowedRedirectOrigins: [entry]})).toThrow(new TypeError(message))
  })

  it('allowedRedirectOrigins takes http and https origins', () => {
    expect(create({allowedRedirectOrigins: ['http://a.example', 'https://b.example:8443/any/path']})).not.toThrow()
  })

  it('an unknown reconnectionOptions field is a TypeError listing the SDK fields', () => {
    const message =
      'Unknown field reconnectionOptions.delay: the fields are initialReconnectionDelay, maxReconnectionDelay, reconnectionDelayGrowFactor, maxRetries'
    expect(create({reconnectionOptions: {delay: 5} as never})).toThrow(new TypeError(message))
  })

  it('a bad reconnectionOptions value is a TypeError whose cause is the error about the reconnect field it maps to', () => {
    let thrown: unknown
    try {
      new ResumableHTTPClientTransport(url, {reconnectionOptions: {reconnectionDelayGrowFactor: -2}})
    } catch (error) {
      thrown = error
    }
    expect(thrown).toEqual(
      new TypeError('reconnectionOptions.reconnectionDelayGrowFactor must be a finite number >= 0, got -2'),
    )
    expect((thrown as Error).cause).toEqual(new TypeError('reconnect.factor must be a finite number >= 0, got -2'))
  })
})

describe('every other option value, checked at construction', () => {
  const noop = (): Promise<undefined> => Promise.resolve(undefined)
  const store = {get: noop, set: noop, delete: noop, list: () => Promise.resolve([])}

  // Each of these, taken, would mean something else than asked for, or nothing.
  it.each<[string, ResumableHTTPClientTransportOptions, string]>([
    [
      "durability 'fast'",
      {durability: 'fast' as never},
      `options.durability must be 'strict' or 'relaxed', got "fast"`,
    ],
    [
      "durability 'Strict'",
      {durability: 'Strict' as never},
      `options.durability must be 'strict' or 'relaxed', got "Strict"`,
    ],
    ['durability true', {durability: true as never}, `options.durability must be 'strict' or 'relaxed', got true`],
    [
      "terminateOnClose 'yes'",
      {terminateOnClose: 'yes' as never},
      'options.terminateOnClose must be true or false, got "yes"',
    ],
    ['terminateOnClose 1', {terminateOnClose: 1 as never}, 'options.terminateOnClose must be true or false, got 1'],
    [
      'callJournal 1',
      {callJournal: 1 as never},
      "options.callJournal must be true, false, or the journal itself (import {callJournal} from 'mcp-resumable-http/journal'), got 1",
    ],
    [
      "callJournal 'false'",
      {callJournal: 'false' as never},
      `options.callJournal must be true, false, or the journal itself (import {callJournal} from 'mcp-resumable-http/journal'), got "false"`,
    ],
    [
      'callJournal an object that is not the journal',
      {callJournal: {} as never},
      "options.callJournal must be true, false, or the journal itself (import {callJournal} from 'mcp-resumable-http/journal'), got an object",
    ],
    [
      'onEvent a string',
      {onEvent: 'console.log' as never},
      'options.onEvent must be a function, called with each event, got "console.log"',
    ],
    ['storeKey a number', {storeKey: 42 as never}, 'options.storeKey must be a string, got 42'],
    [
      'storeKey an object (every user would share "[object Object]")',
      {storeKey: {userId: 7} as never},
      'options.storeKey must be a string, got an object',
    ],
    [
      'sessionId a number',
      {sessionId: 42 as never},
      'options.sessionId must be a session ID: 1 to 1024 visible ASCII characters (0x21-0x7E), got 42',
    ],
    [
      "resumeTimeoutMs '5000'",
      {resumeTimeoutMs: '5000' as never},
      'options.resumeTimeoutMs must be a number > 0 (Infinity: no deadline), got "5000"',
    ],
    [
      'resumeTimeoutMs null',
      {resumeTimeoutMs: null as never},
      'options.resumeTimeoutMs must be a number > 0 (Infinity: no deadline), got null',
    ],
    [
      "storeTimeoutMs '5000'",
      {storeTimeoutMs: '5000' as never},
      'options.storeTimeoutMs must be a number > 0 (Infinity: no deadline), got "5000"',
    ],
    [
      'a secret header name that no header can have',
      {secretHeaders: ['x api key']},
      'options.secretHeaders must be an array of header names, got an array',
    ],
    [
      'an empty secret header name',
      {secretHeaders: ['']},
      'options.secretHeaders must be an array of header names, got an array',
    ],
    [
      'requestInit a string',
      {requestInit: 'include' as never},
      `options.requestInit must be an object of fetch's RequestInit fields (headers, credentials, ...), got "include"`,
    ],
    [
      'requestInit an array',
      {requestInit: [] as never},
      `options.requestInit must be an object of fetch's RequestInit fields (headers, credentials, ...), got an array`,
    ],
    [
      'requestInit.method',
      {requestInit: {method: 'GET'}},
      "options.requestInit.method is not used: each request's method is the protocol's (POST, GET, DELETE)",
    ],
    [
      'requestInit.body',
      {requestInit: {body: '{}'}},
      'options.requestInit.body is not used: each POST carries the message it sends',
    ],
    [
      "requestInit.redirect with redirectPolicy 'same-origin'",
      {requestInit: {redirect: 'follow'}},
      "options.requestInit.redirect is used only with redirectPolicy 'follow': with 'same-origin' (the default) the transport follows redirects itself",
    ],
    [
      'reconnect a string',
      {reconnect: 'fast' as never},
      'options.reconnect must be an object of maxAttempts, maxOutageMs, minDelayMs, maxDelayMs, factor',
    ],
    [
      'reconnect an array',
      {reconnect: [] as never},
      'options.reconnect must be an object of maxAttempts, maxOutageMs, minDelayMs, maxDelayMs, factor',
    ],
    [
      'a typo in a reconnect field',
      {reconnect: {maxAttemps: 3} as never},
      'Unknown field reconnect.maxAttemps: the fields are maxAttempts, maxOutageMs, minDelayMs, maxDelayMs, factor',
    ],
    [
      'reconnect.maxAttempts 2.5',
      {reconnect: {maxAttempts: 2.5}},
      'reconnect.maxAttempts must be a whole number, got 2.5',
    ],
    [
      'a first delay above the longest',
      {reconnect: {minDelayMs: 5000, maxDelayMs: 100}},
      'reconnect.minDelayMs (5000) must not exceed reconnect.maxDelayMs (100)',
    ],
    [
      'a first delay above the default longest',
      {reconnect: {minDelayMs: 40_000}},
      'reconnect.minDelayMs (40000) must not exceed reconnect.maxDelayMs (30000)',
    ],
    [
      'reconnectionOptions an array',
      {reconnectionOptions: [] as never},
      'options.reconnectionOptions must be an object of initialReconnectionDelay, maxReconnectionDelay, reconnectionDelayGrowFactor, maxRetries',
    ],
    [
      'reconnectionOptions.maxRetries 1.5',
      {reconnectionOptions: {maxRetries: 1.5}},
      'reconnectionOptions.maxRetries must be a whole number, got 1.5',
    ],
    [
      'reconnectionOptions.maxRetries null',
      {reconnectionOptions: {maxRetries: null as never}},
      'reconnectionOptions.maxRetries must be a finite number >= 0, got null',
    ],
    [
      'an SDK first delay above the SDK longest',
      {reconnectionOptions: {initialReconnectionDelay: 5000, maxReconnectionDelay: 100}},
      'reconnectionOptions.initialReconnectionDelay (5000) must not exceed reconnectionOptions.maxReconnectionDelay (100)',
    ],
    ['limits an array', {limits: [] as never}, 'options.limits must be an object'],
    [
      'limits.maxCalls null',
      {limits: {maxCalls: null as never}},
      'limits.maxCalls must be a whole number >= 1, got null',
    ],
    ['ownership null', {ownership: null as never}, "options.ownership must be 'new-session' or 'wait', got null"],
    [
      'leaseTtlMs null',
      {leaseTtlMs: null as never},
      'options.leaseTtlMs must be a positive integer of milliseconds, got null',
    ],
    [
      'a store whose acquire is no function',
      {store: {...store, acquire: 5} as never},
      'options.store.acquire, when there, must be a function (name, ttlMs) => Promise<Lease | undefined>: leave it out for a store that keeps no owner',
    ],
  ])(
    '%s is a TypeError naming the option and what it accepts: it is never taken for something else',
    (_what, options, message) => {
      expect(create(options)).toThrow(new TypeError(message))
    },
  )

  // Each of these the engine would otherwise refuse, with a message that names neither the option nor what it takes.
  it.each<[string, ResumableHTTPClientTransportOptions, string]>([
    [
      'secretHeaders a string',
      {secretHeaders: 'x-api-key' as never},
      'options.secretHeaders must be an array of header names, got "x-api-key"',
    ],
    [
      'a secret header that is a number',
      {secretHeaders: [5] as never},
      'options.secretHeaders must be an array of header names, got an array',
    ],
    [
      'allowedRedirectOrigins a string',
      {allowedRedirectOrigins: 'https://b.example' as never},
      `options.allowedRedirectOrigins must be an array of origins such as 'https://host:8443', got "https://b.example"`,
    ],
    [
      'reconnect null',
      {reconnect: null as never},
      'options.reconnect must be an object of maxAttempts, maxOutageMs, minDelayMs, maxDelayMs, factor',
    ],
    [
      'reconnectionOptions null',
      {reconnectionOptions: null as never},
      'options.reconnectionOptions must be an object of initialReconnectionDelay, maxReconnectionDelay, reconnectionDelayGrowFactor, maxRetries',
    ],
    [
      'requestInit.headers a number',
      {requestInit: {headers: 5 as never}},
      'options.requestInit.headers must be what `new Headers()` takes: names that are HTTP tokens, values without control characters',
    ],
    [
      'a header name with a space',
      {requestInit: {headers: {'x api': 'v'}}},
      'options.requestInit.headers must be what `new Headers()` takes: names that are HTTP tokens, values without control characters',
    ],
  ])(
    "%s is a TypeError naming the option and what it accepts, not the engine's error that names neither",
    (_what, options, message) => {
      expect(create(options)).toThrow(new TypeError(message))
    },
  )

  it("requestInit.signal is never dropped in silence: it is a TypeError saying what to use instead, the Client's signal for one request, close() for all", () => {
    const message =
      'options.requestInit.signal is not supported: requestInit goes with every request, so its signal cannot stop one of them. Give a request its own with the Client (client.callTool(params, undefined, {signal})): its abort POSTs notifications/cancelled and closes that request. To stop everything, call transport.close()'
    expect(create({requestInit: {signal: new AbortController().signal}})).toThrow(new TypeError(message))
    expect(create({requestInit: {signal: AbortSignal.abort()}})).toThrow(new TypeError(message))
  })

  it('a header value that cannot be sent is refused without being quoted: it may be a secret', () => {
    let thrown: unknown
    try {
      new ResumableHTTPClientTransport(url, {requestInit: {headers: {authorization: 'Bearer sk-live-1\n2'}}})
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(TypeError)
    expect(JSON.stringify({message: (thrown as Error).message, cause: String((thrown as Error).cause)})).not.toContain(
      'sk-live',
    )
  })

  it.each<[string, ResumableHTTPClientTransportOptions]>([
    [
      'every boolean and enumerated value',
      {durability: 'relaxed', terminateOnClose: true, callJournal: false, ownership: 'wait', redirectPolicy: 'follow'},
    ],
    ['strings where strings go', {storeKey: '', sessionId: 'session-1'}],
    [
      'a requestInit of fetch fields, a null signal and body',
      {requestInit: {headers: [['x-app', '1']], credentials: 'include', cache: 'no-store', signal: null, body: null}},
    ],
    [
      "requestInit.redirect with redirectPolicy 'follow'",
      {redirectPolicy: 'follow', requestInit: {redirect: 'manual'}},
    ],
    ['secret header names in any case', {secretHeaders: ['X-Tenant-Token', 'api_key']}],
    ['a longest delay of 0 under the default first delay (every delay capped to 0)', {reconnect: {maxDelayMs: 0}}],
    ['a first delay equal to the longest', {reconnect: {minDelayMs: 100, maxDelayMs: 100}}],
    [
      'an SDK longest delay under the SDK default first delay, as the SDK takes it',
      {reconnectionOptions: {maxReconnectionDelay: 500}},
    ],
    ['timeouts of Infinity', {resumeTimeoutMs: Infinity, storeTimeoutMs: Infinity}],
    ['a store with an acquire function', {store: {...store, acquire: () => Promise.resolve(undefined)}}],
  ])('%s are taken', (_what, options) => {
    expect(create(options)).not.toThrow()
  })
})
