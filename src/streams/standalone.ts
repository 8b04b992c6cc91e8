import type {TransportError} from '../errors.ts'
import type {TransportEvent} from '../events.ts'
import type {ResolvedOptions} from '../options.ts'
import {ChildAbort} from '../policy/abort.ts'
import {sleep} from '../policy/backoff.ts'
import type {OpenStreams} from './open-streams.ts'
import type {Opening, Stream, StreamInit} from './stream.ts'

/** How long the resumed standalone stream of a re-attached session reads its replay before it re-attaches without cursor. */
const replayReadMs = 250

/** What the standalone stream's policy needs of the transport. */
export interface StandaloneHost {
  readonly options: Pick<ResolvedOptions, 'reconnect'>
  readonly streams: Pick<OpenStreams, 'add' | 'has' | 'get'>
  /** The transport's lifetime while it is started. */
  lifetime: () => AbortSignal | undefined
  /** [spec 2026-07-28] the era has no GET stream. */
  stateless: () => boolean
  /** Follows `stream` from its first connection to its end, in the background (src/streams/lifecycle.ts). */
  follow: (stream: Stream, opening: Opening) => void
  emit: (event: TransportEvent) => void
  report: (error: unknown) => void
}

/**
 * The standalone GET stream's policy (docs/design.md#the-state-machine): whether it is opened, when its next
 * connection goes without cursor so that the session's server requests come again there, and what it does once
 * it ran out of fast attempts. Its connections live as any stream's do (src/streams/lifecycle.ts).
 */
export class Standalone {
  readonly #host: StandaloneHost
  /** The server offers the stream in this session: a 405 to its GET says it does not. */
  #offered = true
  /**
   * A response stream ended without its answer: the server requests its tool sent on it come back only to a stream
   * attached without `Last-Event-ID`, so the standalone stream's next reconnect is a session resumption.
   */
  #reemissionWanted = false
  /**
   * A stored session was re-attached: its standalone stream, resumed, re-attaches without cursor once it has read
   * its replay (the previous process may have left response streams it never recorded).
   */
  #replayThenReattach = false
  /** Since when the stream has been out of fast attempts (docs/failures.md). */
  #degradedSince: number | undefined
  /** Wakes the degraded stream's wait. */
  #wake: ChildAbort | undefined

  constructor(host: StandaloneHost) {
    this.#host = host
  }

  /** Opens the standalone GET stream, unless it is open, not offered, or the era has none. */
  open(opening: Opening, stored: StreamInit['stored']): void {
    const host = this.#host
    const lifetime = host.lifetime()
    if (lifetime === undefined || host.stateless() || !this.#offered || host.streams.has('standalone')) return
    const stream = host.streams.add(lifetime, {
      kind: 'standalone',
      requestId: undefined,
      call: undefined,
      orphan: false,
      stored,
    })
    this.#degradedSince = undefined
    if (opening === 'reattach') this.#replayThenReattach = true
    host.follow(stream, opening)
  }

  /** A new session started: its server may offer the stream, whatever the last one said. */
  newSession(): void {
    this.#offered = true
  }

  /** The server offers no GET stream (`not-offered`): the standalone one is never opened again in this session. */
  notOffered(stream: Stream): void {
    if (stream.kind === 'standalone') this.#offered = false
  }

  /**
   * A request's response stream ended (or was never read) without its answer: the standalone stream's next
   * connection goes without its cursor, and one that has a connection (open, or on its way) ends it to re-attach
   * at once (unless not `now`), lest the tool's server requests wait for its next break, which may never come.
   */
  wantReemission(now = true): void {
    this.#reemissionWanted = true
    // Its connection, from its GET to the end of its reading, ends: the stream re-attaches at once.
    if (now) this.#host.streams.get('standalone')?.endConnection('reattach')
  }

  /** DECIDING the next connection of `stream`: the standalone one drops its cursor when re-emission is wanted. */
  deciding(stream: Stream): void {
    if (stream.kind === 'standalone' && this.#reemissionWanted) stream.dropCursor()
  }

  /** [docs/design.md#what-a-server-must-do] a GET without Last-Event-ID gets every pending server request again. */
  connecting(stream: Stream, lastEventId: string | undefined): void {
    if (stream.kind === 'standalone' && lastEventId === undefined)
      this.#reemissionWanted = this.#replayThenReattach = false
  }

  /** A connection of `stream` opened: a degraded stream has recovered; a re-attached session's reads its replay. */
  opened(stream: Stream): void {
    if (stream.kind !== 'standalone') return
    if (this.#degradedSince !== undefined) {
      this.#host.emit({type: 'stream-recovered', stream: stream.kind, downMs: Date.now() - this.#degradedSince})
      this.#degradedSince = undefined
    }
    if (!this.#replayThenReattach) return
    this.#replayThenReattach = false
    // [docs/design.md#what-is-persisted] a crash within quietCursorWriteMs of a POST's priming event left no record
    // of its stream: what its tool asked comes back only to a stream attached without Last-Event-ID.
    void sleep(replayReadMs, stream.controller.signal).then(
      () => this.wantReemission(),
      () => {},
    )
  }

  /**
   * DEGRADED: the standalone `stream` ran out of fast attempts (`error`). Said once (an event and `onerror`), then
   * `attempt` is tried every `maxDelayMs`, or at once when a request succeeds ({@link wake}), until one resolves.
   */
  async degrade<T>(stream: Stream, error: TransportError, attempt: () => Promise<T>): Promise<T> {
    const host = this.#host
    const cause = error.cause ?? error
    this.#degradedSince ??= Date.now()
    host.emit({type: 'stream-degraded', stream: stream.kind, error: cause instanceof Error ? cause : error})
    host.report(cause)
    for (;;) {
      // Woken early by a request that succeeded, or aborted: p-retry then throws the abort before any attempt.
      const wake = (this.#wake = new ChildAbort(stream.controller.signal))
      await sleep(host.options.reconnect.maxDelayMs, wake.signal).then(
        () => wake.release(),
        () => wake.release(),
      )
      try {
        return await attempt()
      } catch {
        stream.controller.signal.throwIfAborted()
      }
    }
  }

  /** A request succeeded: the degraded stream's wait for its next attempt ends at once. */
  wake(): void {
    this.#wake?.abort()
  }
}
