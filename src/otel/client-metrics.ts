import type {Attributes, Counter, Histogram, Meter} from '@opentelemetry/api'
import type {TransportEvent, TransportMetrics} from '../index.ts'
import {attribute, durationBuckets, metric} from './names.ts'

/**
 * Why a request was settled `outcome-unknown`: the `reason` of its stream's end, or `post` when the POST itself
 * failed after it may have reached the server (its connection broke, a 5xx, an answer without the response).
 */
export type OutcomeUnknownCause =
  Exclude<Extract<TransportEvent, {type: 'stream-closed'}>['reason'], 'completed'> | 'post'

/** The client half's instruments: the conventions' two histograms, and the counters they lack. */
export class ClientMetrics {
  readonly #operation: Histogram
  readonly #session: Histogram
  readonly #reconnects: Counter
  readonly #replayed: Counter
  readonly #reemitted: Counter
  readonly #duplicates: Counter
  readonly #cursorsRefused: Counter
  readonly #sessionsExpired: Counter
  readonly #outcomeUnknown: Counter
  /** The transport's counters as last read: replays and re-emissions are added as they grow. */
  readonly #seen = {replayedEvents: 0, reemittedRequests: 0}

  constructor(meter: Meter) {
    const advice = {explicitBucketBoundaries: durationBuckets}
    const histogram = (of: {name: string; unit: string; description: string}): Histogram =>
      meter.createHistogram(of.name, {unit: of.unit, description: of.description, advice})
    const counter = (of: {name: string; unit: string; description: string}): Counter =>
      meter.createCounter(of.name, {unit: of.unit, description: of.description})
    this.#operation = histogram(metric.operationDuration)
    this.#session = histogram(metric.sessionDuration)
    this.#reconnects = counter(metric.reconnects)
    this.#replayed = counter(metric.replayedEvents)
    this.#reemitted = counter(metric.reemittedRequests)
    this.#duplicates = counter(metric.duplicatesDropped)
    this.#cursorsRefused = counter(metric.cursorsRefused)
    this.#sessionsExpired = counter(metric.sessionsExpired)
    this.#outcomeUnknown = counter(metric.outcomeUnknown)
  }

  operation(seconds: number, attributes: Attributes): void {
    this.#operation.record(seconds, attributes)
  }

  session(seconds: number, attributes: Attributes): void {
    this.#session.record(seconds, attributes)
  }

  /** The events that are counted, each where it belongs. */
  count(event: TransportEvent): void {
    switch (event.type) {
      case 'reconnect':
        this.#reconnects.add(1, {[attribute.branch]: event.branch, [attribute.streamKind]: event.stream})
        return
      case 'duplicate-dropped':
        this.#duplicates.add(1, {[attribute.duplicate]: event.what})
        return
      case 'cursor-rejected':
        this.#cursorsRefused.add(1, {[attribute.streamKind]: event.stream})
        return
      case 'session-expired':
        this.#sessionsExpired.add(1)
        return
      case 'stream-closed':
        // A response stream that ended without its answer settled its request outcome-unknown.
        if (event.stream === 'request' && event.reason !== 'completed') this.outcomeUnknown(event.reason)
        return
      default:
        return
    }
  }

  outcomeUnknown(cause: OutcomeUnknownCause): void {
    this.#outcomeUnknown.add(1, {[attribute.cause]: cause})
  }

  /** Adds what the transport's replay and re-emission counters gained since they were last read. */
  sample(metrics: Readonly<TransportMetrics>): void {
    const replayed = metrics.replayedEvents - this.#seen.replayedEvents
    const reemitted = metrics.reemittedRequests - this.#seen.reemittedRequests
    if (replayed > 0) this.#replayed.add(replayed)
    if (reemitted > 0) this.#reemitted.add(reemitted)
    this.#seen.replayedEvents = metrics.replayedEvents
    this.#seen.reemittedRequests = metrics.reemittedRequests
  }
}
