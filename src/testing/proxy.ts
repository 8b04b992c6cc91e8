/**
 * Any MCP server behind the faults: a Web-standard handler (the SDK's `WebStandardStreamableHTTPServerTransport`,
 * the reference server, ...) wrapped so that the faults acting on the wire alone apply to it, with the request
 * log and the answers to server requests recorded as the reference server records them.
 */
import {createParser} from 'eventsource-parser'
import {breakSoon, bytesBefore, eventsBefore, retryBefore, type ByteCut, type Cut} from './connection.ts'
import {createFaults, type FaultTaker, type TransportFaults} from './faults.ts'
import {logEntryOf, recordAnswer, requestsIn, type LoggedRequest} from './instrumentation.ts'
import {
  errorPageAsSse,
  kindOf,
  readRequest,
  refuse,
  refusals,
  wait,
  type JsonObject,
  type RequestHandler,
  type RequestId,
} from './protocol.ts'

/** A Web-standard MCP endpoint: answers a `Request` with a `Response`. */
export type WebHandler = (request: Request) => Response | Promise<Response>

/** Wraps `handler` in the faults that act on the wire alone; serve the proxy with `handlersFor` or `listen`. */
export function createFaultProxy(handler: WebHandler): FaultProxy {
  if (typeof handler !== 'function') throw new TypeError('handler must be a function (request: Request) => Response')
  return new FaultProxy(handler)
}

/** A newline byte: the SSE parser is fed line by line, so that an event's end is known to the byte. */
const newline = 0x0a

export class FaultProxy implements RequestHandler {
  /** Every request with both resumption headers and the status it got, in order. */
  readonly log: LoggedRequest[] = []
  /** Every answer the client POSTed to a server request, by request ID (duplicates included). */
  readonly answers = new Map<RequestId, JsonObject[]>()
  /** The faults that act on the wire: they need nothing of the server behind. */
  readonly faults: TransportFaults
  readonly #handler: WebHandler
  readonly #take: FaultTaker
  /** Ends each live SSE body passed through, as a dropped connection (`error`) or a closed one. */
  readonly #live = new Set<(how: 'close' | 'error') => void>()

  constructor(handler: WebHandler) {
    this.#handler = handler
    const {faults, take} = createFaults({
      disconnect: (options: {how?: 'close' | 'error' | undefined} = {}) => {
        for (const end of [...this.#live]) end(options.how ?? 'error')
      },
    })
    this.faults = faults
    this.#take = take
  }

  /** The logged requests of one HTTP method (and JSON-RPC method), in order. */
  requests(method: string, rpcMethod?: string): LoggedRequest[] {
    return requestsIn(this.log, method, rpcMethod)
  }

  /** Serves one request through the armed faults. */
  async handle(request: Request): Promise<Response> {
    const incoming = await readRequest(request.clone())
    const entry = logEntryOf(incoming)
    this.log.push(entry)
    for (const message of incoming.messages ?? [])
      if (kindOf(message) === 'response') recordAnswer(this.answers, message)
    const delay = this.#take.delay(incoming.method, entry.rpcMethod)
    if (delay !== undefined) await wait(delay.ms)
    const response = await this.#forward(request, incoming.method, entry.rpcMethod)
    entry.status = response.status
    return response
  }

  async #forward(request: Request, method: string, rpcMethod: string | undefined): Promise<Response> {
    const failure = this.#take.failure(method, rpcMethod)
    if (failure !== undefined) return refuse(refusals.injected, `HTTP ${failure.status}`, failure.status)
    const corruption = rpcMethod === 'tools/call' ? this.#take.corruption() : undefined
    // A proxy's error page where SSE was announced: the request never reaches the server.
    if (corruption?.kind === 'sse') return errorPageAsSse()
    const response = await this.#handler(request)
    const sse = response.headers.get('content-type')?.startsWith('text/event-stream') === true
    if (!sse || response.body === null || (method !== 'GET' && method !== 'POST')) return response
    const body = this.#pass(response.body, this.#take.cut(method), corruption?.kind === 'json')
    // A cut or a corruption changes the body's length; chunked, a drop is a drop and not the body's end (msw 3).
    const headers = new Headers(response.headers)
    headers.delete('content-length')
    headers.set('transfer-encoding', 'chunked')
    return new Response(body, {status: response.status, statusText: response.statusText, headers})
  }

  /** The server's SSE body, byte for byte, until `cut` ends it; `corrupt` puts an event that is no JSON first. */
  #pass(
    source: ReadableStream<Uint8Array>,
    cut: Cut | ByteCut | undefined,
    corrupt: boolean,
  ): ReadableStream<Uint8Array> {
    const reader = source.getReader()
    const encoder = new TextEncoder()
    const decoder = new TextDecoder()
    let events = 0
    let bytes = 0
    const parser = createParser({onEvent: () => events++})
    let ended = false
    let end: (how: 'close' | 'error') => void = () => {}
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        end = (how) => {
          if (ended) return
          ended = true
          this.#live.delete(end)
          // The server sees its client go, as it would on a real drop.
          void reader.cancel().catch(() => {})
          if (how === 'close') controller.close()
          else breakSoon(controller)
        }
        this.#live.add(end)
        if (corrupt) controller.enqueue(encoder.encode('data: {not json\n\n'))
      },
      pull: async (controller) => {
        const read = await reader.read().catch(() => undefined)
        // The server's own body broke: the client sees a drop.
        if (read === undefined) end('error')
        if (ended || read === undefined) return
        if (read.done) {
          ended = true
          this.#live.delete(end)
          controller.close()
          return
        }
        for (let start = 0; start < read.value.length;) {
          const at = read.value.indexOf(newline, start)
          let piece = read.value.subarray(start, at === -1 ? read.value.length : at + 1)
          start += piece.length
          const room = bytesBefore(cut) - bytes
          if (piece.length >= room) piece = piece.subarray(0, room)
          controller.enqueue(piece)
          bytes += piece.length
          parser.feed(decoder.decode(piece, {stream: true}))
          if (cut === undefined) continue
          if (bytes >= bytesBefore(cut)) {
            end(cut.how)
            return
          }
          const after = eventsBefore(cut)
          if (after !== undefined && events >= after) {
            // [spec 2025-11-25 transports] a server SHOULD send `retry` before it closes the connection.
            const retryMs = retryBefore(cut)
            if (retryMs !== undefined) controller.enqueue(encoder.encode(`retry: ${retryMs}\n\n`))
            end(cut.how)
            return
          }
        }
      },
      cancel: (reason) => {
        ended = true
        this.#live.delete(end)
        return reader.cancel(reason)
      },
    })
  }
}
