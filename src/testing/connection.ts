/**
 * One HTTP connection carrying an SSE stream: what it writes, and how a fault cuts it.
 */
/** An event as stored in a stream's buffer. `data` empty is a priming event. */
export interface WireEvent {
  readonly id: string
  readonly data: string
}

/** What every cut has: how the connection ends, and which connection takes it. */
interface CutBase {
  /** A graceful end (`close`) or a broken connection (`error`). */
  how: 'close' | 'error'
  /** Only a connection opened by this HTTP method takes the fault. @defaultValue either */
  on?: 'POST' | 'GET' | undefined
}

/**
 * Cuts the next SSE connection after `after` events (replayed ones included). `close` ends the response
 * (a server that polls, SEP-1699); `error` breaks the connection (a network drop, `TypeError: terminated` in
 * Node's fetch; over real sockets the socket is destroyed).
 */
export interface Cut extends CutBase {
  /** Events written on the connection before it is cut. */
  after: number
  /** `retry` written with the last event before the cut, as a polling server does. @defaultValue none */
  retryMs?: number | undefined
}

/** Cuts the next SSE connection after `afterBytes` bytes of its body, wherever they end (mid-event, as a real drop may). */
export interface ByteCut extends CutBase {
  /** Bytes of the body written before it is cut. */
  afterBytes: number
}

/** The events a cut lets through, if it counts events. */
export const eventsBefore = (cut: Cut | ByteCut | undefined): number | undefined =>
  cut !== undefined && 'after' in cut ? cut.after : undefined

/** The `retry` (ms) a cut writes before it ends the connection, if any. */
export const retryBefore = (cut: Cut | ByteCut | undefined): number | undefined =>
  cut !== undefined && 'after' in cut ? cut.retryMs : undefined

/** The bytes a cut lets through (`Infinity` if it counts events, or there is none). */
export const bytesBefore = (cut: Cut | ByteCut | undefined): number =>
  cut !== undefined && 'afterBytes' in cut ? cut.afterBytes : Number.POSITIVE_INFINITY

const encoder = new TextEncoder()

/** Errors a response body as a network drop does (`TypeError: terminated`, as undici reports one). */
export function breakSoon(controller: ReadableStreamDefaultController<Uint8Array>): void {
  // A drop loses what is still in flight: let the client read what was written first, as on a real socket.
  setTimeout(() => {
    try {
      controller.error(new TypeError('terminated'))
    } catch {
      // Already cancelled by the client.
    }
  }, 5)
}

/** Writes SSE frames into one response body; `onGone` runs once when the client can no longer read it. */
export class Connection {
  #written = 0
  #bytes = 0
  #gone = false
  readonly #controller: ReadableStreamDefaultController<Uint8Array>
  readonly #cut: Cut | ByteCut | undefined
  readonly #onGone: () => void

  constructor(
    controller: ReadableStreamDefaultController<Uint8Array>,
    cut: Cut | ByteCut | undefined,
    onGone: () => void,
  ) {
    this.#controller = controller
    this.#cut = cut
    this.#onGone = onGone
  }

  /** Writes one event; false when the connection is gone (cut now, or earlier): the event stays buffered. */
  write(event: WireEvent): boolean {
    const cut = this.#cut
    const after = eventsBefore(cut)
    const last = this.#written + 1 === after
    // [spec 2025-11-25 transports] a server SHOULD send `retry` before it closes the connection.
    const retryMs = retryBefore(cut)
    const retry = last && retryMs !== undefined ? `retry: ${retryMs}\n` : ''
    if (!this.raw(`${retry}id: ${event.id}\ndata: ${event.data}\n\n`)) return false
    this.#written++
    if (after === undefined || this.#written < after) return true
    this.#end(cut!.how)
    return false
  }

  /** Writes text as is (a `retry` line, a malformed frame). False when the client has gone, or a cut took it. */
  raw(text: string): boolean {
    if (this.#gone) return false
    const encoded = encoder.encode(text)
    const room = bytesBefore(this.#cut) - this.#bytes
    const bytes = encoded.length > room ? encoded.subarray(0, room) : encoded
    try {
      this.#controller.enqueue(bytes)
    } catch {
      this.#left()
      return false
    }
    this.#bytes += bytes.length
    if (bytes.length === room) this.#end(this.#cut!.how)
    // Whole, the text reached the client even when the cut came right after it.
    return bytes === encoded
  }

  /** Ends the response: the client sees the stream end without its response (it may resume). */
  close(): void {
    if (this.#gone) return
    this.#left()
    try {
      this.#controller.close()
    } catch {
      // The client cancelled it first.
    }
  }

  /** Breaks the connection, as a network failure would. */
  error(): void {
    if (this.#gone) return
    this.#left()
    breakSoon(this.#controller)
  }

  #end(how: 'close' | 'error'): void {
    if (how === 'close') this.close()
    else this.error()
  }

  /** The client cancelled the body (it closed, or aborted the request). */
  cancelled(): void {
    this.#left()
  }

  #left(): void {
    if (this.#gone) return
    this.#gone = true
    this.#onGone()
  }
}
