/**
 * Every numeric option is checked at construction, with a TypeError that names the option and the value given
 * (docs/design.md#layout: options.ts, backoff.ts, limits.ts): a typo in a limit never becomes a transport that
 * reconnects at once for ever or keeps nothing.
 */
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport, type ResumableHTTPClientTransportOptions} from '../../src/index.ts'

const url = new URL('http://mcp.test/mcp')
const create = (options: ResumableHTTPClientTransportOptions) => (): unknown => new ResumableHTTPClientTransport(url, options)

describe('reconnect', () => {
  const fields = ['maxAttempts', 'maxOutageMs', 'minDelayMs', 'maxDelayMs', 'factor'] as const

  it.each(fields.flatMap((name) => [-1, Number.NaN, Infinity].map((value) => [name, value] as const)))(
    'reconnect.%s %s is a TypeError naming the field and the value',
    (name, value) => {
      expect(create({reconnect: {[name]: value}})).toThrow(new TypeError(`reconnect.${name} must be a finite number >= 0, got ${String(value)}`))
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
    expect(create({reconnectionOptions: {maxReconnectionDelay: -5}})).toThrow(new TypeError('reconnectionOptions.maxReconnectionDelay must be a finite number >= 0, got -5'))
  })
})

describe('limits', () => {
  const fields = ['maxEventBytes', 'maxEventIdBytes', 'dedupeBytes', 'keptRequestBytes', 'maxConcurrentAnswers', 'maxRetryMs', 'maxCalls', 'callBytes'] as const

  it.each(fields.flatMap((name) => [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53].map((value) => [name, value] as const)))(
    'limits.%s %s is a TypeError naming the field and the value',
    (name, value) => {
      expect(create({limits: {[name]: value}})).toThrow(new TypeError(`limits.${name} must be a whole number >= 1, got ${String(value)}`))
    },
  )

  it('each limit may be 1, its smallest value', () => {
    expect(create({limits: Object.fromEntries(fields.map((name) => [name, 1]))})).not.toThrow()
  })

  it.each([null, 5, 'big'])('limits that are not an object (%s) are a TypeError', (limits) => {
    expect(create({limits: limits as never})).toThrow(new TypeError('options.limits must be an object'))
  })

  it('an unknown field is a TypeError listing the fields there are', () => {
    expect(create({limits: {maxEvents: 4} as never})).toThrow(new TypeError(`Unknown field limits.maxEvents: the fields are ${fields.join(', ')}`))
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
    expect(create({store: store as never})).toThrow(new TypeError(`options.store must implement get, set, delete and list; it lacks ${lacks}`))
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
    expect(() => new ResumableHTTPClientTransport(given as never)).toThrow(new TypeError('The server URL must be a URL, e.g. `new URL("https://host/mcp")`'))
  })

  it.each(['http://user@mcp.test/mcp', 'http://:secret@mcp.test/mcp', 'http://user:secret@mcp.test/mcp'])(
    'a server URL with credentials (%s) is a TypeError that does not repeat them',
    (withCredentials) => {
      const message = 'The server URL must not contain credentials (user:password@): pass them as headers in requestInit.headers, e.g. Authorization'
      expect(() => new ResumableHTTPClientTransport(new URL(withCredentials))).toThrow(new TypeError(message))
    },
  )

  it.each([0, -1, Number.NaN])('resumeTimeoutMs %s is a TypeError naming the option, what it takes and the value', (value) => {
    expect(create({resumeTimeoutMs: value})).toThrow(new TypeError(`options.resumeTimeoutMs must be a number > 0 (Infinity: no deadline), got ${String(value)}`))
  })

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
    const message = 'Unknown field reconnectionOptions.delay: the fields are initialReconnectionDelay, maxReconnectionDelay, reconnectionDelayGrowFactor, maxRetries'
    expect(create({reconnectionOptions: {delay: 5} as never})).toThrow(new TypeError(message))
  })

  it('a bad reconnectionOptions value is a TypeError whose cause is the error about the reconnect field it maps to', () => {
    let thrown: unknown
    try {
      new ResumableHTTPClientTransport(url, {reconnectionOptions: {reconnectionDelayGrowFactor: -2}})
    } catch (error) {
      thrown = error
    }
    expect(thrown).toEqual(new TypeError('reconnectionOptions.reconnectionDelayGrowFactor must be a finite number >= 0, got -2'))
    expect((thrown as Error).cause).toEqual(new TypeError('reconnect.factor must be a finite number >= 0, got -2'))
  })
})
