import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {bytesToHex, randomBytes} from '@noble/hashes/utils.js'
import {TransportError, unknownCall} from '../errors.ts'
import {ChildAbort} from '../policy/abort.ts'
import {limitExceeded, type JournaledCall, type JsonObject, type TransportEvent} from '../events.ts'
import {
  cancelledRequestIdOf,
  methodOf,
  requestIdOf,
  responseIdOf,
  type JsonRpcId,
  type JsonValue,
} from '../wire/jsonrpc.ts'
import type {Limits} from '../policy/limits.ts'
import type {SessionRecords} from '../persistence/records.ts'
import type {CallJournalModule} from '../options.ts'
import {digestArguments, invalidCall, publicView, settledStates, type CallEntry} from './call.ts'
import {CallWaiters} from './call-waiters.ts'
import {pollTask, type TaskHost} from './tasks.ts'
import {isAppRequestId} from '../delivery/app-requests.ts'

/** The journal's lifetime's reason once the transport closed (a wait begun then says it): made once, no call's stack. */
const transportClosed = new TransportError('aborted', 'The transport was closed')
/** The methods journaled: the only one that may act on the world, and the only one a task or a round can follow. */
const journaled = 'tools/call'
/** The `_meta` keys of a 2026-07-28 request's envelope, sent again with `tasks/get`. */
const envelopeKeys = [
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
]

type Entry = {-readonly [K in keyof CallEntry]: CallEntry[K]}

/** What the app can do with the journal: `transport.calls`. */
export interface Calls {
  /** Every journaled call: this process's in flight, and a previous process's not yet forgotten. */
  list(): JournaledCall[]
  /**
   * Resolves with call `callId` once it is settled (`completed`, `failed`, `cancelled`, `outcome-unknown`,
   * `delivered`); rejects when `signal` aborts or the transport closes (`aborted`: the call may go on without this
   * process, and the next one learns how it ended), and with a `TypeError` for a call the journal does not hold.
   */
  wait(callId: string, signal?: AbortSignal): Promise<JournaledCall>
  /** The app has what it needs of call `callId`: its record goes (a task's polling stops). */
  forget(callId: string): Promise<void>
}

/** What the journal needs of the transport: what polling a task needs (`tasks/get` on the wire), and more. */
export interface JournalHost extends TaskHost {
  /** `strict`: a call is sent, and a task or round delivered, once its record is stored; `relaxed`: stored in the background. */
  readonly durability: 'strict' | 'relaxed'
  /** `callJournal`: off, on (loaded on first use), or the journal itself (src/calls/lazy-journal.ts reads it). */
  readonly callJournal: boolean | CallJournalModule
  readonly records: Pick<SessionRecords, 'loadCalls' | 'saveCall' | 'discardCall'>
  readonly limits: Pick<Limits, 'maxCalls' | 'callBytes' | 'maxRetryMs' | 'maxEventBytes'>
  emit(event: TransportEvent): void
  track(task: Promise<void>): void
}

/**
 * The call journal (docs/design.md#the-call-journal): every `tools/call` recorded in the store before it is sent,
 * with a stable call ID, the tool's name and a digest of its arguments, and its state as it changes, so that a
 * restarted process lists its predecessor's calls and learns for each its result, its progress, or that its outcome
 * is unknown. A task handle and an `input_required` round are stored before the Client sees them; a task is polled
 * until it settles, after a restart too. A record goes once the Client received the answer, or the app forgot it.
 */
export class CallJournal {
  readonly #host: JournalHost
  /** By call ID, oldest first. */
  readonly #entries = new Map<string, Entry>()
  /** Each call by the wire ID of its latest leg, and by its progress token: only calls the journal holds. */
  readonly #byWire = new Map<JsonRpcId, Entry>()
  readonly #byToken = new Map<unknown, Entry>()
  /**
   * What the store should hold of each call now, read when its write starts (a write queued behind another then stores
   * the latest, a removal included), with the characters of its JSON; their sum is bounded by `limits.callBytes`.
   */
  readonly #stored = new Map<string, {value: JsonValue | undefined; chars: number}>()
  #totalChars = 0
  readonly #waiters = new CallWaiters()
  readonly #pollers = new Map<string, ChildAbort>()
  /** The transport's lifetime, from `load()`; aborted until then. */
  #lifetime = AbortSignal.abort()
  readonly api: Calls

  constructor(host: JournalHost) {
    this.#host = host
    this.api = {
      list: () => [...this.#entries.values()].map(publicView),
      wait: (callId, signal) => this.#wait(callId, signal),
      forget: (callId) => this.#forget(callId),
    }
  }

  /**
   * Loads what a previous process journaled: a legacy call whose stream is being resumed (`resumable`, by wire ID,
   * in `sessionId`) waits for its answer there; any other unanswered one is `outcome-unknown`; a task is polled again.
   */
  async load(
    sessionId: string | undefined,
    resumable: ReadonlySet<number | undefined>,
    lifetime: AbortSignal,
  ): Promise<void> {
    this.#lifetime = lifetime
    lifetime.addEventListener('abort', () => this.#closed(lifetime))
    for (const [callId, value] of await this.#host.records.loadCalls()) {
      const reason = invalidCall(value)
      const held = this.#entries.get(callId)
      if (reason !== undefined || held !== undefined) {
        // Started again after `close()`: what this transport holds is newer than the store.
        if (held?.state === 'task') this.#poll(held)
        if (reason !== undefined) this.#host.records.discardCall(callId, `invalid record of call ${callId}: ${reason}`)
        continue
      }
      const entry: Entry = {...(value as unknown as Entry), inherited: true}
      this.#index(entry)
      this.#stored.set(callId, {value, chars: JSON.stringify(value).length})
      this.#totalChars += this.#stored.get(callId)!.chars
      const streamed = entry.era === 'legacy' && entry.sessionId === sessionId && resumable.has(entry.wireId)
      if (entry.state === 'sent' && !streamed) {
        // [spec 2026-07-28] a broken response stream is cancellation: nothing brings a modern call's answer back.
        const why =
          entry.era === 'modern'
            ? 'its process ended before the answer, and a 2026-07-28 answer lives only on its own stream'
            : 'its process ended before the answer, and no stream of it was left to resume'
        this.#host.track(this.#update(entry, {state: 'outcome-unknown', reason: why}))
      } else this.#changed(entry)
      if (entry.state === 'task') this.#poll(entry)
    }
  }

  /**
   * The Client sends `message` as wire request `wireId` (undefined for a notification): a `tools/call` is journaled
   * (or, when it continues an `input_required` round, its call moves on) before it goes. Resolves once stored.
   */
  sending(
    message: JSONRPCMessage,
    wireId: number | undefined,
    sessionId: string | undefined,
  ): Promise<void> | undefined {
    const cancelled = cancelledRequestIdOf(message)
    if (cancelled !== undefined) {
      // Named by its wire ID by now (src/session/post.ts renames a cancellation before it goes).
      const entry = this.#byWire.get(cancelled)
      return entry === undefined || entry.inherited || entry.state !== 'sent' ? undefined : this.#deliver(entry)
    }
    const method = methodOf(message)
    if (method?.startsWith('tasks/') === true) {
      this.#handOver(message)
      return undefined
    }
    if (method !== journaled || wireId === undefined) return undefined
    const clientId = requestIdOf(message)!
    const params = (message as {params?: JsonObject}).params ?? {}
    const name = typeof params['name'] === 'string' ? params['name'] : ''
    const argumentsDigest = digestArguments(params['arguments'])
    const meta = (params['_meta'] ?? {}) as JsonObject
    const token = meta['progressToken']
    const progressToken =
      token === clientId ? wireId : typeof token === 'string' || typeof token === 'number' ? token : undefined
    const requestState = typeof params['requestState'] === 'string' ? params['requestState'] : undefined
    const inputResponses = params['inputResponses'] as JsonObject | undefined
    const leg =
      requestState === undefined && inputResponses === undefined
        ? undefined
        : this.#roundOf(name, argumentsDigest, requestState)
    const changes: Partial<Entry> = {
      clientId,
      wireId,
      state: 'sent',
      progressToken,
      inherited: false,
      reason: undefined,
      inputRequests: undefined,
    }
    if (leg !== undefined) {
      // The round's next leg: the same call, its answers stored before they go (a restart must not ask again).
      this.#byWire.delete(leg.wireId)
      this.#byToken.delete(leg.progressToken)
      this.#byWire.set(wireId, leg)
      if (progressToken !== undefined) this.#byToken.set(progressToken, leg)
      return this.#durable(this.#update(leg, {...changes, resume: {requestState, inputResponses}}))
    }
    // Stryker disable next-line MethodExpression: JSON drops a key of no value
    const envelope = Object.fromEntries(
      envelopeKeys.filter((key) => meta[key] !== undefined).map((key) => [key, meta[key]!]),
    )
    const modern = typeof envelope[envelopeKeys[0]!] === 'string'
    const entry: Entry = {
      ...changes,
      // Not `crypto.randomUUID`: insecure browser contexts (a page over plain HTTP) lack it.
      callId: bytesToHex(randomBytes(16)),
      method: journaled,
      name,
      argumentsDigest,
      clientId,
      wireId,
      era: modern ? 'modern' : 'legacy',
      state: 'sent',
      startedAt: Date.now(),
      inherited: false,
      sessionId: modern ? undefined : sessionId,
      envelope: modern ? envelope : undefined,
    }
    this.#index(entry)
    return this.#durable(this.#update(entry, {}))
  }

  /**
   * `message` is about to be delivered: a journaled call's task handle or `input_required` round is stored first
   * (resolves once it is), its progress noted; the answer the Client receives ends its record once it has it
   * ({@link answered}).
   */
  receiving(message: JSONRPCMessage): Promise<void> | undefined {
    const responseId = responseIdOf(message)
    if (responseId === undefined) {
      const params = (message as {params?: JsonObject}).params ?? {}
      const entry =
        methodOf(message) === 'notifications/progress' ? this.#byToken.get(params['progressToken']) : undefined
      if (entry !== undefined && typeof params['progress'] === 'number') {
        const {progress, total, message: text} = params as {progress: number; total?: number; message?: string}
        this.#host.track(this.#update(entry, {progress: {progress, total, message: text}}))
      }
      return undefined
    }
    const entry = this.#byWire.get(responseId)
    if (entry === undefined) return undefined
    if ('error' in message)
      return entry.inherited
        ? this.#update(entry, {state: 'failed', error: message.error as unknown as JsonValue})
        : undefined
    const result = (message as {result: JsonObject}).result
    if (result['resultType'] === 'task' && typeof result['taskId'] === 'string') {
      // One poller per task (docs/design.md#the-call-journal): a handle the app receives (`transport.request`, the
      // Tasks extension) is its to poll, and the call's record goes as any answer delivered does.
      if (isAppRequestId(entry.clientId)) return undefined
      const {taskId, status, statusMessage, pollIntervalMs} = result as {
        taskId: string
        status?: string
        statusMessage?: string
        pollIntervalMs?: number
      }
      const stored = this.#update(entry, {
        state: 'task',
        task: {taskId, status: status ?? 'working', statusMessage, pollIntervalMs},
      })
      return this.#durable(stored.then(() => this.#poll(entry)))
    }
    if (result['resultType'] === 'input_required') {
      const requestState = typeof result['requestState'] === 'string' ? result['requestState'] : undefined
      return this.#durable(
        this.#update(entry, {
          state: 'input-required',
          inputRequests: result['inputRequests'] as JsonObject | undefined,
          resume: {requestState},
        }),
      )
    }
    return entry.inherited ? this.#update(entry, {state: 'completed', result}) : undefined
  }

  /**
   * The Client has the answer to wire request `wireId`: the call goes, in the background (a crash in between leaves a
   * record the next process reports `outcome-unknown`, the cautious side). Never before: the progress that came with
   * the answer is delivered first, and no call leaves the store while its answer has not reached the Client.
   */
  answered(wireId: number): void {
    const entry = this.#byWire.get(wireId)
    // A task handle or an `input_required` round answered one leg: the call goes on.
    if (entry?.state === 'sent') this.#host.track(this.#deliver(entry))
  }

  /** Sending wire request `wireId` failed, and the Client hears it from `send()`: its call's record goes. */
  rejected(wireId: number): void {
    const entry = this.#byWire.get(wireId)
    // Only this process sends: `wireId` is never a previous process's call. Failed by `close()`: the call may go on
    // without this process, and the next one learns how it ended.
    if (entry !== undefined && !this.#lifetime.aborted) this.#host.track(this.#deliver(entry))
  }

  /** Events that settle journaled calls: the Client's settled by the transport, a previous process's stream that ended. */
  observe(event: TransportEvent): void {
    // Settled by `close()`: likewise.
    if (event.type === 'request-settled' && !this.#lifetime.aborted) {
      const entry = [...this.#entries.values()].find(
        (candidate) => !candidate.inherited && candidate.state === 'sent' && candidate.clientId === event.requestId,
      )
      if (entry !== undefined) this.#host.track(this.#deliver(entry))
    } else if ((event.type === 'stream-closed' && event.reason !== 'completed') || event.type === 'session-expired') {
      for (const entry of this.#entries.values()) {
        // Only legacy calls of the session: a previous process's other calls were settled when they loaded.
        if (!entry.inherited || entry.state !== 'sent') continue
        if (event.type === 'session-expired' || entry.wireId === event.requestId) {
          this.#host.track(
            this.#update(entry, {
              state: 'outcome-unknown',
              reason: event.type === 'stream-closed' ? `its stream ended (${event.reason})` : 'its session expired',
            }),
          )
        }
      }
    }
  }

  /**
   * A 2026-07-28 `tasks/*` request the app sends itself names a task the journal polls: the app polls it from now on
   * (the Tasks extension resumed it), so the journal stops, and the call's record goes as delivered.
   */
  #handOver(message: JSONRPCMessage): void {
    const params = (message as {params?: JsonObject}).params ?? {}
    const modern = typeof (params['_meta'] as JsonObject | undefined)?.[envelopeKeys[0]!] === 'string'
    for (const entry of this.#entries.values())
      if (modern && entry.state === 'task' && entry.task?.taskId === params['taskId'])
        this.#host.track(this.#deliver(entry))
  }

  /** The call an `input_required` round continues: the same tool and arguments, its `requestState` echoed. */
  #roundOf(name: string, argumentsDigest: string, requestState: string | undefined): Entry | undefined {
    let found: Entry | undefined
    for (const entry of this.#entries.values()) {
      if (
        entry.resume === undefined ||
        entry.name !== name ||
        entry.argumentsDigest !== argumentsDigest ||
        entry.resume.requestState !== requestState
      )
        continue
      if (
        entry.state === 'input-required' ||
        (entry.inherited && entry.state !== 'task' && entry.state !== 'completed')
      )
        found = entry
    }
    return found
  }

  /** A write what follows must wait for (`durability: 'strict'`), or one left in the background (`'relaxed'`). */
  #durable(write: Promise<void>): Promise<void> | undefined {
    if (this.#host.durability === 'strict') return write
    // `close()` waits for it all the same (SessionRecords.settled), and a store write reports its failure itself.
    void write
    return undefined
  }

  #index(entry: Entry): void {
    this.#entries.set(entry.callId, entry)
    this.#byWire.set(entry.wireId, entry)
    if (entry.progressToken !== undefined) this.#byToken.set(entry.progressToken, entry)
  }

  /** Applies `changes`, tells the app, and stores the record (within the limits); resolves once stored. */
  #update(entry: Entry, changes: Partial<Entry>): Promise<void> {
    Object.assign(entry, changes)
    this.#changed(entry)
    if (!this.#entries.has(entry.callId)) return Promise.resolve()
    // `inherited` is this process's view, not the call's.
    const text = JSON.stringify({...entry, inherited: undefined})
    const value = JSON.parse(text) as JsonValue
    const chars = text.length
    this.#totalChars += chars - (this.#stored.get(entry.callId)?.chars ?? 0)
    // Too large to keep for a restart (a huge result): kept in memory only.
    const tooLarge = chars > this.#host.limits.callBytes
    this.#stored.set(entry.callId, {value: tooLarge ? undefined : value, chars})
    if (tooLarge) this.#exceeded('callBytes', chars, entry)
    else this.#evict(entry)
    return this.#save(entry.callId)
  }

  /** Past `limits.maxCalls` or `limits.callBytes`: the oldest settled calls go first, then the oldest. */
  #evict(keep: Entry): void {
    const {maxCalls, callBytes} = this.#host.limits
    while (this.#entries.size > maxCalls || this.#totalChars > callBytes) {
      const others = [...this.#entries.values()].filter((entry) => entry !== keep)
      const oldest = others.find((entry) => settledStates.has(entry.state)) ?? others[0]
      // Stryker disable next-line ConditionalExpression: unreachable: the call kept fits both limits
      if (oldest === undefined) return
      this.#exceeded(
        this.#entries.size > maxCalls ? 'maxCalls' : 'callBytes',
        this.#entries.size > maxCalls ? this.#entries.size : this.#totalChars,
        oldest,
      )
      this.#host.track(
        this.#remove(oldest, {
          ...publicView(oldest),
          state: 'outcome-unknown',
          reason: 'evicted from the call journal (limits.maxCalls, limits.callBytes)',
        }),
      )
    }
  }

  #exceeded(limit: 'maxCalls' | 'callBytes', size: number, entry: Entry): void {
    this.#host.emit(limitExceeded(limit, this.#host.limits[limit], {size, requestId: entry.wireId}))
  }

  /** The Client received the call's answer (or its settlement): the record goes. */
  #deliver(entry: Entry): Promise<void> {
    entry.state = 'delivered'
    this.#changed(entry)
    return this.#remove(entry, publicView(entry))
  }

  #remove(entry: Entry, last: JournaledCall): Promise<void> {
    this.#entries.delete(entry.callId)
    if (this.#byWire.get(entry.wireId) === entry) this.#byWire.delete(entry.wireId)
    if (this.#byToken.get(entry.progressToken) === entry) this.#byToken.delete(entry.progressToken)
    // Stryker disable next-line OptionalChaining: every call held has its stored size
    this.#totalChars -= this.#stored.get(entry.callId)?.chars ?? 0
    this.#stored.delete(entry.callId)
    this.#pollers.get(entry.callId)?.abort()
    this.#waiters.settle(entry.callId, last)
    return this.#save(entry.callId)
  }

  #save(callId: string): Promise<void> {
    return this.#host.records.saveCall(callId, () => this.#stored.get(callId)?.value)
  }

  #changed(entry: Entry): void {
    const call = publicView(entry)
    this.#host.emit({type: 'call-changed', call})
    if (settledStates.has(entry.state)) this.#waiters.settle(entry.callId, call)
  }

  /**
   * The transport closed: no call settles in this process any more, and no wait waits for ever. Its lifetime is not
   * kept: the reason holds the stack it was made on (and what that stack's frames hold) until it is formatted.
   */
  #closed(lifetime: AbortSignal): void {
    this.#lifetime = AbortSignal.abort(transportClosed)
    this.#waiters.stopAll(lifetime)
  }

  /** Polls task call `entry` in the background until it settles, `close()`, or the app forgets it. */
  #poll(entry: Entry): void {
    const task = entry.task
    // Stryker disable next-line ConditionalExpression: a call in the task state holds its handle
    if (task === undefined) return
    if (this.#pollers.has(entry.callId)) return
    const poller = new ChildAbort(this.#lifetime)
    this.#pollers.set(entry.callId, poller)
    const polled = pollTask(
      this.#host,
      {taskId: task.taskId, envelope: entry.envelope ?? {}, pollIntervalMs: task.pollIntervalMs},
      poller.signal,
      (status) => {
        this.#host.track(this.#update(entry, {task: {...entry.task!, ...status}}))
      },
    )
    this.#host.track(
      polled
        .then(
          (outcome) => this.#update(entry, outcome),
          // pollTask rejects only when its signal aborts: close(), or the app forgot the call.
          () => {},
        )
        .finally(() => {
          poller.release()
          this.#pollers.delete(entry.callId)
        }),
    )
  }

  #wait(callId: string, signal?: AbortSignal): Promise<JournaledCall> {
    const entry = this.#entries.get(callId)
    if (entry === undefined) return Promise.reject(unknownCall(callId))
    if (settledStates.has(entry.state)) return Promise.resolve(publicView(entry))
    return this.#waiters.wait(callId, this.#lifetime, signal)
  }

  async #forget(callId: string): Promise<void> {
    const entry = this.#entries.get(callId)
    if (entry !== undefined) await this.#remove(entry, publicView(entry))
  }
}

/** The call journal itself, for `options.callJournal` where it cannot be loaded on first use (`mcp-resumable-http/journal`). */
export const callJournal: CallJournalModule = Object.freeze({CallJournal})
