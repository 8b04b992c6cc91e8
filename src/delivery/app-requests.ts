import type {JSONRPCMessage, JSONRPCResponse} from '@modelcontextprotocol/sdk/types.js'
import {abortedError, asError, type TransportError} from '../errors.ts'
import {methodOf, responseIdOf, type JsonRpcId} from '../wire/jsonrpc.ts'

/** The IDs of the app's own requests: strings, which the Client's numbered IDs never equal. */
const prefix = 'mcp-resumable-http/request-'

/** True for the ID of a request the app sent with `transport.request`: its answer goes to the app. */
export function isAppRequestId(id: JsonRpcId | undefined): boolean {
  return typeof id === 'string' && id.startsWith(prefix)
}

/** A request of the app's own, for `transport.request`: the JSON-RPC ID is the transport's. */
export interface AppRequest {
  readonly method: string
  /** @defaultValue none */
  readonly params?: Readonly<Record<string, unknown>> | undefined
}

/** How `transport.request` sends one request. */
export interface AppRequestOptions {
  /** Stops waiting: the request rejects with `aborted`, its POST and stream end (the server is not told). @defaultValue none */
  readonly signal?: AbortSignal | undefined
  /** Headers of this request's POST alone; the protocol's own cannot be overridden. @defaultValue none */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

interface Waiting {
  resolve(answer: JSONRPCResponse): void
  reject(error: unknown): void
}

/** The progress token a request names, if any. */
function progressTokenOf(message: JSONRPCMessage): unknown {
  return (message as {params?: {_meta?: {progressToken?: unknown}}}).params?._meta?.progressToken
}

/**
 * Requests the app sends itself (`transport.request`), beside the Client's: each answer resolves its caller's
 * promise and never reaches the Client, nor does the progress of such a request (its token is the app's), and a
 * settlement (the stream lost, `close()`) rejects it with its TransportError. Memory: one entry per request in flight.
 */
export class AppRequests {
  readonly #waiting = new Map<string, Waiting>()
  /** The progress tokens of the requests in flight. */
  readonly #tokens = new Set<unknown>()
  #next = 0

  /**
   * Gives `request` (a method and params) a new ID, and the promise of its answer; `signal` rejects it with
   * `aborted`. Returns the message to send.
   */
  open(
    request: {method: string; params?: object | undefined},
    signal: AbortSignal | undefined,
  ): {message: JSONRPCMessage; id: string; answer: Promise<JSONRPCResponse>} {
    const id = `${prefix}${++this.#next}`
    const {method, params} = request
    const message = {jsonrpc: '2.0', id, method, ...(params === undefined ? {} : {params})} as JSONRPCMessage
    const token = progressTokenOf(message)
    if (token !== undefined) this.#tokens.add(token)
    const answer = new Promise<JSONRPCResponse>((resolve, reject) => {
      const onAbort = (): void => this.fail(id, abortedError(signal!))
      signal?.addEventListener('abort', onAbort, {once: true})
      const done = (): void => {
        this.#waiting.delete(id)
        this.#tokens.delete(token)
        signal?.removeEventListener('abort', onAbort)
      }
      this.#waiting.set(id, {
        resolve: (value) => {
          done()
          resolve(value)
        },
        reject: (error) => {
          done()
          reject(asError(error))
        },
      })
    })
    if (signal?.aborted === true) this.fail(id, abortedError(signal))
    return {message, id, answer}
  }

  /**
   * Takes `message` when it answers an app request (resolves that request, or rejects it with `settled`, the failure
   * a settlement carries) or is the progress of one: true. Anything else is the Client's: false.
   */
  take(message: JSONRPCMessage, settled: TransportError | undefined): boolean {
    if (methodOf(message) === 'notifications/progress')
      return this.#tokens.has((message as {params?: {progressToken?: unknown}}).params?.progressToken)
    const id = responseIdOf(message)
    const waiting = typeof id === 'string' ? this.#waiting.get(id) : undefined
    if (waiting === undefined) return isAppRequestId(id)
    if (settled === undefined) waiting.resolve(message as JSONRPCResponse)
    else waiting.reject(settled)
    return true
  }

  /** Request `id` failed before an answer came (its POST, or its signal): its caller hears `error`. */
  fail(id: string, error: unknown): void {
    this.#waiting.get(id)?.reject(error)
  }
}
