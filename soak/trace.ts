/**
 * `--trace FILE`: one line per thing that matters to a server request or a call, from the server and
 * from every client (the child processes' lines come through their reports): what a lost request or
 * an unexplained `outcome-unknown` is investigated with. Lines are `<ms since start> <who> <what>`
 * (the faults come last: `sort -n` the file); grep a session or a call.
 */
import {createWriteStream, type WriteStream} from 'node:fs'
import type {TransportEvent} from '../src/index.ts'

export class Trace {
  readonly #out: WriteStream
  readonly #began = Date.now()

  constructor(file: string) {
    this.#out = createWriteStream(file)
  }

  line(who: string, what: string, at = Date.now()): void {
    this.#out.write(`${at - this.#began} ${who} ${what}\n`)
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#out.end(resolve))
  }
}

/** A transport event as one trace line, or undefined for those that say nothing about a request's fate. */
export function eventLine(event: TransportEvent): string | undefined {
  switch (event.type) {
    case 'stream-opened':
      return `opened ${event.stream} ${String(event.requestId ?? '')}`
    case 'reconnect':
      return `reconnect ${event.stream} ${String(event.requestId ?? '')} ${event.branch} #${event.attempt} lei=${event.headers['last-event-id'] ?? '-'}`
    case 'reconnect-failed':
      return `reconnect-failed ${event.stream} ${String(event.requestId ?? '')} #${event.attempt} ${event.error.message.slice(0, 100)}`
    case 'stream-closed':
      return `closed ${event.stream} ${String(event.requestId ?? '')} ${event.reason}`
    case 'stream-degraded':
    case 'stream-recovered':
      return `${event.type} ${event.stream}`
    case 'duplicate-dropped':
      return event.what === 'event' ? undefined : `duplicate-dropped ${event.what} ${String(event.id)}`
    case 'cached-answer-resent':
    case 'request-restored':
      return `${event.type} ${String(event.requestId)}`
    case 'request-settled':
      return `settled ${String(event.requestId)} ${event.code}`
    case 'session-started':
    case 'session-expired':
      return `${event.type} ${event.sessionId}`
    case 'limit-exceeded':
      return `limit-exceeded ${event.limit} ${String(event.size)}`
    case 'cursor-rejected':
      return `cursor-rejected ${event.stream} ${String(event.requestId ?? '')} ${event.lastEventId}`
    default:
      return undefined
  }
}
