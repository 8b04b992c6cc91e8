import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {notLoaded, unknownCall} from '../errors.ts'
import type {TransportEvent} from '../events.ts'
import type {CallJournal, Calls, JournalHost} from './call-journal.ts'

export type {Calls} from './call-journal.ts'

/**
 * The call journal as the transport holds it (docs/design.md#the-call-journal). Off (`callJournal: false`, the
 * default), nothing of it is loaded: it holds no call and every hook does nothing. `callJournal: true` imports
 * src/calls/call-journal.ts (a chunk of its own in a bundled app) in `start()`, before the store is touched
 * ({@link LazyJournal.loaded}), so that no message ever waits for it and a failure to load fails `start()`; until
 * then it holds no call, as the journal before `start()` does. Given the journal itself (`mcp-resumable-http/journal`,
 * for a service worker, which may not `import()`), it loads nothing.
 */
export class LazyJournal implements Pick<
  CallJournal,
  'load' | 'sending' | 'receiving' | 'answered' | 'rejected' | 'observe'
> {
  readonly #host: JournalHost
  #journal: CallJournal | undefined
  readonly api: Calls = {
    list: () => this.#journal?.api.list() ?? [],
    wait: (callId, signal) => this.#journal?.api.wait(callId, signal) ?? Promise.reject(unknownCall(callId)),
    forget: (callId) => this.#journal?.api.forget(callId) ?? Promise.resolve(),
  }

  constructor(host: JournalHost) {
    const given = host.callJournal
    this.#host = host
    // The journal itself (its public type says no more than that it is one).
    if (typeof given === 'object')
      this.#journal = new (given as {CallJournal: new (host: JournalHost) => CallJournal}).CallJournal(host)
  }

  /**
   * Imports the journal when `callJournal` is true (once: a transport started again keeps it). Rejects with a
   * `network` TransportError when it does not load; the next `start()` (after `close()`) tries again.
   */
  async loaded(): Promise<void> {
    if (this.#host.callJournal !== true || this.#journal !== undefined) return
    const {CallJournal} = await import('./call-journal.ts').catch((cause: unknown) => {
      throw notLoaded(
        'The call journal (options.callJournal)',
        cause,
        "; where import() is not allowed (a service worker), give options.callJournal the journal itself: import {callJournal} from 'mcp-resumable-http/journal'",
      )
    })
    this.#journal ??= new CallJournal(this.#host)
  }

  load(
    sessionId: string | undefined,
    resumable: ReadonlySet<number | undefined>,
    lifetime: AbortSignal,
  ): Promise<void> {
    return this.#journal?.load(sessionId, resumable, lifetime) ?? Promise.resolve()
  }

  sending(
    message: JSONRPCMessage,
    wireId: number | undefined,
    sessionId: string | undefined,
  ): Promise<void> | undefined {
    return this.#journal?.sending(message, wireId, sessionId)
  }

  receiving(message: JSONRPCMessage): Promise<void> | undefined {
    return this.#journal?.receiving(message)
  }

  answered(wireId: number): void {
    this.#journal?.answered(wireId)
  }

  rejected(wireId: number): void {
    this.#journal?.rejected(wireId)
  }

  observe(event: TransportEvent): void {
    this.#journal?.observe(event)
  }
}
