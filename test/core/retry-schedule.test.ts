/**
 * The retry schedule (docs/failures.md#the-retry-schedule, docs/design.md#the-state-machine): what counts as a failed
 * attempt, and the two bounds that give a response stream up, `reconnect.maxAttempts` failed attempts in a row or
 * `reconnect.maxOutageMs` without a working connection, whichever comes first. Each bound is shown deciding alone,
 * under a fake clock (timers, `Date`, and `performance`, by which p-retry measures the outage); msw still serves real
 * responses.
 */
import {afterEach, describe, expect, it, vi} from 'vitest'
import type {JsonRpcId, ResumableHTTPClientTransportOptions} from '../../src/index.ts'
import {answerResumes, connect, eventsOf, interceptGets, until, useMock, type Harness} from '../fixtures/harness.ts'
import {msUntil, realTurns} from '../fixtures/timing.ts'
import {answerToolCalls, codeOf, encoder, eventStream, frame, result, sse} from '../fixtures/wire.ts'

afterEach(() => {
  vi.useRealTimers()
})

const note = {jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}}

/**
 * An event stream the server accepted and closes `ms` later (by the fake clock) with no event. It
 * starts with a comment, which is no event: msw 3 sends the headers with the first chunk of the
 * body, as a server that does not flush them.
 */
function closedAfter(ms: number): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(': accepted\n\n'))
      setTimeout(() => controller.close(), ms)
    },
  })
  return new Response(body, {headers: eventStream})
}

interface BrokenCall extends Harness {
  /** How many resumes of the call's stream (GETs with `Last-Event-ID`) came. */
  resumes: () => number
  /** How many times the call was POSTed. */
  posts: () => number
  /** What the call resolved or rejected with, once it settled. */
  outcome: () => unknown
  /** Waits for the call to settle, at most `limit` fake ms after its POST's connection broke; resolves how long that took. */
  untilSettled: (limit: number) => Promise<number>
}

/**
 * The SDK Client, connected, then under the fake clock (no jitter), calling a tool whose POST stream brings event `e1`
 * and breaks; every resume of that stream (a GET with `Last-Event-ID`) is answered by `resume`.
 */
async function brokenCall(
  reconnect: NonNullable<ResumableHTTPClientTransportOptions['reconnect']>,
  resume: (n: number, wireId: JsonRpcId) => Response,
): Promise<BrokenCall> {
  vi.spyOn(Math, 'random').mockReturnValue(0)
  const mock = useMock()
  // A resume comes only once the POST was answered: by then `posts` holds the call.
  const resumes = answerResumes(mock, (n) => resume(n, posts[0]!.id))
  const harness = await connect({reconnect})
  await until(() => mock.requests('GET').length === 1)
  vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance']})
  const posts = answerToolCalls(() => sse([frame('e1')], 'error'))
  let outcome: unknown
  let settled = false
  void harness.client.callTool({name: 'echo'}).then(
    (answered) => ((outcome = answered), (settled = true)),
    (error: unknown) => ((outcome = error), (settled = true)),
  )
  const broke = (): boolean =>
    eventsOf(harness.events, 'reconnect-failed').some((event) => event.stream === 'request' && event.attempt === 0)
  return {
    ...harness,
    resumes: () => resumes.length,
    posts: () => posts.length,
    outcome: () => outcome,
    untilSettled: async (limit) => {
      await msUntil(broke)
      return msUntil(() => settled, limit)
    },
  }
}

/** The attempt number of each reconnect of the call's stream. */
const attempts = ({events}: Harness): number[] =>
  eventsOf(events, 'reconnect')
    .filter((event) => event.stream === 'request')
    .map((event) => event.attempt)

describe('reconnect.maxOutageMs', () => {
  it.each([300, 600])(
    'with maxOutageMs %i and a million attempts left, a response stream answered 503 on every resume is given up once the outage outlives maxOutageMs, and its call settled outcome-unknown',
    async (maxOutageMs) => {
      const call = await brokenCall(
        {maxAttempts: 1_000_000, maxOutageMs, minDelayMs: 20, maxDelayMs: 50},
        () => new Response(null, {status: 503}),
      )
      const outage = await call.untilSettled(3 * maxOutageMs)

      expect(codeOf(call.outcome())).toBe('outcome-unknown')
      expect(outage).toBeGreaterThanOrEqual(maxOutageMs)
      // Not long after: the last attempt of the series is spaced to the bound, not a whole backoff past it.
      expect(outage).toBeLessThan(maxOutageMs + 50)
      expect(call.resumes()).toBeGreaterThan(3)
      expect(attempts(call)).toEqual(Array.from({length: call.resumes()}, (_, n) => n + 1))
      expect(eventsOf(call.events, 'stream-closed')).toContainEqual(
        expect.objectContaining({stream: 'request', reason: 'given-up'}),
      )
      expect(call.posts()).toBe(1)
      await call.client.close()
    },
  )

  it('starts again with a connection that brings events: two outages each shorter than maxOutageMs, longer together, give nothing up', async () => {
    // Without jitter, a series of attempts 20, 40, 80, 130, 180, 230 and 280 ms in has met 503 seven times (280 ms).
    const call = await brokenCall(
      {maxAttempts: 1_000_000, maxOutageMs: 300, minDelayMs: 20, maxDelayMs: 50},
      (n, wireId) =>
        n === 7
          ? sse([frame('e2', note)])
          : n === 14
            ? sse([frame('e3', result(wireId))])
            : new Response(null, {status: 503}),
    )
    await call.untilSettled(1000)

    expect(call.outcome()).toMatchObject({content: [{type: 'text', text: 'ok'}]})
    expect(attempts(call)).toEqual([1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7])
    expect(call.posts()).toBe(1)
    await call.client.close()
  })
})

describe('a connection that lived', () => {
  // Every resume is accepted and closed without an event 300 ms later, but for the fourth, which brings the answer.
  const resume = (n: number, wireId: JsonRpcId): Response =>
    n === 4 ? sse([frame('e2', result(wireId))]) : closedAfter(300)

  it('less than maxDelayMs (more than minDelayMs) and closed without an event is a failed attempt: maxAttempts of them give the stream up, and its call is settled outcome-unknown', async () => {
    const call = await brokenCall({maxAttempts: 2, minDelayMs: 10, maxDelayMs: 400}, resume)
    await call.untilSettled(2000)

    expect(codeOf(call.outcome())).toBe('outcome-unknown')
    expect(call.resumes()).toBe(2)
    expect(attempts(call)).toEqual([1, 2])
    expect(eventsOf(call.events, 'stream-closed')).toContainEqual(
      expect.objectContaining({stream: 'request', reason: 'given-up'}),
    )
    expect(call.posts()).toBe(1)
    await call.client.close()
  })

  it('longer than maxDelayMs and closed without an event is no failed attempt: each starts a fresh series, and the call is resumed past maxAttempts to its answer', async () => {
    const call = await brokenCall({maxAttempts: 2, minDelayMs: 10, maxDelayMs: 200}, resume)
    await call.untilSettled(2000)

    expect(call.outcome()).toMatchObject({content: [{type: 'text', text: 'ok'}]})
    expect(call.resumes()).toBe(4)
    expect(attempts(call)).toEqual([1, 1, 1, 1])
    expect(call.posts()).toBe(1)
    await call.client.close()
  })

  it('maxDelayMs and closed without an event is no failed attempt of the standalone stream: a fresh series, never degraded', async () => {
    const mock = useMock()
    // Closed exactly maxDelayMs after it opened, by the fake clock; every later GET is held open.
    const gets = interceptGets(mock, (_get, index) => (index === 0 ? closedAfter(1000) : sse([], 'open')))
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'Date']})
    const {client, events} = await connect({reconnect: {maxAttempts: 1, minDelayMs: 10, maxDelayMs: 1000}})
    await realTurns(() => gets.length === 1)
    await vi.advanceTimersByTimeAsync(1000)
    await vi.advanceTimersByTimeAsync(100)
    await realTurns(() => gets.length === 2)

    expect(gets).toHaveLength(2)
    expect(eventsOf(events, 'stream-degraded')).toEqual([])
    expect(eventsOf(events, 'reconnect')).toMatchObject([
      {stream: 'standalone', branch: 'session-resumption', attempt: 1},
    ])
    await client.close()
  })
})
