/**
 * The server side of the boundary (docs/design.md#what-a-server-must-do): per-session state (identity, version,
 * pending server-to-client requests) kept apart from per-stream event buffers. A session outlives its streams; a
 * stream may die and its session go on.
 */
import {Connection, type ByteCut, type Cut, type WireEvent} from './connection.ts'
import {sseHeaders, type JsonObject, type RequestId} from './protocol.ts'
import {SessionTasks} from './tasks.ts'

/** An event in a buffer, tagged with the stream that emitted it. */
export interface StoredEvent extends WireEvent {
  readonly stream: EventStream
}

/** One SSE stream: the response stream of a POST, or a standalone GET stream. */
export class EventStream {
  /** Events in the order emitted: what a resumption of this stream replays from. */
  readonly events: StoredEvent[] = []
  /** The live connection, if a client is reading this stream now. */
  connection: Connection | undefined
  /** The response has been written: a resumption replays and then ends. */
  finished = false
  /** Events written live (not replayed) on a connection. */
  sent = 0
  /** Events written again after a `Last-Event-ID`. */
  replayed = 0
  readonly id: string
  readonly kind: 'request' | 'standalone'
  readonly session: Session
  /** The request whose answer this stream carries (a POST stream). */
  readonly requestId: RequestId | undefined

  constructor(id: string, kind: 'request' | 'standalone', session: Session, requestId?: RequestId) {
    this.id = id
    this.kind = kind
    this.session = session
    this.requestId = requestId
  }

  /**
   * A response streaming `replay` first, then whatever this stream emits while the connection is its reader;
   * it ends after the replay when the stream is finished already. `cut` (a fault) ends it after that many events.
   */
  open(replay: readonly WireEvent[], cut: Cut | ByteCut | undefined): Response {
    let connection: Connection | undefined
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        // msw 3 sends a mocked response's head with its first chunk: an empty one sends it now, as
        // serveNodeRequest's flushHeaders() does, for a stream that may stay silent (a standalone
        // GET, a resumption with nothing to replay).
        controller.enqueue(new Uint8Array(0))
        const opened = new Connection(controller, cut, () => {
          if (this.connection === opened) this.connection = undefined
        })
        connection = opened
        // One reader per stream: a new connection replaces the old one.
        this.connection?.close()
        this.connection = opened
        for (const event of replay) if (!this.write(event, true)) return
        if (this.finished) opened.close()
      },
      cancel: () => {
        connection?.cancelled()
      },
    })
    return new Response(body, {headers: sseHeaders})
  }

  /** Writes `event` on the live connection, if any; false when nobody read it (it stays buffered). */
  write(event: WireEvent, replay: boolean): boolean {
    if (this.connection?.write(event) !== true) return false
    if (replay) this.replayed++
    else this.sent++
    return true
  }
}

/** A server-to-client request waiting for the client's answer. */
export interface PendingRequest {
  readonly message: JsonObject
  /** The stream it was first sent on (none: a JSON answer while no standalone stream was open). */
  readonly streamId: string | undefined
  readonly resolve: (answer: JsonObject) => void
}

export class Session {
  readonly streams = new Map<string, EventStream>()
  /** Every event of the session in the order emitted, each tagged with its stream. */
  readonly log: StoredEvent[] = []
  /**
   * Pending server-to-client requests live on the session, not on the stream that carried them
   * (docs/design.md#what-a-server-must-do).
   */
  readonly pending = new Map<RequestId, PendingRequest>()
  /** The session's tasks (2025-11-25): another session's are unknown here. */
  readonly tasks = new SessionTasks()
  /** Per-session counter: event IDs and server request IDs are unique within the session. */
  nextEvent = 0
  nextServerRequest = 0
  /** When the last request naming this session arrived (for idle expiry). */
  lastActive: number
  /** The standalone streams opened so far; messages unrelated to a request go to the latest. */
  latestStandalone: EventStream | undefined
  /** Undefined for a server that mints no session. */
  readonly id: string | undefined
  readonly protocolVersion: string

  constructor(id: string | undefined, protocolVersion: string, now: number) {
    this.id = id
    this.protocolVersion = protocolVersion
    this.lastActive = now
  }

  /** Closes every live connection of the session (`error`: as a network drop). */
  disconnect(how: 'close' | 'error', streamId?: string): void {
    for (const stream of this.streams.values()) {
      if (streamId !== undefined && stream.id !== streamId) continue
      if (how === 'close') stream.connection?.close()
      else stream.connection?.error()
    }
  }
}
