/**
 * How the transport meets servers that fail the way real ones do (docs/failures.md): transient answers keep the
 * cursor and honour Retry-After, the standalone stream is never abandoned, and every failed call says whether it
 * may have run.
 */
import {UnauthorizedError} from '@modelcontextprotocol/sdk/client/auth.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {MemoryStore} from '../../src/index.ts'
import {answerResumes, connect, eventsOf, interceptGets, network, until, url, useMock} from '../fixtures/harness.ts'
import {answerToolCalls, codeOf, failure} from '../fixtures/wire.ts'

const withProgress = {onprogress: () => {}}

describe('a resume answered "not now"', () => {
  it('keeps its cursor through 503 and 429, waits what Retry-After asks, and the call completes once', async () => {
    const mock = useMock()
    const at: number[] = []
    const resumes = answerResumes(mock, (n) => {
      at.push(Date.now())
      if (n === 1) return new Response(null, {status: 503, headers: {'retry-after': '1'}})
      if (n === 2) return new Response(null, {status: 429, headers: {'retry-after': '0'}})
      return undefined
    })
    const {client, events} = await connect()
    mock.faults.cutNext({after: 2, how: 'error', on: 'POST'})
    const result = await client.callTool({name: 'slow', arguments: {steps: 4}}, undefined, withProgress)

    expect(result.content).toEqual([{type: 'text', text: 'done after 4 steps'}])
    expect(resumes).toHaveLength(3)
    expect(new Set(resumes.map((resume) => resume.lastEventId)).size).toBe(1)
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950)
    expect(eventsOf(events, 'cursor-rejected')).toEqual([])
    expect(mock.executions).toEqual({slow: 1})
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    await client.close()
  })

  it('keeps its cursor through 409 (its stream still connected on a half-open server socket): resumed again with it, the call completes once', async () => {
    const mock = useMock()
    const resumes = answerResumes(mock, (n) => (n <= 2 ? new Response(null, {status: 409}) : undefined))
    const {client, events} = await connect({reconnect: {minDelayMs: 1, maxDelayMs: 5}})
    mock.faults.cutNext({after: 2, how: 'error', on: 'POST'})
    const result = await client.callTool({name: 'slow', arguments: {steps: 4}}, undefined, withProgress)

    expect(result.content).toEqual([{type: 'text', text: 'done after 4 steps'}])
    expect(resumes).toHaveLength(3)
    expect(new Set(resumes.map((resume) => resume.lastEventId)).size).toBe(1)
    expect(eventsOf(events, 'cursor-rejected')).toEqual([])
    expect(mock.executions).toEqual({slow: 1})
    await client.close()
  })

  it.each([
    ['an HTTP date a minute away', () => new Date(Date.now() + 60_000).toUTCString(), 300],
    ['a number of seconds past the cap', () => '10', 300],
    ['an HTTP date already past', () => new Date(0).toUTCString(), 0],
    ['unreadable', () => 'soon', 0],
    ['a fraction, which is no number of seconds (RFC 9110 delay-seconds are digits)', () => '1.5', 0],
  ])(
    'waits what a Retry-After of %s asks for, cut to limits.maxRetryMs, before resuming again',
    async (_what, header, waited) => {
      const mock = useMock()
      const at: number[] = []
      const resumes = answerResumes(mock, (n) => {
        at.push(Date.now())
        return n === 1 ? new Response(null, {status: 503, headers: {'retry-after': header()}}) : undefined
      })
      const {client} = await connect({limits: {maxRetryMs: 300}, reconnect: {minDelayMs: 1, maxDelayMs: 2}})
      mock.faults.cutNext({after: 2, how: 'error', on: 'POST'})
      await client.callTool({name: 'slow', arguments: {steps: 3}}, undefined, withProgress)

      expect(resumes).toHaveLength(2)
      const gap = at[1]! - at[0]!
      expect(gap).toBeGreaterThanOrEqual(waited - 20)
      // Without a wait asked for, the next attempt is the 1 to 2 ms backoff, well under the cap
      // (however busy the machine).
      if (waited === 0) expect(gap).toBeLessThan(250)
      expect(mock.executions).toEqual({slow: 1})
      await client.close()
    },
  )
})

describe('the standalone stream', () => {
  it('is not abandoned after a 401: it degrades, then re-attaches when the server lets it', async () => {
    const mock = useMock()
    const gets = interceptGets(mock, (_get, index) => (index === 0 ? new Response(null, {status: 401}) : undefined))
    const {client, events, errors} = await connect()
    await until(() => eventsOf(events, 'stream-recovered').length === 1)

    expect(gets.length).toBeGreaterThanOrEqual(2)
    expect(eventsOf(events, 'stream-degraded')).toHaveLength(1)
    expect(errors).toHaveLength(1)
    expect(eventsOf(events, 'stream-closed').filter((event) => event.stream === 'standalone')).toEqual([])
    await client.close()
  })
})

describe('what a failed call says', () => {
  it.each([
    ['202 and no body', () => new HttpResponse(null, {status: 202})],
    ['200 and an empty body', () => new HttpResponse('', {status: 200})],
    ['502 from a gateway', () => new HttpResponse('bad gateway', {status: 502})],
  ])(
    'outcome-unknown when the server took the request and answered %s: it may have run, and is not sent again',
    async (_what, reply) => {
      useMock()
      const {client} = await connect()
      const calls = answerToolCalls(reply)
      expect(codeOf(await failure(client.callTool({name: 'echo'})))).toBe('outcome-unknown')
      await client.listTools()
      expect(calls).toHaveLength(1)
      await client.close()
    },
  )

  it("an error the app's own fetch throws (the SDK's withOAuth: UnauthorizedError) reaches the caller as it was thrown", async () => {
    useMock()
    let refuse = false
    const {client} = await connect({
      fetch: (input, init) => {
        if (refuse) return Promise.reject(new UnauthorizedError('the user must authorize'))
        return fetch(input, init)
      },
    })
    refuse = true
    const error = await failure(client.callTool({name: 'echo', arguments: {text: 'x'}}))
    expect(error).toBeInstanceOf(UnauthorizedError)
    refuse = false
    await client.close()
  })

  it('session-expired, without a request sent, when the stored session died with the server: the app re-initializes', async () => {
    const mock = useMock()
    const store = new MemoryStore()
    const before = await connect({store})
    await before.client.close()
    mock.faults.expireSession('session-1')

    const after = await connect({store})
    await until(() => eventsOf(after.events, 'session-expired').length === 1)
    expect(codeOf(await failure(after.client.callTool({name: 'echo', arguments: {text: 'x'}})))).toBe('session-expired')
    expect(mock.requests('POST', 'tools/call')).toHaveLength(0)

    // The recipe: connect again, which initializes a new session.
    await after.client.close()
    await after.client.connect(after.transport)
    await after.client.callTool({name: 'echo', arguments: {text: 'x'}})
    expect(after.transport.sessionId).not.toBe('session-1')
    expect(mock.requests('POST', 'initialize')).toHaveLength(2)
    await after.client.close()
  })
})

describe("the Client's answer to a server request", () => {
  it('is sent again when the server answers its POST 503: the tool gets its answer and completes once', async () => {
    const mock = useMock()
    let refused = 0
    network.use(
      http.post(url, async ({request}) => {
        const body = (await request.clone().json()) as {method?: string; result?: unknown}
        if (body.method === undefined && body.result !== undefined && refused === 0) {
          refused++
          return new HttpResponse('busy', {status: 503})
        }
        return mock.handle(request)
      }),
    )
    const {client, sampled, errors} = await connect()
    const result = await client.callTool({name: 'ask'})

    expect(refused).toBe(1)
    expect(sampled).toEqual(['question 1'])
    expect(result.content).toEqual([{type: 'text', text: 'answer 1'}])
    expect(mock.executions).toEqual({ask: 1})
    expect(errors).toEqual([])
    await client.close()
  })
})
