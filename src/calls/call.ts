import type {JsonValue} from '../persistence/store.ts'
import {sha256Hex} from '../wire/sha256.ts'

/**
 * What the call journal knows of one call ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#the-call-journal | the call journal}):
 *
 * - `sent`: on the wire, no answer yet.
 * - `input-required`: the server asked for input (an `input_required` result, SEP-2322); `resume` holds what
 *   continues the round.
 * - `task`: the server answered with a task handle (`resultType: 'task'`): the transport polls `tasks/get`.
 * - `completed`, `failed`, `cancelled`: the outcome, for a call whose answer the Client never received (a previous
 *   process's, a task's): `result`, or `error` (the JSON-RPC error).
 * - `outcome-unknown`: it may have run; nothing can say how it ended (`reason` says why).
 * - `delivered`: the Client received the answer; the record is gone (the last `call-changed` event says so).
 */
export type CallState =
  'sent' | 'input-required' | 'task' | 'completed' | 'failed' | 'cancelled' | 'outcome-unknown' | 'delivered'

/** The states after which nothing more happens to a call. */
export const settledStates: ReadonlySet<CallState> = new Set<CallState>([
  'completed',
  'failed',
  'cancelled',
  'outcome-unknown',
  // Stryker disable next-line StringLiteral: a delivered call leaves the journal at once, its waiters settled as it goes (journal.ts `#remove`)
  'delivered',
])

/** A JSON object, as the journal keeps parts of messages. */
export type JsonObject = {[key: string]: JsonValue}

/** One journaled call as the app sees it (`transport.calls.list()`, `call-changed` events). */
export interface JournaledCall {
  /** Stable for the call's whole life: across restarts and across the legs of its `input_required` rounds. */
  readonly callId: string
  readonly method: string
  /** The tool's name. */
  readonly name: string
  /**
   * SHA-256 (hex) of the call's `arguments` as canonical JSON (keys sorted): never the arguments themselves,
   * which may hold secrets. Compare with {@link digestArguments}.
   */
  readonly argumentsDigest: string
  /** The request ID the Client gave its latest leg (the wire carried `wireId`). */
  readonly clientId: string | number
  /** The wire request ID of its latest leg. */
  readonly wireId: number
  /** `legacy`: 2025 revisions (sessions, resumable streams); `modern`: 2026-07-28 on. */
  readonly era: 'legacy' | 'modern'
  readonly state: CallState
  /** When it was first sent (ms since the epoch). */
  readonly startedAt: number
  /** True when a previous process (or page) sent it: its answer cannot reach this process's Client. */
  readonly inherited: boolean
  /** The latest progress notification's fields. */
  readonly progress?: {progress: number; total?: number | undefined; message?: string | undefined} | undefined
  /** The task handle and its latest status (`task` state). */
  readonly task?:
    | {taskId: string; status: string; statusMessage?: string | undefined; pollIntervalMs?: number | undefined}
    | undefined
  /**
   * In an `input_required` round: spread it into the call's params to continue the round without asking again
   * (`client.callTool({name, arguments, ...call.resume})`): the server's `requestState`, echoed byte for byte,
   * and `inputResponses`, the answers already given (none yet in the `input-required` state).
   */
  readonly resume?: {requestState?: string | undefined; inputResponses?: JsonObject | undefined} | undefined
  /** The input the server asked for in the current round (`input-required`). */
  readonly inputRequests?: JsonObject | undefined
  readonly result?: JsonValue | undefined
  readonly error?: JsonValue | undefined
  /** Why the outcome is unknown. */
  readonly reason?: string | undefined
}

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
