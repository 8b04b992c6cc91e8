import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {AbortError} from 'p-retry'
import {retryWithBackoff, sleep, type ReconnectPolicy} from '../policy/backoff.ts'
import {isTransient} from '../policy/decision.ts'
import {asError, TransportError} from '../errors.ts'
import {exchange, httpError, isEventStream, type HttpClient} from '../wire/http.ts'
import {requestHeaders} from '../modern/headers.ts'
import {parseMessages, responseIdOf} from '../wire/jsonrpc.ts'
import type {Limits} from '../policy/limits.ts'
import {EventBatches} from '../streams/event-batches.ts'
import type {JsonObject} from '../events.ts'
import type {CallEntry} from './call.ts'

/** What polling a task needs of the transport. */
export interface TaskHost {
  readonly http: HttpClient
  /** How failed polls are retried, and how the wait grows when the server names no interval. */
  readonly policy: ReconnectPolicy
  readonly limits: Pick<Limits, 'maxRetryMs' | 'maxEventBytes'>
  /** A wire request ID never used before, in this process or an earlier one. */
  nextWireId(): Promise<number>
}

/** A task to poll: its ID, the 2026-07-28 envelope its call went with, and the interval the server asked for. */
export interface TaskHandle {
  taskId: string
  envelope: JsonObject
  pollIntervalMs: number | undefined
}

/** A settled task's outcome, as the journal records it. */
type Outcome = Pick<CallEntry, 'state' | 'result' | 'error' | 'reason'>

/**
 * Polls task `handle` with `tasks/get` (the Tasks extension, SEP-2663) until it reaches a terminal status, and
 * resolves its outcome; `onStatus` hears every status on the way. Waits the `pollIntervalMs` the server gives
 * (capped at `limits.maxRetryMs`), else a backoff that grows by `policy.factor` up to `policy.maxDelayMs`. A
 * poll that fails on the way (network, 408, 425, 429, 5xx) is retried with the reconnect backoff; a refusal, an
 * error answer or retries run out settle the call `outcome-unknown`. Rejects only when `signal` aborts.
 */
export async function pollTask(
  host: TaskHost,
  handle: TaskHandle,
  signal: AbortSignal,
  onStatus: (task: {status: string; statusMessage?: string | undefined; pollIntervalMs?: number | undefined}) => void,
): Promise<Outcome> {
  let wait = handle.pollIntervalMs ?? host.policy.minDelayMs
  for (;;) {
    // [Tasks extension, task polling] clients SHOULD respect the `pollIntervalMs` of the latest answer.
    await sleep(Math.min(wait, host.limits.maxRetryMs), signal)
    let answer: JSONRPCMessage
    try {
      answer = await retryWithBackoff(
        () => getTask(host, handle, signal),
        host.policy,
        signal,
        () => {},
      )
    } catch (error) {
      if (signal.aborted) throw error
      // Refused, or failing past `reconnect.maxAttempts`: the call settles rather than wait for ever.
      return {state: 'outcome-unknown', reason: asError(error).message}
    }
    if ('error' in answer)
      return {state: 'outcome-unknown', reason: `tasks/get ${handle.taskId} failed: ${JSON.stringify(answer.error)}`}
    const task = (answer as {result: JsonObject}).result
    const status = typeof task['status'] === 'string' ? task['status'] : 'working'
    if (status === 'completed') return {state: 'completed', result: task['result']}
    if (status === 'failed') return {state: 'failed', error: task['error']}
    if (status === 'cancelled')
      return {state: 'cancelled', reason: typeof task['statusMessage'] === 'string' ? task['statusMessage'] : undefined}
    const pollIntervalMs = typeof task['pollIntervalMs'] === 'number' ? task['pollIntervalMs'] : undefined
    onStatus({
      status,
      statusMessage: typeof task['statusMessage'] === 'string' ? task['statusMessage'] : undefined,
      pollIntervalMs,
    })
    wait = pollIntervalMs ?? Math.min(wait * host.policy.factor, host.policy.maxDelayMs)
  }
}

/** One `tasks/get`; throws what is worth trying again (the retry loop's business), resolves the JSON-RPC answer. */
async function getTask(host: TaskHost, handle: TaskHandle, signal: AbortSignal): Promise<JSONRPCMessage> {
  const id = await host.nextWireId()
  const request = {
    jsonrpc: '2.0',
    id,
    method: 'tasks/get',
    params: {taskId: handle.taskId, _meta: handle.envelope},
  } as JSONRPCMessage
  // [spec 2026-07-28 transports, standard request headers] as every request of the era.
  // They include Mcp-Protocol-Version, from the envelope.
  const {headers} = requestHeaders(request, undefined)
  const response = await exchange(host.http, {
    method: 'POST',
    sessionId: undefined,
    protocolVersion: undefined,
    headers,
    body: JSON.stringify(request),
    signal,
  })
  if (!response.ok) {
    const error = await httpError(host.http, response, `POST tasks/get ${handle.taskId}`)
    if (isTransient(response.status)) throw error
    // Refused: asking again would get the same answer. p-retry rejects with `error` itself.
    throw new AbortError(error)
  }
  // Nothing of the body is left to release: a JSON one was read, an SSE one's reader closed.
  // Stryker disable next-line ArrayDeclaration: an item that is no message is no response
  const answer = isEventStream(response.headers.get('content-type'))
    ? await answerOnStream(host, response.body!, id, signal)
    : findAnswer(parseMessages(await response.text(), [], host.http.redact), id)
  if (answer === undefined) {
    throw new TransportError(
      // Stryker disable next-line StringLiteral: only the message is seen
      'protocol',
      `The answer to tasks/get ${handle.taskId} did not contain its response`,
    )
  }
  return answer
}

/** The response to request `id` on an SSE answer, read until it comes or the stream ends. */
async function answerOnStream(
  host: TaskHost,
  body: ReadableStream<Uint8Array>,
  id: number,
  signal: AbortSignal,
): Promise<JSONRPCMessage | undefined> {
  const batches = new EventBatches(body, signal, host.limits.maxEventBytes, () => {})
  try {
    for (let batch = await batches.next(); batch !== undefined; batch = await batches.next()) {
      // Stryker disable next-line ArrayDeclaration: an item that is no message is no response
      const messages: JSONRPCMessage[] = []
      for (const event of batch.events) if (event.data !== '') parseMessages(event.data, messages, host.http.redact)
      const answer = findAnswer(messages, id)
      if (answer !== undefined) return answer
    }
    return undefined
  } finally {
    await batches.close()
  }
}

function findAnswer(messages: JSONRPCMessage[], id: number): JSONRPCMessage | undefined {
  return messages.find((message) => responseIdOf(message) === id)
}
