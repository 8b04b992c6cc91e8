/**
 * The simulated network: the `fetch` handed to each transport. It carries a request to a server's
 * `handle(Request)` in the same process, after a latency drawn from the schedule, and brings the answer back chunk
 * by chunk, each chunk late by its own draw, so that connections overtake one another. The schedule's wire faults
 * each hit one fetch, by its number: refused before the server sees it, lost after the server took it, a gateway's
 * status, a body cut at a byte, a body left half-open.
 */
import type {Trace, WireEvent, WireFault} from './trace.ts'

export type Handle = (request: Request) => Promise<Response>

/** One client process's side of the network: dead once the process is killed. */
export interface Endpoint {
  readonly name: string
  alive: boolean
  /** Set by the world once the process's transport closed: a fetch after it is a finding. */
  closed: boolean
}

const decoder = new TextDecoder()

const networkError = (): TypeError => new TypeError('fetch failed')

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/** A function, not a property read: see {@link isAborted}. */
const isAlive = (endpoint: Endpoint): boolean => endpoint.alive

/** A function, not a property read: TypeScript would keep the narrowing of an earlier read across an await. */
const isAborted = (signal: AbortSignal | undefined): signal is AbortSignal => signal?.aborted === true

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms))
}

/** Pulls SSE events out of the bytes a connection delivers, for the trace and the invariants. */
class EventScanner {
  #buffer = ''
  #id: string | undefined
  #data: string[] = []

  readonly onEvent: (id: string | undefined, data: string) => void

  constructor(onEvent: (id: string | undefined, data: string) => void) {
    this.onEvent = onEvent
  }

  push(bytes: Uint8Array): void {
    this.#buffer += decoder.decode(bytes, {stream: true})
    let newline = this.#buffer.search(/\r\n|\r|\n/)
    while (newline !== -1) {
      const line = this.#buffer.slice(0, newline)
      const width = this.#buffer.startsWith('\r\n', newline) ? 2 : 1
      this.#buffer = this.#buffer.slice(newline + width)
      this.#line(line)
      newline = this.#buffer.search(/\r\n|\r|\n/)
    }
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#data.length > 0 || this.#id !== undefined) this.onEvent(this.#id, this.#data.join('\n'))
      this.#id = undefined
      this.#data = []
      return
    }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') this.#id = value
    else if (field === 'data') this.#data.push(value)
  }
}

export class Network {
  /** Fetches made so far: the number the next one gets, which picks its wire fault. */
  count = 0
  /** Response bodies handed out and not yet ended, errored or cancelled. */
  openBodies = 0
  readonly #faults: ReadonlyMap<number, WireFault>
  readonly #random: () => number
  readonly #latencyMs: number
  readonly #trace: Trace
  /** How to drop each open body of a process, for its death. */
  readonly #bodies = new Map<Endpoint, Set<() => void>>()
  #handle: Handle

  constructor(options: {
    handle: Handle
    faults: ReadonlyMap<number, WireFault>
    random: () => number
    latencyMs: number
    trace: Trace
  }) {
    this.#handle = options.handle
    this.#faults = options.faults
    this.#random = options.random
    this.#latencyMs = options.latencyMs
    this.#trace = options.trace
  }

  /** Points the network at another server (a restarted one). */
  set handle(handle: Handle) {
    this.#handle = handle
  }

  #latency(): number {
    return Math.floor(this.#random() * (this.#latencyMs + 1))
  }

  /** The `fetch` of one client process. */
  fetchFor(endpoint: Endpoint): (url: string | URL, init?: RequestInit) => Promise<Response> {
    return (url, init) => this.#fetch(endpoint, url, init)
  }

  async #fetch(endpoint: Endpoint, url: string | URL, init: RequestInit = {}): Promise<Response> {
    const n = ++this.count
    const fault = this.#faults.get(n)
    const request = new Request(url, init)
    const signal = init.signal ?? undefined
    const body = typeof init.body === 'string' ? init.body : undefined
    const wire: WireEvent = this.#trace.request(n, endpoint.name, request, body, fault)
    if (endpoint.closed) this.#trace.afterClosed(endpoint.name, wire)
    await sleep(this.#latency() + (fault?.kind === 'slow' ? fault.ms : 0))
    if (isAborted(signal)) throw abortError(signal)
    if (!endpoint.alive || fault?.kind === 'refuse') {
      this.#trace.failed(wire, 'refused')
      throw networkError()
    }
    if (fault?.kind === 'status' && !fault.after) return this.#status(wire, fault)
    wire.taken = true
    const response = await this.#handle(request)
    wire.takenAt = Date.now()
    wire.status = response.status
    // The process may have died while the server worked.
    const alive = isAlive(endpoint)
    if (fault?.kind === 'lose-answer' || (fault?.kind === 'status' && fault.after) || !alive) {
      await response.body?.cancel().catch(() => undefined)
      if (fault?.kind === 'status' && alive) return this.#status(wire, fault)
      this.#trace.failed(wire, 'answer lost')
      throw networkError()
    }
    await sleep(this.#latency())
    if (isAborted(signal)) {
      await response.body?.cancel().catch(() => undefined)
      throw abortError(signal)
    }
    this.#trace.answered(wire, response.headers.get('mcp-session-id') ?? undefined)
    if (response.body === null) return response
    const cut = fault?.kind === 'cut' || fault?.kind === 'half-open' ? fault : undefined
    return new Response(this.#carry(endpoint, wire, response.body, cut, signal), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }

  #status(wire: WireEvent, fault: Extract<WireFault, {kind: 'status'}>): Response {
    const headers = new Headers({'content-type': 'text/plain'})
    if (fault.retryAfter !== undefined) headers.set('retry-after', String(fault.retryAfter))
    wire.status = fault.status
    this.#trace.answered(wire)
    return new Response('injected by the network', {status: fault.status, headers})
  }

  /** The body as the client reads it: late chunk by chunk, cut or stalled where the fault says. */
  #carry(
    endpoint: Endpoint,
    wire: WireEvent,
    source: ReadableStream<Uint8Array>,
    cut: Extract<WireFault, {kind: 'cut' | 'half-open'}> | undefined,
    signal: AbortSignal | undefined,
  ): ReadableStream<Uint8Array> {
    const reader = source.getReader()
    const scanner = new EventScanner((id, data) => this.#trace.event(wire, id, data))
    let bytes = 0
    let open = true
    this.openBodies++
    const bodies = this.#bodies.get(endpoint) ?? new Set()
    this.#bodies.set(endpoint, bodies)
    const end = (): void => {
      if (open) this.openBodies--
      open = false
      signal?.removeEventListener('abort', onAbort)
      bodies.delete(drop)
    }
    let fail: ((reason: unknown) => void) | undefined
    const stop = (reason: unknown, how: string): void => {
      if (!open) return
      this.#trace.bodyEnded(wire, how)
      void reader.cancel(reason).catch(() => undefined)
      fail?.(reason)
      end()
    }
    const onAbort = (): void => stop(abortError(signal!), 'aborted')
    const drop = (): void => stop(networkError(), 'killed')
    bodies.add(drop)
    signal?.addEventListener('abort', onAbort)
    let stalled: Promise<never> | undefined
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          fail = (reason) => {
            if (open) controller.error(reason)
          }
        },
        pull: async (controller) => {
          if (stalled !== undefined) return stalled
          let chunk: Uint8Array | undefined
          // An empty chunk (a server's flush) is no chunk: pull is not called again unless one is enqueued.
          while (chunk === undefined || chunk.length === 0) {
            const {done, value} = await reader.read().catch((error: unknown) => {
              if (open) this.#trace.bodyEnded(wire, 'error')
              end()
              throw error
            })
            if (!open) return undefined
            if (done) {
              this.#trace.bodyEnded(wire, 'end')
              end()
              controller.close()
              return undefined
            }
            chunk = value
          }
          await sleep(this.#latency())
          if (!open) return undefined
          const limit = cut === undefined ? Infinity : cut.atByte - bytes
          if (chunk.length >= limit) chunk = chunk.subarray(0, Math.max(0, limit))
          bytes += chunk.length
          if (chunk.length > 0) {
            scanner.push(chunk)
            controller.enqueue(chunk)
          }
          if (cut?.kind === 'cut' && bytes >= cut.atByte) {
            this.#trace.bodyEnded(wire, 'cut')
            void reader.cancel().catch(() => undefined)
            end()
            controller.error(networkError())
            return undefined
          }
          if (cut?.kind === 'half-open' && bytes >= cut.atByte) {
            this.#trace.bodyEnded(wire, 'half-open')
            // Never settles: the client hears nothing more until it gives up on the connection (its abort).
            stalled = new Promise<never>(() => undefined)
            return stalled
          }
          return undefined
        },
        cancel: async (reason) => {
          if (open) this.#trace.bodyEnded(wire, 'cancelled')
          end()
          await reader.cancel(reason).catch(() => undefined)
        },
      },
      {highWaterMark: 0},
    )
  }

  /** Drops every open connection, as a server process that dies. */
  dropAll(): void {
    for (const bodies of [...this.#bodies.values()]) for (const drop of [...bodies]) drop()
  }

  /** Kills `endpoint`: its process is gone, and with it every one of its connections. */
  kill(endpoint: Endpoint): void {
    endpoint.alive = false
    for (const drop of [...(this.#bodies.get(endpoint) ?? [])]) drop()
    this.#bodies.delete(endpoint)
  }
}
