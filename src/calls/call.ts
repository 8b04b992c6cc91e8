import type {CallState, JournaledCall, JsonObject} from '../events.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import {sha256Hex} from '../wire/sha256.ts'

/** The states after which nothing more happens to a call. */
export const settledStates: ReadonlySet<CallState> = new Set<CallState>([
  'completed',
  'failed',
  'cancelled',
  'outcome-unknown',
  // Stryker disable next-line StringLiteral: a delivered call leaves the journal at once
  'delivered',
])

/** A journaled call with what only the transport needs: never shown to the app. */
export interface CallEntry extends JournaledCall {
  /** The session of a legacy call. */
  sessionId?: string | undefined
  /** The progress token its notifications carry on the wire. */
  progressToken?: string | number | undefined
  /** The 2026-07-28 request envelope (`_meta` protocol version, client info and capabilities), for `tasks/get`. */
  envelope?: JsonObject | undefined
}

/** The digest of a call's arguments: SHA-256 (hex) of their canonical JSON, keys sorted at every level. */
export function digestArguments(args: unknown): string {
  return sha256Hex(canonicalJson(args ?? {}))
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    // The default sort orders by UTF-16 code units, as canonical JSON does.
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`
  }
  // `undefined` inside an array is `null` in JSON.
  return value === undefined ? 'null' : JSON.stringify(value)
}

/** The app's view of `entry`: the transport's own fields left out. */
export function publicView(entry: CallEntry): JournaledCall {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the fields the app must not see
  const {sessionId, progressToken, envelope, ...call} = entry
  return call
}

/** The states a stored call may be in: a delivered call has no record. */
const storedStates: ReadonlySet<unknown> = new Set<CallState>([
  'sent',
  'input-required',
  'task',
  'completed',
  'failed',
  'cancelled',
  'outcome-unknown',
])

/** Why `value` is no journaled call, or undefined when it is one. */
export function invalidCall(value: JsonValue): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'a call record that is not an object'
  const {callId, method, name, argumentsDigest, clientId, wireId, era, state, startedAt} = value
  if (
    typeof callId !== 'string' ||
    typeof method !== 'string' ||
    typeof name !== 'string' ||
    typeof argumentsDigest !== 'string'
  )
    return 'a call without its ID, method, name or digest'
  if (typeof clientId !== 'string' && typeof clientId !== 'number') return 'a call without the Client request ID'
  if (!Number.isSafeInteger(wireId) || (wireId as number) < 0 || typeof startedAt !== 'number')
    return 'a call without its wire ID or start'
  if (era !== 'legacy' && era !== 'modern') return 'a call of no era'
  if (!storedStates.has(state)) return 'a call in no known state'
  const task = value['task'] as JsonObject | undefined
  if (state === 'task' && typeof task?.['taskId'] !== 'string') return 'a task call without its task ID'
  return undefined
}
