/**
 * One soak client: the SDK `Client` on `ResumableHTTPClientTransport`, making seeded tool calls and answering
 * the server's sampling and elicitation requests. It reports what happened to a {@link Sink}: each call
 * started and settled, and anything delivered to its Client twice. Used in the soak process and in the child
 * processes that get killed (which print the same reports as JSON lines).
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type ResumptionStore,
  type TransportEvent,
} from '../src/index.ts'
import type {Random} from './random.ts'
import {eventLine} from './trace.ts'

/** What an agent reports; the soak tallies it. */
export type Report =
  | {t: 'ready'; sessionId: string | undefined}
  | {t: 'start'; callId: string; tool: string; sessionId: string | undefined}
  /**
   * A call's end. A failed one says how it failed: `post` when the POST itself failed (`send` rejected: no answer,
   * or the status it got), `stream` when the transport settled it on its response stream (the status, if one caused
   * it).
   */
  | {t: 'settled'; callId: string; outcome: string; via?: 'post' | 'stream' | undefined; status?: number | undefined}
  /** A request's response stream ended otherwise than with its answer (`reason` of the `stream-closed` event). */
  | {t: 'stream-closed'; sessionId: string | undefined; requestId: string; reason: string}
  /** Something delivered to the Client a second time: a response, a server request or a progress notification. */
  | {t: 'duplicate'; what: 'response' | 'server-request' | 'progress'; key: string}
  /** A server request handed to the Client (its handler ran). */
  | {t: 'handled'; key: string}
  | {t: 'unmatched'; id: string}
  /** A line for `--trace`: a transport event, a server request handled, an answer sent. */
  | {t: 'trace'; line: string}

export type Sink = (report: Report) => void

/** The transport options of every soak client: fast retries, so that a long outage outlasts them. */
export const reconnect = {minDelayMs: 20, maxDelayMs: 250}
export const resumeTimeoutMs = 5_000

/** Longer than any soak: a call that never settles is found by the soak's own bound, not the SDK's timeout. */
const noTimeout = 3_600_000

const connectionClosed: number = ErrorCode.ConnectionClosed

/** How a call failed: its POST (`send` threw a TransportError), or its stream (a JSON-RPC error carrying the code). */
function failureOf(error: unknown): {via: 'post' | 'stream' | undefined; status: number | undefined} {
  if (isTransportError(error)) return {via: 'post', status: error.status}
  const data = (error as {data?: {code?: unknown; status?: unknown}}).data
  if (typeof data?.code !== 'string') return {via: undefined, status: undefined}
  return {via: 'stream', status: typeof data.status === 'number' ? data.status : undefined}
}

/** The transport code a failed call carries: thrown by `send`, or in the JSON-RPC error it was settled with. */
export function outcomeOf(error: unknown): string {
  if (isTransportError(error)) return error.code
  const data = (error as {data?: {code?: unknown}}).data
  if (typeof data?.code === 'string') return data.code
  // The Client closed to re-initialize after its session expired, with this call still open.
  if (error instanceof McpError && error.code === connectionClosed) return 'connection-closed'
  return `other: ${error instanceof Error ? error.message : String(error)}`.slice(0, 120)
}

export class Agent {
  readonly transport: ResumableHTTPClientTransport
  readonly #client: Client
  readonly #sink: Sink
  readonly #random: Random
  readonly #seen = new Set<string>()
  #epoch = 0
  #reconnecting: Promise<void> | undefined
  #stopped = false
  readonly #tracing: boolean

  constructor(
    url: string,
    options: {random: Random; sink: Sink; store?: ResumptionStore; name: string; trace?: boolean},
  ) {
    this.#sink = options.sink
    this.#random = options.random
    this.#tracing = options.trace === true
    this.transport = new ResumableHTTPClientTransport(new URL(url), {
      reconnect,
      resumeTimeoutMs,
      ...(options.store === undefined ? {} : {store: options.store}),
      onEvent: (event) => this.#onEvent(event),
    })
    if (this.#tracing) this.#traceAnswers()
    this.#client = new Client({name: options.name, version: '1.0.0'}, {capabilities: {sampling: {}, elicitation: {}}})
    this.#client.setRequestHandler(CreateMessageRequestSchema, async () => {
      await this.#pause()
      return {role: 'assistant' as const, model: 'soak', content: {type: 'text' as const, text: 'sampled'}}
    })
    this.#client.setRequestHandler(ElicitRequestSchema, async () => {
      await this.#pause()
      return {action: 'accept' as const, content: {answer: 'elicited'}}
    })
  }

  /** Connects (initialize, or the stored session), retrying while the server is unreachable. */
  async connect(): Promise<void> {
    for (let attempt = 0; !this.#stopped; attempt++) {
      try {
        await this.#client.connect(this.transport)
        this.#observe()
        this.#sink({t: 'ready', sessionId: this.transport.sessionId})
        return
      } catch {
        await this.#client.close().catch(() => {})
        await sleep(Math.min(1_000, 50 * 2 ** attempt))
      }
    }
  }

  /** One seeded tool call; resolves with its outcome once it settled (never rejects). */
  async call(callId: string): Promise<string> {
    if (this.#reconnecting !== undefined) await this.#reconnecting
    const {name, args} = this.#pick()
    this.#sink({t: 'start', callId, tool: name, sessionId: this.transport.sessionId})
    let outcome: string
    let failure: ReturnType<typeof failureOf> = {via: undefined, status: undefined}
    try {
      const result = await this.#client.callTool({name, arguments: {...args, callId}}, undefined, {
        timeout: noTimeout,
        onprogress: () => {},
      })
      outcome = result.isError === true ? 'tool-error' : 'result'
    } catch (error) {
      outcome = outcomeOf(error)
      failure = failureOf(error)
    }
    this.#sink({t: 'settled', callId, outcome, ...failure})
    if (outcome === 'session-expired') await this.#reinitialize()
    return outcome
  }

  async close(): Promise<void> {
    this.#stopped = true
    await this.#reconnecting
    await this.#client.close()
  }

  #pick(): {name: string; args: Record<string, unknown>} {
    const random = this.#random
    const roll = random.next()
    if (roll < 0.4) return {name: 'slow', args: {steps: random.int(1, 5), delayMs: random.int(5, 40)}}
    if (roll < 0.75)
      return {name: 'ask', args: {count: random.int(1, 2), kind: random.chance(0.5) ? 'sampling' : 'elicitation'}}
    if (roll < 0.9) return {name: 'increment', args: {}}
    return {name: 'echo', args: {text: 'soak'}}
  }

  #pause(): Promise<void> {
    // A model or a person takes a while to answer: the request stays pending meanwhile.
    return sleep(this.#random.int(0, 300))
  }

  /** The recipe of docs/errors.md: a dead session is left, and the Client initializes a new one. */
  #reinitialize(): Promise<void> {
    if (this.#stopped || this.transport.sessionId !== undefined) return Promise.resolve()
    this.#reconnecting ??= (async () => {
      await this.#client.close().catch(() => {})
      await this.connect()
    })().finally(() => {
      this.#reconnecting = undefined
    })
    return this.#reconnecting
  }

  #trace(line: string): void {
    if (this.#tracing) this.#sink({t: 'trace', line: `${this.transport.sessionId ?? '-'} ${line}`})
  }

  /** Every answer to a server request the Client sends, and how its `send` ended. */
  #traceAnswers(): void {
    const send = this.transport.send.bind(this.transport)
    this.transport.send = async (message, options) => {
      if ('method' in message || !('id' in message)) return send(message, options)
      try {
        await send(message, options)
        this.#trace(`answer-sent ${String(message.id)}`)
      } catch (error) {
        this.#trace(`answer-failed ${String(message.id)} ${outcomeOf(error)}`)
        throw error
      }
    }
  }

  #onEvent(event: TransportEvent): void {
    if (this.#tracing) {
      const line = eventLine(event)
      if (line !== undefined) this.#trace(line)
    }
    if (event.type === 'unmatched-response') this.#sink({t: 'unmatched', id: String(event.id)})
    // The soak tells why a call's answer was lost by how its stream ended (the request ID is the one on the wire).
    if (
      event.type === 'stream-closed' &&
      event.stream === 'request' &&
      event.reason !== 'completed' &&
      event.requestId !== undefined
    ) {
      this.#sink({
        t: 'stream-closed',
        sessionId: this.transport.sessionId,
        requestId: String(event.requestId),
        reason: event.reason,
      })
    }
    // A session lost while no call is in flight: re-initialize before the next call needs it.
    if (event.type === 'session-expired') queueMicrotask(() => void this.#reinitialize())
  }

  /** Wraps what the transport delivers to the Client, to see anything delivered twice. */
  #observe(): void {
    const epoch = ++this.#epoch
    const deliver = this.transport.onmessage
    this.transport.onmessage = (message, extra) => {
      this.#check(message, epoch)
      deliver?.(message, extra)
    }
  }

  #check(message: JSONRPCMessage, epoch: number): void {
    let what: 'response' | 'server-request' | 'progress'
    let key: string
    if ('method' in message && 'id' in message) {
      what = 'server-request'
      key = `${this.transport.sessionId ?? '-'}:${String(message.id)}`
      this.#sink({t: 'handled', key})
      this.#trace(`handled ${String(message.id)} ${message.method}`)
    } else if ('id' in message) {
      what = 'response'
      key = `${epoch}:${String(message.id)}`
    } else if ('method' in message && message.method === 'notifications/progress') {
      what = 'progress'
      key = `${epoch}:${String(message.params?.['progressToken'])}:${String(message.params?.['progress'])}`
    } else {
      return
    }
    const seen = `${what} ${key}`
    if (this.#seen.has(seen)) this.#sink({t: 'duplicate', what, key})
    else this.#seen.add(seen)
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
