import pRetry from 'p-retry'
import {abortedError} from '../errors.ts'
import {describeValue} from './option-values.ts'

/** How broken streams are reopened. Every field is optional; the defaults suit an agent on a flaky network. */
export interface ReconnectOptions {
  /**
   * Attempts in a row that may fail to reopen a stream before it is given up. An attempt fails when it
   * cannot connect, or when its connection ends without a new event and before `maxDelayMs` has passed.
   * An attempt that brings events starts the count again, so a server that polls (closes after each
   * event, 2025-11-25) is followed for as long as it makes progress, and an idle stream cut by a proxy
   * every few minutes is reopened for ever. The standalone stream is never given up while its session lives:
   * past these attempts it goes on every `maxDelayMs`, and at once when a request succeeds. A whole number >= 1.
   * @defaultValue 12 (about four minutes of outage with the other defaults)
   */
  maxAttempts?: number | undefined
  /**
   * How long a response stream may go without a working connection, in milliseconds, before its request is settled
   * `outcome-unknown` (never sent again), whatever attempts are left. A connection that brings events starts it
   * again.
   * @defaultValue 300000 (five minutes)
   */
  maxOutageMs?: number | undefined
  /**
   * Backoff before the first retry of a failed attempt, in milliseconds; jittered up to twice this. One given must
   * not exceed `maxDelayMs`, which caps every delay (the default is only capped: `maxDelayMs: 0` never waits).
   * @defaultValue 500
   */
  minDelayMs?: number | undefined
  /** The longest backoff between attempts, in milliseconds. @defaultValue 30000 */
  maxDelayMs?: number | undefined
  /** How much the backoff grows after each failed attempt. @defaultValue 2 */
  factor?: number | undefined
}

export type ReconnectPolicy = Readonly<Required<{[K in keyof ReconnectOptions]: NonNullable<ReconnectOptions[K]>}>>

const defaultPolicy: ReconnectPolicy = Object.freeze({
  maxAttempts: 12,
  maxOutageMs: 300_000,
  minDelayMs: 500,
  maxDelayMs: 30_000,
  factor: 2,
})

/**
 * `options` over `defaults` (over this transport's own): every field a finite number >= 0, `maxAttempts` a whole
 * one >= 1, and a `minDelayMs` given no larger than the longest delay.
 */
export function resolveReconnectPolicy(
  options: unknown = {},
  defaults: Partial<Record<keyof ReconnectPolicy, number>> = {},
): ReconnectPolicy {
  const fields = Object.keys(defaultPolicy)
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`options.reconnect must be an object of ${fields.join(', ')}`)
  const unknown = Object.keys(options).find((key) => !fields.includes(key))
  if (unknown !== undefined)
    throw new TypeError(`Unknown field reconnect.${unknown}: the fields are ${fields.join(', ')}`)
  const given = options as Record<string, unknown>
  const policy = {...defaultPolicy, ...defaults}
  for (const name of fields as (keyof ReconnectPolicy)[]) {
    const value = given[name] === undefined ? policy[name] : given[name]
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new TypeError(`reconnect.${name} must be a finite number >= 0, got ${describeValue(value)}`)
    }
    policy[name] = value
  }
  if (policy.maxAttempts < 1) throw new TypeError('reconnect.maxAttempts must be at least 1')
  if (!Number.isInteger(policy.maxAttempts))
    throw new TypeError(`reconnect.maxAttempts must be a whole number, got ${policy.maxAttempts}`)
  // The longest delay caps every one: a first delay given above it would be ignored in silence. A default one is
  // only capped (`maxDelayMs: 0`: no waiting).
  if (given['minDelayMs'] !== undefined && policy.minDelayMs > policy.maxDelayMs) {
    throw new TypeError(
      `reconnect.minDelayMs (${policy.minDelayMs}) must not exceed reconnect.maxDelayMs (${policy.maxDelayMs})`,
    )
  }
  return Object.freeze(policy)
}

/**
 * Runs `attempt` until it resolves, with exponential backoff and jitter between failures (p-retry), at most
 * `policy.maxAttempts` times; an attempt fails by throwing. `onFailedAttempt` hears of each failure, never of one
 * caused by `signal` aborting: a closed transport has no failed attempts to report.
 */
export function retryWithBackoff<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: ReconnectPolicy,
  signal: AbortSignal,
  onFailedAttempt: (error: Error, attemptNumber: number) => void,
): Promise<T> {
  return pRetry(attempt, {
    retries: policy.maxAttempts - 1,
    maxRetryTime: policy.maxOutageMs,
    minTimeout: policy.minDelayMs,
    maxTimeout: policy.maxDelayMs,
    factor: policy.factor,
    // Stryker disable next-line BooleanLiteral: the jitter shows only statistically
    randomize: true,
    signal,
    // p-retry calls this before it looks at the signal.
    onFailedAttempt: ({error, attemptNumber}) => {
      if (!signal.aborted) onFailedAttempt(error, attemptNumber)
    },
  })
}

/**
 * The wait before the first reconnect of a series, when the server sent no `retry`: p-retry's first delay
 * (`minDelayMs`, jittered up to twice it). p-retry itself only waits between failed attempts.
 */
export function firstBackoff(policy: ReconnectPolicy): number {
  return Math.min(Math.round(policy.minDelayMs * (1 + Math.random())), policy.maxDelayMs)
}

/** Waits `ms`, or rejects with the abort reason as soon as `signal` aborts; leaves no timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // Stryker disable next-line ConditionalExpression,BlockStatement: no caller sleeps on an aborted signal
    if (signal.aborted) {
      // Stryker disable next-line CallExpression: no caller sleeps on an aborted signal
      reject(abortedError(signal))
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(abortedError(signal))
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort)
  })
}

/**
 * [RFC 9110 10.2.3] The wait a `Retry-After` header asks for, in milliseconds (seconds, or an HTTP date), capped at
 * `maxMs`: a server must not be able to park a call for ever. Undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, maxMs: number, now = Date.now()): number | undefined {
  if (header === null) return undefined
  // Headers.get has trimmed the value already.
  const ms = /^\d+$/.test(header) ? Number(header) * 1000 : Date.parse(header) - now
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(ms, 0), maxMs)
}
