/**
 * One HTTP connection carrying an SSE stream: what it writes, and how a fault cuts it.
 */
/** An event as stored in a stream's buffer. `data` empty is a priming event. */
export interface WireEvent {
  readonly id: string
  readonly data: string
}

/**
 * Cuts the next SSE connection after `after` events (replayed ones included). `close` ends the response
 * (a server that polls, SEP-1699); `error` breaks the connection (a network drop, `TypeError: terminated` in
 * Node's fetch; over real sockets the socket is destroyed).
 */
export interface Cut {
  /** Events written on the connection before it is cut. */
  after: number
  /** A graceful end (`close`) or a broken connection (`error`). */
  how: 'close' | 'error'
  /** `retry` written with the last event before the cut, as a polling server does. @defaultValue none */
  retryMs?: number | undefined
  /** Only a connection opened by this HTTP method takes the fault. @defaultValue either */
  on?: 'POST' | 'GET' | undefined
}

const encoder = new TextEncoder()

/** Writes SSE frames into one response body; `onGone` runs once when the client can no longer read it. */
export class Connection {
  #written = 0
  #gone = false
  readonly #controller: ReadableStreamDefaultController<Uint8Array>
  readonly #cut: Cut | undefined
  readonly #onGone: () => void

  constructor(controller: ReadableStreamDefaultController<Uint8Array>, cut: Cut | undefined, onGone: () => void) {
    this.#controller = controller
    this.#cut = cut
    this.#onGone = onGone
  }

  /** Writes one event; false when the connection is gone (cut now, or earlier): the event stays buffered. */
  write(event: WireEvent): boolean {
    const cut = this.#cut
    const last = cut !== undefined && this.#written + 1 === cut.after
    // [spec 2025-11-25 transports] a server SHOULD send `retry` before it closes the connection.
    const retry = last && cut.retryMs !== undefined ? `retry: ${cut.retryMs}\n` : ''
    if (!this.raw(`${retry}id: ${event.id}\ndata: ${event.data}\n\n`)) return false
    this.#written++
    if (cut !== undefined && this.#written >= cut.after) {
      if (cut.how === 'close') this.close()
      else this.error()
      return false
    }
    return true
  }

  /** Writes text as is (a `retry` line, a malformed frame). False when the client has gone. */
  raw(text: string): boolean {
    if (this.#gone) return false
    try {
      this.#controller.enqueue(encoder.encode(text))
      return true
    } catch {
      this.#left()
      return false
    }
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
    // A drop loses what is still in flight: let the client read what was written first, as on a real socket.
    setTimeout(() => {
      try {
        this.#controller.error(new TypeError('terminated'))
      } catch {
        // Already cancelled by the client.
      }
    }, 5)
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
