/**
 * The SDK's `StreamableHTTPClientTransport` (1.32.2) and ours, each under the SDK Client, through the design
 * note's two field failures, against the correct reference server and its two faulty modes, over real sockets.
 * Each scenario measures the same things for both transports; docs/comparison.md quotes these
 * numbers.
 */
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import {CallToolResultSchema, CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport, type ResumptionStore} from '../../src/index.ts'
import type {ServerMode} from '../../src/testing/index.ts'
import {codeOf, connectClient, until} from '../fixtures/client.ts'
import {serve} from '../fixtures/kit.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {quiet} from '../fixtures/timing.ts'

type Kind = 'sdk' | 'ours'

interface Process {
  client: Client
  transport: Transport
  errors: Error[]
  /** The questions the Client's sampling handler was called with. */
  sampled: string[]
}

/** One client process: the SDK Client on either transport; `answer: false` never answers sampling. */
async function start(
  url: string,
  kind: Kind,
  options: {sessionId?: string; store?: ResumptionStore; answer?: boolean} = {},
): Promise<Process> {
  const {sessionId, store, answer = true} = options
  const transport =
    kind === 'sdk'
      ? new StreamableHTTPClientTransport(new URL(url), {
          ...(sessionId === undefined ? {} : {sessionId}),
          reconnectionOptions: {
            initialReconnectionDelay: 10,
            maxReconnectionDelay: 20,
            reconnectionDelayGrowFactor: 1,
            maxRetries: 2,
          },
        })
      : new ResumableHTTPClientTransport(new URL(url), {sessionId, store, reconnect: {minDelayMs: 1, maxDelayMs: 5}})
  const process = {...(await connectClient(transport)), transport}
  if (!answer) {
    process.client.setRequestHandler(CreateMessageRequestSchema, () => {
      process.sampled.push('unanswered')
      return new Promise<never>(() => {})
    })
  }
  return process
}

const errorsMatching = (process: Process, pattern: RegExp): number =>
  process.errors.filter((error) => pattern.test(error.message)).length

/**
 * Process A calls `ask` (two sampling requests) and dies without answering; process B takes over.
 * `received` is failure 1 of docs/design.md#two-failures: the requests reached A, and B re-attaches with the session ID
 * alone (the event IDs are lost). `in-flight`: A's stream was closed after its priming event (`retry`
 * 150 ms), so the requests never reached it, and B restarts the way each transport offers: the SDK's with
 * the session ID, ours on A's store.
 */
async function restart(kind: Kind, mode: ServerMode, lost: 'received' | 'in-flight') {
  const {server, url} = await serve('node', {mode})
  const store = new RecordingStore()
  const a = await start(url, kind, {store, answer: false})
  if (lost === 'in-flight') server.faults.cutNext({after: 1, how: 'close', retryMs: 150, on: 'POST'})
  const call = a.client.callTool({name: 'ask', arguments: {count: 2}}).catch(() => undefined)
  await until(() => server.pendingRequests().length === 2 && (lost === 'in-flight' || a.sampled.length === 2))
  // Ours dies once the cursor of the call's stream is stored (the SDK's keeps nothing to wait for).
  const resumesFromStore = lost === 'in-flight' && kind === 'ours'
  if (resumesFromStore) await until(() => store.writes.some((write) => write.key.includes('#stream:request:')))
  const sessionId = a.transport.sessionId!
  await a.client.close()
  await call
  const getsBefore = server.requests('GET').length
  const b = await start(url, kind, resumesFromStore ? {store} : {sessionId})
  await quiet(500)
  await b.client.close()
  return {
    samplingHandledByA: a.sampled.length,
    getsAfterRestart: server.requests('GET').length - getsBefore,
    samplingHandledByB: b.sampled.length,
    stillPending: server.pendingRequests().length,
    toolCompleted: server.stream('p2')?.finished,
    executions: server.executions['ask'],
  }
}

/**
 * Call X's stream closes after its first progress (`retry` 150 ms); call Y runs to its end meanwhile on its
 * own stream; then X is resumed from its cursor.
 */
async function resumeWhileAnotherCallRan(kind: Kind, mode: ServerMode) {
  const {server, url} = await serve('node', {mode})
  const p = await start(url, kind)
  const progress = {x: [] as number[], y: [] as number[]}
  server.faults.cutNext({after: 2, how: 'close', retryMs: 150, on: 'POST'})
  const x = p.client.callTool({name: 'slow', arguments: {steps: 3, delayMs: 10}}, undefined, {
    onprogress: ({progress: n}) => progress.x.push(n),
  })
  await until(() => server.stream('p2')?.events.length === 2 && !server.stream('p2')!.connected)
  await p.client.callTool({name: 'slow', arguments: {steps: 2}}, undefined, {
    onprogress: ({progress: n}) => progress.y.push(n),
  })
  await x
  await quiet(100)
  await p.client.close()
  return {
    progress,
    eventsReplayedOnResume: server.stream('p2')?.replayed,
    responsesDeliveredTwice: errorsMatching(p, /unknown message ID/),
    progressDeliveredTwice: errorsMatching(p, /unknown token/),
    executions: server.executions['slow'],
  }
}

/**
 * Failure 2 of docs/design.md#two-failures: the call's stream closes after its priming event (`retry` 100 ms) and
 * the server garbage-collects the session before the client resumes. The app then starts over on a new transport
 * and Client: the SDK's resumes its call with its last resumption token, the way the SDK documents; ours
 * (on the first one's store) has nothing to resume: a cursor never outlives its session.
 */
async function eventIdOutlivesSession(kind: Kind, mode: ServerMode) {
  const {server, url} = await serve('node', {mode})
  const store = new RecordingStore()
  const first = await start(url, kind, {store})
  const deadSession = first.transport.sessionId!
  const tokens: string[] = []
  server.faults.cutNext({after: 1, how: 'close', retryMs: 100, on: 'POST'})
  const started = Date.now()
  const outcome = first.client
    .callTool({name: 'ask'}, undefined, {timeout: 600, onresumptiontoken: (token) => tokens.push(token)})
    .then(
      () => ({error: 'none', afterMs: Date.now() - started}),
      (error: unknown) => ({
        error: (codeOf(error) as string | undefined) ?? (error as Error).message,
        afterMs: Date.now() - started,
      }),
    )
  await until(() => server.requests('POST', 'tools/call').length === 1)
  server.faults.expireSession(deadSession, {closeConnections: false})
  const {error, afterMs} = await outcome
  // The app's next request, on the same transport.
  await first.client.listTools().catch(() => undefined)
  await first.client.close()

  const second = await start(url, kind, {store})
  if (kind === 'sdk') {
    const request = {method: 'tools/call', params: {name: 'ask', arguments: {}}}
    await second.client
      .request(request, CallToolResultSchema, {timeout: 600, resumptionToken: tokens.at(-1)})
      .catch(() => undefined)
  }
  await quiet(100)
  await second.client.close()
  const newSession = second.transport.sessionId
  return {
    callFailedWith: error,
    failedAt: afterMs < 300 ? 'once the 404 came' : afterMs >= 600 ? 'its 600 ms timeout' : `${afterMs} ms`,
    deadSessionRequestsAnswered404: server.log.filter(
      (entry) => entry.sessionId === deadSession && entry.status === 404,
    ).length,
    deadCursorsSentWithNewSession: server.log.filter(
      (entry) => entry.sessionId === newSession && entry.lastEventId !== undefined,
    ).length,
    deadServerRequestsHandled: second.sampled.length,
    answersTheServerCouldNotMatch: server.counters.unmatchedAnswers,
    toolCallPosts: server.requests('POST', 'tools/call').length,
  }
}

describe('failure 1: a restart without the event ID', () => {
  it('correct server: the SDK re-attaches with no GET, 0 of 2 sampling requests handled, the tool hangs; ours handles both once and the tool completes', async () => {
    const lost = {samplingHandledByA: 2, stillPending: 2, toolCompleted: false, executions: 1}
    expect(await restart('sdk', 'correct', 'received')).toEqual({...lost, getsAfterRestart: 0, samplingHandledByB: 0})
    expect(await restart('ours', 'correct', 'received')).toEqual({
      ...lost,
      getsAfterRestart: 1,
      samplingHandledByB: 2,
      stillPending: 0,
      toolCompleted: true,
    })
  })

  it('cursor-per-session server: nothing re-emitted, so neither transport gets the requests back (the server is at fault)', async () => {
    const lost = {samplingHandledByA: 2, samplingHandledByB: 0, stillPending: 2, toolCompleted: false, executions: 1}
    expect(await restart('sdk', 'cursor-per-session', 'received')).toEqual({...lost, getsAfterRestart: 0})
    // Ours attaches a fresh stream as it should; the faulty server re-emits nothing on it.
    expect(await restart('ours', 'cursor-per-session', 'received')).toEqual({...lost, getsAfterRestart: 1})
  })
})

describe('a restart while the server requests were still on their way', () => {
  it.each(['correct', 'cursor-per-session'] as const)(
    '%s server: the SDK loses both sampling requests; ours, on its store, handles both once and the tool completes',
    async (mode) => {
      expect(await restart('sdk', mode, 'in-flight')).toEqual({
        samplingHandledByA: 0,
        getsAfterRestart: 0,
        samplingHandledByB: 0,
        stillPending: 2,
        toolCompleted: false,
        executions: 1,
      })
      expect(await restart('ours', mode, 'in-flight')).toEqual({
        samplingHandledByA: 0,
        getsAfterRestart: 2,
        samplingHandledByB: 2,
        stillPending: 0,
        toolCompleted: true,
        executions: 1,
      })
    },
  )
})

describe('a stream resumed while another call ran', () => {
  it('correct server: only the stream itself is replayed, nothing is delivered twice, by either transport', async () => {
    const clean = {
      progress: {x: [1, 2, 3], y: [1, 2]},
      eventsReplayedOnResume: 3,
      responsesDeliveredTwice: 0,
      progressDeliveredTwice: 0,
      executions: 2,
    }
    expect(await resumeWhileAnotherCallRan('sdk', 'correct')).toEqual(clean)
    expect(await resumeWhileAnotherCallRan('ours', 'correct')).toEqual(clean)
  })

  it("cursor-per-session server: the other call's 4 events are replayed too; the SDK delivers its response and its 2 progress notifications again, ours drops them", async () => {
    const base = {progress: {x: [1, 2, 3], y: [1, 2]}, eventsReplayedOnResume: 7, executions: 2}
    expect(await resumeWhileAnotherCallRan('sdk', 'cursor-per-session')).toEqual({
      ...base,
      responsesDeliveredTwice: 1,
      progressDeliveredTwice: 2,
    })
    // Event IDs are de-duplicated per stream, so another stream's replayed events pass that check; the answered
    // request's response and progress are then dropped by request ID and progress token.
    expect(await resumeWhileAnotherCallRan('ours', 'cursor-per-session')).toEqual({
      ...base,
      responsesDeliveredTwice: 0,
      progressDeliveredTwice: 0,
    })
  })
})

describe('failure 2: an event ID that outlived its session', () => {
  const ours = {
    callFailedWith: 'session-expired',
    failedAt: 'once the 404 came',
    deadSessionRequestsAnswered404: 1,
    deadCursorsSentWithNewSession: 0,
    deadServerRequestsHandled: 0,
    answersTheServerCouldNotMatch: 0,
    toolCallPosts: 1,
  }
  const sdk = {
    callFailedWith: 'MCP error -32001: Request timed out',
    failedAt: 'its 600 ms timeout',
    // Two resume GETs, the cancellation of the timed-out call and the next request.
    deadSessionRequestsAnswered404: 4,
    toolCallPosts: 1,
  }

  it('correct server: the SDK hangs until its timeout, keeps sending the dead session, then sends its old cursor with the new one (refused); ours fails at once and sends neither', async () => {
    // The resumption GET, and the second one its cancellation opens: both refused with 422.
    expect(await eventIdOutlivesSession('sdk', 'correct')).toEqual({
      ...sdk,
      deadCursorsSentWithNewSession: 2,
      deadServerRequestsHandled: 0,
      answersTheServerCouldNotMatch: 0,
    })
    expect(await eventIdOutlivesSession('ours', 'correct')).toEqual(ours)
  })

  it("global-log server: the SDK's old cursor is served from the dead session; its sampling request is handled twice in the new session, both answers unmatched; ours is unaffected", async () => {
    expect(await eventIdOutlivesSession('sdk', 'global-log')).toEqual({
      ...sdk,
      deadCursorsSentWithNewSession: 4,
      deadServerRequestsHandled: 2,
      answersTheServerCouldNotMatch: 2,
    })
    expect(await eventIdOutlivesSession('ours', 'global-log')).toEqual(ours)
  })
})
