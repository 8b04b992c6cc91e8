/**
 * Caps on what the server controls (SECURITY.md, "exhaust memory"): each breach is reported by a
 * `limit-exceeded` event and handled as its TSDoc says, never silently and never by crashing the host.
 */
export interface LimitOptions {
  /**
   * The largest SSE event, in characters of its fields as they arrive (a byte of ASCII is one). A larger one
   * fails its connection (reported, then reconnected as any broken connection), so an event that never ends
   * cannot take the memory; no more than this is read ahead of delivery either (nor more than 1 MiB).
   * @defaultValue 16777216 (16 MiB)
   */
  maxEventBytes?: number | undefined
  /**
   * The longest event ID sent back as `Last-Event-ID`. An event with a longer ID (or one that no HTTP header
   * can carry) is delivered, but its ID is neither remembered nor sent: the stream is not resumable until an
   * event with a valid ID comes. A stored cursor longer than this is discarded.
   * @defaultValue 4096
   */
  maxEventIdBytes?: number | undefined
  /**
   * Memory for de-duplication, in characters of the IDs remembered: per stream (event IDs), and for the server
   * requests and the answered request IDs of the transport. Past it the oldest half is forgotten (a replay
   * from that far back is then delivered again), whatever the count of IDs.
   * @defaultValue 1048576 (1 MiB)
   */
  dedupeBytes?: number | undefined
  /**
   * Server requests kept for a restart (each unanswered one, or the Client's answer to it), in characters of
   * their JSON; the oldest go first, an unanswered one with a `limit-exceeded` event (a restart then no longer
   * hands it to the Client). One larger than this is delivered but not kept.
   * @defaultValue 33554432 (32 MiB)
   */
  keptRequestBytes?: number | undefined
  /**
   * Answers and notifications POSTed at once. Beyond this they wait their turn in order, so a server that
   * floods the client with requests cannot exhaust its sockets; requests never wait here. And while the Client
   * holds 8 times this many server requests unanswered (or answered, the answer not yet sent), the stream that
   * brings the next one waits (the server's writes then wait too), so a flood cannot fill the client's memory
   * with handlers in progress either.
   * @defaultValue 8
   */
  maxConcurrentAnswers?: number | undefined
  /**
   * The longest wait before a reconnect that the server may ask for, with an SSE `retry` field or a
   * `Retry-After` header, in milliseconds; a longer one is cut to this.
   * @defaultValue 60000
   */
  maxRetryMs?: number | undefined
  /**
   * Calls kept in the call journal (`transport.calls`): those in flight, and the settled ones the Client never
   * received (a previous process's, a task's) until the app forgets them. Past it the oldest settled one goes
   * first, then the oldest of all, with a `limit-exceeded` event.
   * @defaultValue 256
   */
  maxCalls?: number | undefined
  /**
   * The call journal's size, in characters of its records' JSON (a result, a task's input requests, a round's
   * answers); past it the oldest go as with `maxCalls`. A record larger than this is kept in memory only.
   * @defaultValue 4194304 (4 MiB)
   */
  callBytes?: number | undefined
}

/** Every limit, resolved: the value of each option of {@link LimitOptions}, its default where none was given. */
export type Limits = Readonly<Required<{[K in keyof LimitOptions]: NonNullable<LimitOptions[K]>}>>

/** Which limit was reached, as `limit-exceeded` events name it. */
export type LimitName = keyof LimitOptions

export const defaultLimits: Limits = Object.freeze({
  maxEventBytes: 16 * 1024 * 1024,
  maxEventIdBytes: 4096,
  dedupeBytes: 1024 * 1024,
  keptRequestBytes: 32 * 1024 * 1024,
  maxConcurrentAnswers: 8,
  maxRetryMs: 60_000,
  maxCalls: 256,
  callBytes: 4 * 1024 * 1024,
})

/** `options` over the defaults; each must be a whole number of at least 1. */
export function resolveLimits(options: unknown = {}): Limits {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError('options.limits must be an object')
  const unknown = Object.keys(options).find((key) => !(key in defaultLimits))
  if (unknown !== undefined) {
    throw new TypeError(`Unknown field limits.${unknown}: the fields are ${Object.keys(defaultLimits).join(', ')}`)
  }
  const limits = {} as Record<LimitName, number>
  for (const name of Object.keys(defaultLimits) as LimitName[]) {
    const given = (options as LimitOptions)[name]
    const value = given === undefined ? defaultLimits[name] : given
    if (!Number.isSafeInteger(value) || value < 1)
      throw new TypeError(`limits.${name} must be a whole number >= 1, got ${String(value)}`)
    limits[name] = value
  }
  return Object.freeze(limits)
}

/** [RFC 9110 field values] what a header can carry: visible Latin-1 and inner spaces and tabs. */
const headerSafe = /^[\x21-\x7E\x80-\xFF](?:[\t\x20-\x7E\x80-\xFF]*[\x21-\x7E\x80-\xFF])?$/

/** True when `value` can be sent as a header value. */
export function isHeaderValue(value: string): boolean {
  return headerSafe.test(value)
}

/** [RFC 9110 §5.1] a field name is a token. */
const fieldName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** True when `name` can be sent as a header name. */
export function isHeaderName(name: string): boolean {
  return fieldName.test(name)
}

/**
 * [spec transports, session management] a session ID is visible ASCII, 0x21 to 0x7E. Longer than 1024 characters is
 * no plausible one: the same cap holds for what the server issues, the `sessionId` option and a stored record, so a
 * session taken in one process is one the next can resume.
 */
const validSessionId = /^[\x21-\x7E]{1,1024}$/

/** What a session ID is, as the errors that refuse one say it. */
export const sessionIdRule = '1 to 1024 visible ASCII characters (0x21-0x7E)'

/** True when `id` is a session ID a server may give, a request may carry and a store may keep. */
export function isSessionId(id: unknown): id is string {
  return typeof id === 'string' && validSessionId.test(id)
}

/** True when `id` can go back to the server as `Last-Event-ID`: within the cap and a valid header value. */
export function isSendableEventId(id: string, limits: Pick<Limits, 'maxEventIdBytes'>): boolean {
  return id.length <= limits.maxEventIdBytes && isHeaderValue(id)
}
