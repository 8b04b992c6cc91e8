/**
 * A schedule, built from fast-check arbitraries so that a failing one shrinks: which server and Client, the server's
 * mode, the calls and when they start, the faults of the wire (by fetch number), of the server and of the store (by
 * write number), the client restarts, and the seed of what is left to chance (latencies, the backoff's jitter).
 */
import fc from 'fast-check'
import type {ServerMode} from '../src/testing/index.ts'
import type {WireFault} from './trace.ts'
import type {ServerFault} from './servers.ts'
import type {StoreFault} from './store.ts'

export interface Call {
  at: number
  tool: 'increment' | 'ask' | 'slow'
  count: number
  steps: number
  stepMs: number
}

/** `kill`: the process dies, and a new one starts on the store; `reconnect`: the Client closes and connects anew. */
export type ClientFault = 'kill' | 'reconnect'

export interface Schedule {
  server: 'reference' | 'sdk'
  client: 'v1' | 'v2'
  mode: ServerMode
  pendingOnAttach: 're-emit' | 'cancel'
  retryMs: number | undefined
  latencyMs: number
  storeLatencyMs: number
  seed: number
  calls: Call[]
  wire: [number, WireFault][]
  store: [number, StoreFault][]
  serverFaults: [number, ServerFault][]
  clientFaults: [number, ClientFault][]
}

/** A schedule with nothing in it: the reference server in its correct mode, no latency, no call, no fault. */
export const quiet: Schedule = {
  server: 'reference',
  client: 'v1',
  mode: 'correct',
  pendingOnAttach: 're-emit',
  retryMs: undefined,
  latencyMs: 0,
  storeLatencyMs: 0,
  seed: 0,
  calls: [],
  wire: [],
  store: [],
  serverFaults: [],
  clientFaults: [],
}

const time = fc.integer({min: 0, max: 3_000})

const call: fc.Arbitrary<Call> = fc.record({
  at: time,
  tool: fc.constantFrom('increment', 'ask', 'slow'),
  count: fc.integer({min: 1, max: 2}),
  steps: fc.integer({min: 1, max: 4}),
  stepMs: fc.integer({min: 0, max: 300}),
})

const wireFault: fc.Arbitrary<WireFault> = fc.oneof(
  fc.constant({kind: 'refuse' as const}),
  fc.constant({kind: 'lose-answer' as const}),
  // A status before the server saw the request: what a gateway or the server itself refuses with.
  fc.record({
    kind: fc.constant('status' as const),
    status: fc.constantFrom(400, 404, 409, 410, 429, 500, 502, 503, 504),
    retryAfter: fc.option(fc.integer({min: 0, max: 3}), {nil: undefined}),
    after: fc.constant(false),
  }),
  // After it ran: only the statuses that leave it open whether the request ran (RFC 9110 15.6: a 503 or a 4xx says
  // it was not processed, so a gateway that sends one after the server ran the request lies).
  fc.record({
    kind: fc.constant('status' as const),
    status: fc.constantFrom(500, 502, 504),
    retryAfter: fc.constant(undefined),
    after: fc.constant(true),
  }),
  fc.record({kind: fc.constant('cut' as const), atByte: fc.integer({min: 1, max: 600})}),
  fc.record({kind: fc.constant('half-open' as const), atByte: fc.integer({min: 1, max: 600})}),
  fc.record({kind: fc.constant('slow' as const), ms: fc.integer({min: 1, max: 2_000})}),
)

const serverFault: fc.Arbitrary<ServerFault> = fc.constantFrom(
  'expire-session',
  'expire-streams',
  'disconnect',
  'disconnect-close',
  'restart',
  'restart-kept',
)

export const scheduleArbitrary: fc.Arbitrary<Schedule> = fc.record({
  server: fc.constantFrom('reference' as const, 'sdk' as const),
  client: fc.constantFrom('v1' as const, 'v2' as const),
  mode: fc.constantFrom<ServerMode>('correct', 'correct', 'cursor-per-session', 'global-log', 'live-result-only'),
  pendingOnAttach: fc.constantFrom('re-emit' as const, 'cancel' as const),
  retryMs: fc.option(fc.integer({min: 0, max: 1_000}), {nil: undefined}),
  latencyMs: fc.integer({min: 0, max: 30}),
  storeLatencyMs: fc.integer({min: 0, max: 5}),
  seed: fc.integer({min: 0, max: 2 ** 31 - 1}),
  // About ten calls a schedule, as the speed target counts them.
  calls: fc.array(call, {minLength: 1, maxLength: 19, size: 'max'}),
  wire: fc.array(fc.tuple(fc.integer({min: 1, max: 60}), wireFault), {maxLength: 6}),
  store: fc.array(
    fc.tuple(fc.integer({min: 1, max: 80}), fc.constantFrom<StoreFault>({kind: 'fail'}, {kind: 'crash-after'})),
    {maxLength: 2},
  ),
  serverFaults: fc.array(fc.tuple(time, serverFault), {maxLength: 3}),
  clientFaults: fc.array(fc.tuple(time, fc.constantFrom<ClientFault>('kill', 'reconnect')), {maxLength: 2}),
})

/** The schedule of seed `seed`: the first value fast-check draws with it, as `fc.check` with that seed does. */
export function scheduleOf(seed: number): Schedule {
  return fc.sample(scheduleArbitrary, {seed, numRuns: 1})[0]!
}
