import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {abortedError, asError} from '../errors.ts'
import type {TransportEvent, TransportMetrics} from '../events.ts'
import {parseMessages, responseIdOf} from '../wire/jsonrpc.ts'
import type {ResolvedOptions} from '../options.ts'
import {EventBatches, type SseBatch} from './event-batches.ts'
import type {OpenStreams} from './open-streams.ts'
import {watchSilence} from './silence.ts'
import type {Connection} from './stream.ts'
import type {Inbox} from '../delivery/inbox.ts'

/** How reading one connection ended, named after what happened. */
export type ReadOutcome =
  /** The stream's request was answered: nothing more to read, ever. */
  | 'completed'
  /** The connection ended or broke after bringing events, or after living long: worth a fresh series of attempts. */
  | 'broke-after-progress'
  /** The connection ended or broke before bringing anything new: a failed attempt. */
  | 'broke-before-progress'
  /** Resumed with `Last-Event-ID`, it brought no event within `resumeTimeoutMs` (since it opened, or since its last one). */
  | 'silent'

/** What reading needs from the transport. */
export interface ReaderHost {
  readonly metrics: TransportMetrics
  readonly options: Pick<ResolvedOptions, 'durability' | 'resumeTimeoutMs' | 'reconnect' | 'http' | 'limits'>
  /** The session events are read in, and whether the era has event IDs at all. */
  sessionId(): string | undefined
  stateless(): boolean
  /** Where cursors are stored: now, a little later when nothing was delivered, or now what was put off. */
  readonly cursors: Pick<OpenStreams, 'saveCursor' | 'saveCursorSoon' | 'flushSoon'>
  /**
   * Stores what a restart needs of `message`, brought by the stream of key `stream`, before it is delivered (a new
   * server request; a journaled call's task handle or `input_required` round); undefined when there is nothing to
   * store.
   */
  keepServerRequest(message: JSONRPCMessage, stream: string): Promise<void> | undefined
  /** Where messages are delivered to the Client, in order and once; a response marks its request's stream answered. */
  readonly inbox: Pick<Inbox, 'deliver'>
  emit(event: TransportEvent): void
  report(error: unknown): void
  track(task: Promise<void>): void
}

/** A batch ready for delivery once `stored` resolves (at once without it). */
interface Prepared {
  messages: JSONRPCMessage[]
  stored: Promise<unknown> | undefined
  /** It held an event that was no duplicate. */
  fresh: boolean
}

/**
 * Reads one connection of a stream: each batch of events is de-duplicated, moves the cursor, has its cursor
 * stored, is parsed, then delivered in order (docs/design.md#reading-a-connection). The store write of a batch
 * overlaps its own parsing and the delivery of the batch before it, and delivery never overtakes the write that
 * covers it. A broken connection is not an error here: the outcome says what happened.
 */
export async function readConnection(
  host: ReaderHost,
  connection: Connection,
  body: ReadableStream<Uint8Array>,
): Promise<ReadOutcome> {
  const {stream} = connection
  const openedAt = Date.now()
  const silence = watchSilence(connection, host.options.resumeTimeoutMs)
  const batches = new EventBatches(body, connection.signal, host.options.limits.maxEventBytes, () =>
    stream.exceeded('maxEventBytes', undefined),
  )
  let received = 0
  let silent = false
  try {
    let ready: Prepared | undefined
    for (;;) {
      // While a batch waits for its write, what arrived meanwhile starts its own; else wait for more.
      const batch = ready === undefined ? await batches.next() : batches.take()
      if (batch === undefined && ready === undefined) break
      const next = batch === undefined ? undefined : prepare(host, connection, batch)
      // A batch of a `retry` alone is no event: it restarts no deadline.
      if (batch !== undefined && batch.events.length > 0) {
        received += batch.events.length
        silence?.heard()
      }
      if (next?.fresh === true) stream.broughtNews()
      if (ready !== undefined) {
        await ready.stored
        await host.inbox.deliver(ready.messages, stream, connection)
        if (stream.answered) break
      }
      ready = next
    }
  } catch (error) {
    if (stream.controller.signal.aborted) throw abortedError(stream.controller.signal)
    silent = connection.endedBy === 'silent'
    // A read failure is a dropped connection; what follows is the reconnect decision's business. One
    // ended alone is none.
    if (connection.endedBy === undefined)
      host.emit({
        type: 'reconnect-failed',
        stream: stream.kind,
        requestId: stream.requestId,
        attempt: 0,
        error: asError(error),
      })
  } finally {
    silence?.release()
    await batches.close()
  }
  if (stream.answered) return 'completed'
  // The connection is gone and the stream lives on: its position must survive a crash while it reconnects.
  host.cursors.flushSoon(stream)
  if (silent) return 'silent'
  // An idle stream that lived longer than the longest backoff was healthy: its end is no failed attempt.
  const lived = Date.now() - openedAt >= host.options.reconnect.maxDelayMs
  return received > 0 || lived ? 'broke-after-progress' : 'broke-before-progress'
}

/**
 * One batch of a connection: duplicates dropped, cursor and `retry` moved, data parsed, then the store writes it
 * needs started (`stored`: when they are durable, unless durability is relaxed).
 */
function prepare(host: ReaderHost, connection: Connection, {events, retryMs}: SseBatch): Prepared {
  const {stream} = connection
  // [spec 2025-11-25 transports] `retry` is per stream.
  if (retryMs !== undefined) stream.setRetry(retryMs)
  let cursorMoved = retryMs !== undefined
  const data: string[] = []
  let withData = 0
  const sessionId = host.sessionId()
  const tracksIds = !host.stateless()
  let duplicates = 0
  for (const event of events) {
    if (event.id !== undefined && tracksIds) {
      if (!stream.arrived(event.id, sessionId)) {
        duplicates++
        host.metrics.duplicatesDropped++
        host.emit({type: 'duplicate-dropped', what: 'event', id: event.id})
        continue
      }
      cursorMoved = true
    }
    // [spec 2025-11-25 transports] a priming event (an ID, empty data) moves the cursor and carries no message.
    if (event.data === '') continue
    withData++
    if (event.event === undefined || event.event === 'message') data.push(event.data)
  }
  // Stryker disable next-line ConditionalExpression: settling a settled position changes nothing
  if (cursorMoved) stream.settlePosition()
  if (connection.resumed) host.metrics.replayedEvents += withData
  const messages: JSONRPCMessage[] = []
  for (const text of data) parseInto(host, messages, text)
  // The cursor is stored before what it covers is delivered, except when the batch brings the stream's answer
  // (the stream then has nothing left to resume) or nothing to deliver (a priming event, an ID-only ping: it can
  // wait). A plain call thus writes nothing at all (docs/design.md#what-is-persisted).
  // Stryker disable next-line ArrayDeclaration: Promise.all waits for a string as for nothing
  const writes: Promise<void>[] = []
  if (cursorMoved) {
    const answers =
      stream.requestId !== undefined && messages.some((message) => responseIdOf(message) === stream.requestId)
    if (messages.length === 0) host.cursors.saveCursorSoon(stream)
    else if (!answers) writes.push(host.cursors.saveCursor(stream))
  }
  // A server request is kept before it is delivered: a restart past its cursor must not lose it.
  for (const message of messages) {
    const kept = host.keepServerRequest(message, connection.stream.key)
    // Stryker disable next-line ConditionalExpression: Promise.all waits for undefined as for nothing
    if (kept !== undefined) writes.push(kept)
  }
  const fresh = duplicates < events.length
  // Relaxed, or nothing to wait for (most batches): delivered at once; close() waits for the writes all the same
  // (SessionRecords.settled).
  if (host.options.durability !== 'strict') return {messages, stored: undefined, fresh}
  // Stryker disable next-line ConditionalExpression,EqualityOperator: waiting for no write changes no order
  return {messages, stored: writes.length > 0 ? Promise.all(writes) : undefined, fresh}
}

/** One SSE `data` field's messages, appended to `messages`. Bad data is reported and skipped: the stream goes on. */
function parseInto(host: ReaderHost, messages: JSONRPCMessage[], data: string): void {
  try {
    parseMessages(data, messages, host.options.http.redact)
  } catch (error) {
    host.report(error)
  }
}
