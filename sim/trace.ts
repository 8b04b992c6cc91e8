/**
 * What one schedule did, kept as data while it runs (cheap) and written out only for a failing schedule: the wire
 * (every fetch with both resumption headers, its fault, status and the events it delivered), the faults drawn,
 * and the clients' side (calls, server requests handled, answers).
 */
import {epoch} from './clock.ts'

/** What one fetch suffers (the nth of the schedule, counted over every process). */
export type WireFault =
  | {kind: 'refuse'}
  | {kind: 'lose-answer'}
  | {kind: 'status'; status: number; retryAfter: number | undefined; after: boolean}
  | {kind: 'cut'; atByte: number}
  | {kind: 'half-open'; atByte: number}
  | {kind: 'slow'; ms: number}

/** A JSON-RPC message as the sim looks at it. */
export interface Message {
  id?: string | number | null
  method?: string
  params?: Record<string, unknown>
  result?: unknown
  error?: unknown
}

/** A delivered SSE event: its ID, and its message when its data was JSON. */
export interface DeliveredEvent {
  at: number
  seq: number
  id: string | undefined
  message: Message | undefined
}

/** One fetch, from its start to the end of its body. */
export interface WireEvent {
  n: number
  process: string
  at: number
  /** The order things were recorded in: several happen in one virtual millisecond. */
  seq: number
  answeredSeq: number
  method: string
  sessionId: string | undefined
  lastEventId: string | undefined
  messages: Message[]
  fault: WireFault | undefined
  /** The server got it (a fault may still have lost the answer). */
  taken: boolean
  takenAt: number | undefined
  status: number | undefined
  /** When the client got the answer's headers. */
  answeredAt: number | undefined
  /** The session the answer named (the request's, or a new one minted on initialize). */
  answerSessionId: string | undefined
  events: DeliveredEvent[]
  ended: string | undefined
  endedAt: number | undefined
  endedSeq: number
}

function parse(text: string): Message[] {
  try {
    const value: unknown = JSON.parse(text)
    return (Array.isArray(value) ? value : [value]) as Message[]
  } catch {
    return []
  }
}

const describeMessage = (message: Message | undefined): string => {
  if (message === undefined) return '(no JSON)'
  if (message.method !== undefined) {
    const name = message.params?.['name']
    const progress = message.params?.['progress']
    const detail = typeof name === 'string' ? ` ${name}` : typeof progress === 'number' ? ` ${progress}` : ''
    return `${message.method}${detail}${message.id === undefined ? '' : ` #${String(message.id)}`}`
  }
  return `${message.error === undefined ? 'result' : 'error'} #${String(message.id)}`
}

/** A transport event or a ledger entry, on one line, without the bulky parts. */
function describeNote(what: unknown): string {
  return JSON.stringify(what, (key, value: unknown) =>
    key === 'error' && value instanceof Error
      ? `${value.name}: ${value.message}`
      : key === 'message' && typeof value === 'object'
        ? describeMessage(value as Message)
        : value,
  )
}

export class Trace {
  readonly wire: WireEvent[] = []
  /** What happened beside the wire, in order: `[at, seq, who, what]`, written out only for a failing schedule. */
  readonly notes: [number, number, string, unknown][] = []
  #seq = 0
  /** Fetches a process made after its transport closed. */
  readonly afterClose: {process: string; n: number}[] = []

  note(who: string, what: unknown): void {
    this.notes.push([Date.now(), this.#seq++, who, what])
  }

  request(
    n: number,
    process: string,
    request: Request,
    body: string | undefined,
    fault: WireFault | undefined,
  ): WireEvent {
    const event: WireEvent = {
      n,
      process,
      at: Date.now(),
      seq: this.#seq++,
      answeredSeq: 0,
      method: request.method,
      sessionId: request.headers.get('mcp-session-id') ?? undefined,
      lastEventId: request.headers.get('last-event-id') ?? undefined,
      messages: body === undefined ? [] : parse(body),
      fault,
      taken: false,
      takenAt: undefined,
      status: undefined,
      answeredAt: undefined,
      answerSessionId: undefined,
      events: [],
      ended: undefined,
      endedAt: undefined,
      endedSeq: 0,
    }
    this.wire.push(event)
    return event
  }

  afterClosed(process: string, wire: WireEvent): void {
    this.afterClose.push({process, n: wire.n})
  }

  failed(wire: WireEvent, how: string): void {
    wire.ended = how
    wire.endedAt = Date.now()
    wire.endedSeq = this.#seq++
  }

  answered(wire: WireEvent, sessionId?: string): void {
    wire.answeredAt = Date.now()
    wire.answeredSeq = this.#seq++
    wire.answerSessionId = sessionId ?? wire.sessionId
  }

  event(wire: WireEvent, id: string | undefined, data: string): void {
    const message = data === '' ? undefined : parse(data)[0]
    wire.events.push({at: Date.now(), seq: this.#seq++, id, message})
  }

  bodyEnded(wire: WireEvent, how: string): void {
    if (wire.ended !== undefined) return
    wire.ended = how
    wire.endedAt = Date.now()
    wire.endedSeq = this.#seq++
  }

  /** The trace as text: the wire and the notes, in the order they happened. */
  format(): string {
    const lines: [number, number, string][] = []
    for (const [at, seq, who, what] of this.notes)
      lines.push([at, seq, `${who} ${typeof what === 'string' ? what : describeNote(what)}`])
    for (const wire of this.wire) {
      const headers = [
        wire.sessionId === undefined ? 'no session' : `Mcp-Session-Id ${wire.sessionId}`,
        ...(wire.lastEventId === undefined ? [] : [`Last-Event-ID ${wire.lastEventId}`]),
      ].join(', ')
      const what = wire.messages.map(describeMessage).join(' + ')
      const fault = wire.fault === undefined ? '' : ` [fault ${JSON.stringify(wire.fault)}]`
      lines.push([wire.at, wire.seq, `#${wire.n} ${wire.process} ${wire.method} ${what} (${headers})${fault}`])
      if (wire.answeredAt !== undefined)
        lines.push([wire.answeredAt, wire.answeredSeq, `  #${wire.n} <- ${wire.status}`])
      for (const event of wire.events)
        lines.push([event.at, event.seq, `  #${wire.n} <- event ${event.id ?? '-'}: ${describeMessage(event.message)}`])
      if (wire.endedAt !== undefined) lines.push([wire.endedAt, wire.endedSeq, `  #${wire.n} ${wire.ended}`])
    }
    lines.sort((a, b) => a[1] - b[1])
    return lines.map(([at, , text]) => `${String(at - epoch).padStart(7)} ms ${text}`).join('\n')
  }
}
