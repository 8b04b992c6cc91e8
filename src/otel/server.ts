/**
 * The server half's telemetry: the counters of `ResumableEventStore` and `reemitPendingRequests` as OpenTelemetry
 * metrics, and a span event on the span active when the SDK handles a `GET` that resumes a stream (the store
 * replays) or the session (the unanswered requests go out again). It reaches the server half through `./server` only.
 */
import {trace, type Attributes, type Counter} from '@opentelemetry/api'
import {
  RefusedEventIdError,
  reemitPendingRequests,
  type EventStoreMetrics,
  type PendingRequests,
  type PendingRequestsOptions,
  type ResumableEventStore,
  type SdkServerTransport,
  type SessionResumption,
} from '../server.ts'
import {attribute, metric, spanEvent} from './names.ts'
import {resolveTelemetry, type ServerTelemetryOptions} from './options.ts'

const instrumented = new WeakSet<object>()

/** The store's counters, each with its metric. */
const storeMetrics = {
  storedEvents: metric.storedEvents,
  evictedEvents: metric.evictedEvents,
  streamResumptions: metric.streamResumptions,
  replayedEvents: metric.serverReplayedEvents,
  refusedEventIds: metric.refusedEventIds,
} as const satisfies Record<keyof EventStoreMetrics, unknown>

/**
 * Metrics and span events for the server half: give it each session's `ResumableEventStore`, and call its
 * `reemitPendingRequests` in place of the one of `mcp-resumable-http/server`. One for the whole server: its
 * instruments are made once.
 *
 * @example
 * ```ts
 * const telemetry = new ServerTelemetry()
 * const eventStore = telemetry.eventStore(new ResumableEventStore())
 * const transport = new StreamableHTTPServerTransport({sessionIdGenerator: () => randomUUID(), eventStore})
 * const pending = telemetry.reemitPendingRequests(transport)
 * ```
 */
export class ServerTelemetry {
  readonly #store: Record<keyof EventStoreMetrics, Counter>
  readonly #sessionResumptions: Counter
  readonly #reemitted: Counter
  readonly #cancelled: Counter

  constructor(options?: ServerTelemetryOptions) {
    const {meter} = resolveTelemetry(options, 'ServerTelemetry: options', ['meterProvider'])
    const counter = (of: {name: string; unit: string; description: string}): Counter =>
      meter.createCounter(of.name, {unit: of.unit, description: of.description})
    this.#store = {
      storedEvents: counter(storeMetrics.storedEvents),
      evictedEvents: counter(storeMetrics.evictedEvents),
      streamResumptions: counter(storeMetrics.streamResumptions),
      replayedEvents: counter(storeMetrics.replayedEvents),
      refusedEventIds: counter(storeMetrics.refusedEventIds),
    }
    this.#sessionResumptions = counter(metric.sessionResumptions)
    this.#reemitted = counter(metric.serverReemittedRequests)
    this.#cancelled = counter(metric.cancelledRequests)
  }

  /**
   * Counts what `store` does (its {@link EventStoreMetrics}, as metrics), and adds a span event
   * (`mcp_resumable_http.stream_resumption`) on the span active when the SDK asks it to replay, or refuses a
   * `Last-Event-ID` it does not hold. Instruments `store` in place, and returns it; a store instrumented twice is a
   * `TypeError`.
   */
  eventStore<S extends ResumableEventStore>(store: S): S {
    if (instrumented.has(store)) throw new TypeError('ServerTelemetry: this event store is instrumented already')
    instrumented.add(store)
    const seen: EventStoreMetrics = store.metrics
    for (const name of Object.keys(seen) as (keyof EventStoreMetrics)[]) this.#store[name].add(seen[name])
    // The counters only grow: what each gained since last read is added, after every operation.
    const sample = (): void => {
      const now = store.metrics
      for (const name of Object.keys(now) as (keyof EventStoreMetrics)[]) {
        if (now[name] > seen[name]) this.#store[name].add(now[name] - seen[name])
        seen[name] = now[name]
      }
    }
    const after = <T>(operation: Promise<T>, then: (value: T | undefined, error?: unknown) => void): Promise<T> =>
      operation.then(
        (value) => {
          sample()
          then(value)
          return value
        },
        (error: unknown) => {
          sample()
          then(undefined, error)
          throw error
        },
      )
    const [storeEvent, lookUp, replay, clear] = [
      store.storeEvent.bind(store),
      store.getStreamIdForEventId.bind(store),
      store.replayEventsAfter.bind(store),
      store.clear.bind(store),
    ]
    store.storeEvent = (streamId, message) => after(storeEvent(streamId, message), () => {})
    store.getStreamIdForEventId = (eventId) => {
      const span = trace.getActiveSpan()
      return after(lookUp(eventId), (streamId) => {
        // The SDK answers 400, and asks no replay.
        if (streamId === undefined) span?.addEvent(spanEvent.streamResumption, refused(eventId, undefined))
      })
    }
    store.replayEventsAfter = (lastEventId, {send}) => {
      const span = trace.getActiveSpan()
      let replayed = 0
      const counted = async (eventId: string, message: Parameters<typeof send>[1]): Promise<void> => {
        await send(eventId, message)
        replayed++
      }
      return after(replay(lastEventId, {send: counted}), (_, error) =>
        span?.addEvent(
          spanEvent.streamResumption,
          error === undefined
            ? {
                [attribute.resumptionOutcome]: 'replayed',
                [attribute.lastEventId]: [lastEventId],
                [attribute.replayedEvents]: replayed,
              }
            : refused(lastEventId, error),
        ),
      )
    }
    store.clear = () => after(clear(), () => {})
    return store
  }

  /**
   * `reemitPendingRequests(transport, options)` of `mcp-resumable-http/server`, with its counters as metrics and a
   * span event (`mcp_resumable_http.session_resumption`) on the span active when the SDK attaches a stream without
   * `Last-Event-ID`, once the unanswered requests went out again. The app's own `onSessionResumption` runs too.
   */
  reemitPendingRequests(transport: SdkServerTransport, options: PendingRequestsOptions = {}): PendingRequests {
    if (typeof options !== 'object' || (options as unknown) === null) return reemitPendingRequests(transport, options)
    const {onSessionResumption: heard} = options
    // A value the wrapper refuses goes to it as it is, for its TypeError to name it.
    if (heard !== undefined && typeof heard !== 'function') return reemitPendingRequests(transport, options)
    const onSessionResumption = (resumption: SessionResumption): void => {
      this.#sessionResumptions.add(1)
      if (resumption.reemittedRequests > 0) this.#reemitted.add(resumption.reemittedRequests)
      if (resumption.cancelledRequests > 0) this.#cancelled.add(resumption.cancelledRequests)
      trace.getActiveSpan()?.addEvent(spanEvent.sessionResumption, {
        [attribute.reemittedRequests]: resumption.reemittedRequests,
        [attribute.cancelledRequests]: resumption.cancelledRequests,
      })
      heard?.(resumption)
    }
    return reemitPendingRequests(transport, {...options, onSessionResumption})
  }
}

/** The event of a `Last-Event-ID` refused, with why when the store said. */
function refused(lastEventId: string, error: unknown): Attributes {
  const attributes: Attributes = {[attribute.resumptionOutcome]: 'refused', [attribute.lastEventId]: [lastEventId]}
  if (error instanceof RefusedEventIdError) attributes[attribute.refusedReason] = error.reason
  return attributes
}
