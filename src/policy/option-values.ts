import {isHeaderName, isSessionId, sessionIdRule} from './limits.ts'

/*
 * The values of the options that no resolver of their own checks (limits.ts, backoff.ts, the store's, the
 * ownership's and the OAuth glue check theirs): a wrong one is a TypeError naming the option and what it accepts,
 * so that nothing given is ignored, or read as something else, in silence (docs/options.md). `undefined` is an
 * option left out; `null` is a value, and no option takes it.
 */

/** What an option accepts, said in its TypeError, and the test of a value given. */
type Accepts = readonly [said: string, valid: (value: unknown) => boolean]

const isBoolean = (value: unknown): boolean => typeof value === 'boolean'
const isFunction = (value: unknown): boolean => typeof value === 'function'
// `Infinity` is the documented way to wait for ever.
const isTimeout = (value: unknown): boolean => typeof value === 'number' && value > 0
const timeout: Accepts = ['a number > 0 (Infinity: no deadline)', isTimeout]

const accepted: Readonly<Record<string, Accepts>> = {
  storeKey: ['a string', (value) => typeof value === 'string'],
  sessionId: [`a session ID: ${sessionIdRule}`, isSessionId],
  fetch: ['a function', isFunction],
  onEvent: ['a function, called with each event', isFunction],
  durability: ["'strict' or 'relaxed'", (value) => value === 'strict' || value === 'relaxed'],
  resumeTimeoutMs: timeout,
  storeTimeoutMs: timeout,
  terminateOnClose: ['true or false', isBoolean],
  // The journal itself is what a service worker, which may not import(), gives (src/calls/lazy-journal.ts).
  callJournal: [
    "true, false, or the journal itself (import {callJournal} from 'mcp-resumable-http/journal')",
    (value) => isBoolean(value) || typeof (value as {CallJournal?: unknown} | null)?.CallJournal === 'function',
  ],
  secretHeaders: [
    'an array of header names',
    (value) => Array.isArray(value) && value.every((name) => typeof name === 'string' && isHeaderName(name)),
  ],
  // Each entry is checked as it is read (an http(s) origin).
  allowedRedirectOrigins: ["an array of origins such as 'https://host:8443'", Array.isArray],
}

/** Throws a TypeError naming the first option of `options` whose value it does not accept, and what it accepts. */
export function checkOptionValues(options: Readonly<Record<string, unknown>>): void {
  for (const [name, [said, valid]] of Object.entries(accepted)) {
    const value = options[name]
    if (value !== undefined && !valid(value))
      throw new TypeError(`options.${name} must be ${said}, got ${describeValue(value)}`)
  }
  checkRequestInit(options['requestInit'], options['redirectPolicy'])
}

/**
 * `requestInit` is merged into every request: the fields the transport sets itself would be ignored there, and a
 * signal would outlive the request it was meant for, so each is refused by name, with what to use instead.
 */
function checkRequestInit(init: unknown, redirectPolicy: unknown): void {
  if (init === undefined) return
  if (typeof init !== 'object' || init === null || Array.isArray(init)) {
    throw new TypeError(
      `options.requestInit must be an object of fetch's RequestInit fields (headers, credentials, ...), got ${describeValue(init)}`,
    )
  }
  const {signal, method, body, redirect, headers} = init as RequestInit
  if (signal !== undefined && signal !== null) {
    throw new TypeError(
      'options.requestInit.signal is not supported: requestInit goes with every request, so its signal cannot stop one of them. Give a request its own with the Client (client.callTool(params, undefined, {signal})): its abort POSTs notifications/cancelled and closes that request. To stop everything, call transport.close()',
    )
  }
  if (method !== undefined)
    throw new TypeError(
      "options.requestInit.method is not used: each request's method is the protocol's (POST, GET, DELETE)",
    )
  if (body !== undefined && body !== null)
    throw new TypeError('options.requestInit.body is not used: each POST carries the message it sends')
  if (redirect !== undefined && redirectPolicy !== 'follow') {
    throw new TypeError(
      "options.requestInit.redirect is used only with redirectPolicy 'follow': with 'same-origin' (the default) the transport follows redirects itself",
    )
  }
  try {
    new Headers(headers)
  } catch {
    // The platform's message may quote a value, which may be a secret.
    throw new TypeError(
      'options.requestInit.headers must be what `new Headers()` takes: names that are HTTP tokens, values without control characters',
    )
  }
}

/** A value as an error message shows it: a string quoted, an object by its kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' && value !== null ? 'an object' : String(value)
}
