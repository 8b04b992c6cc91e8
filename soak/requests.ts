/**
 * Server-to-client requests that were never answered. A request still pending when the run has settled is
 * lost; so is one that stayed pending for longer than {@link stuckMs} and then died with its session (expired,
 * or lost in a restart): the restart does not excuse the client that never answered it.
 */
import type {SoakServer} from './server.ts'
import type {Trace} from './trace.ts'

export interface LostRequest {
  /** The soak's call ID of the tool call that asked, if known. */
  callId: string | undefined
  method: string
  sessionId: string | undefined
  id: string | number
}

/**
 * Longer than any fault keeps a healthy client from answering: the longest outage (5 s), a `Retry-After`
 * (1 s), the backoff and the answer's own delay (300 ms).
 */
export const stuckMs = 10_000

interface Seen {
  since: number
  sessionId: string | undefined
  request: LostRequest
}

export class RequestWatch {
  readonly #server: SoakServer
  readonly #pending = new Map<string, Seen>()
  readonly #died: LostRequest[] = []
  readonly #timer: ReturnType<typeof setInterval>

  readonly #trace: Trace | undefined

  constructor(server: SoakServer, trace?: Trace) {
    this.#server = server
    this.#trace = trace
    this.#timer = setInterval(() => this.#look(), 250)
  }

  /** Stops watching; returns every lost request. */
  stop(): LostRequest[] {
    clearInterval(this.#timer)
    this.#look()
    return [...this.#died, ...[...this.#pending.values()].map((seen) => seen.request)]
  }

  #look(): void {
    const reference = this.#server.reference
    const now = Date.now()
    const current = new Set<string>()
    for (const pending of reference.pendingRequests()) {
      const key = `${pending.sessionId} ${String(pending.id)}`
      current.add(key)
      if (this.#pending.has(key)) continue
      const callId = this.#server.callOfStream(pending.sessionId, pending.streamId)
      this.#pending.set(key, {
        since: now,
        sessionId: pending.sessionId,
        request: {callId, method: pending.method, sessionId: pending.sessionId, id: pending.id},
      })
      this.#trace?.line(
        'watch',
        `${pending.sessionId ?? '-'} pending ${String(pending.id)} ${pending.method} on ${pending.streamId ?? '-'} of ${callId ?? '?'}`,
      )
    }
    const live = new Set(reference.sessions().map((session) => session.id))
    for (const [key, seen] of this.#pending) {
      if (current.has(key)) continue
      this.#pending.delete(key)
      const died = !live.has(seen.sessionId)
      this.#trace?.line(
        'watch',
        `${seen.sessionId ?? '-'} ${died ? 'died' : 'answered'} ${String(seen.request.id)} after ${now - seen.since} ms`,
      )
      if (died && now - seen.since > stuckMs) this.#died.push(seen.request)
    }
  }
}
