/**
 * The two failures observed in the field (docs/design.md#two-failures), reproduced against a server that behaves as
 * that story describes, with the SDK Client on top: both must end well with this transport.
 */
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {http} from 'msw'
import {describe, expect, it} from 'vitest'
import {MemoryStore} from '../../src/index.ts'
import {connect, eventsOf, network, until, untilGetsServed, url, useMock} from '../fixtures/harness.ts'
import {codeOf} from '../fixtures/wire.ts'

describe('failure 1: a restart without the event ID', () => {
  it('re-attaches by session ID alone and answers the two re-emitted sampling requests exactly once', async () => {
    const mock = useMock()
    // Process A: the sampling requests reach it on the tool's stream, and it dies before answering them.
    const store = new MemoryStore()
    const before = await connect({store})
    before.client.setRequestHandler(CreateMessageRequestSchema, () => new Promise<never>(() => {}))
    const call = before.client.callTool({name: 'ask', arguments: {count: 2}}).catch((error: unknown) => error)
    await until(() => mock.pendingRequests().length === 2)
    const sessionId = before.transport.sessionId!
    await before.client.close()
    await call

    // Process B: holds the session ID, lost every cursor.
    const after = await connect({sessionId})
    await until(() => after.sampled.length === 2 && mock.answers.size === 2)

    expect(mock.requests('POST', 'initialize')).toHaveLength(1)
    const attach = mock.requests('GET').at(-1)!
    expect(attach.sessionId).toBe(sessionId)
    expect(attach.lastEventId).toBeUndefined()
    expect([...mock.answers.values()].map((answers) => answers.length)).toEqual([1, 1])
    expect(mock.executions).toEqual({ask: 1})
    expect(after.transport.metrics).toMatchObject({sessionResumptions: 1, reemittedRequests: 2, replayedEvents: 0})
    const [reconnect] = eventsOf(after.events, 'reconnect')
    expect(reconnect).toMatchObject({
      branch: 'session-resumption',
      headers: {'mcp-session-id': sessionId, 'last-event-id': undefined},
    })
    await after.client.close()
  })
})

describe('failure 2: an event ID that outlived its session', () => {
  it('resumes with the dead session, gets 404, surfaces session-expired and never re-sends the tools/call', async () => {
    const mock = useMock({retryMs: 50})
    const {client, transport, errors} = await connect()
    const sessionId = transport.sessionId!
    // The server closes the tool's stream after its priming event (polling), then garbage-collects the session.
    mock.faults.cutNext({after: 1, how: 'close', on: 'POST'})
    const call = client.callTool({name: 'slow', arguments: {steps: 3, delayMs: 20}}).catch((error: unknown) => error)
    await until(() => mock.requests('POST', 'tools/call').length === 1)
    mock.faults.expireSession(sessionId, {closeConnections: false})
    const error = await call
    expect(codeOf(error)).toBe('session-expired')
    const resumes = mock.requests('GET').filter((entry) => entry.lastEventId !== undefined)
    expect(resumes).toEqual([
      expect.objectContaining({sessionId, status: 404, lastEventId: expect.stringMatching(/^p\d+_\d+$/)}),
    ])
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    expect(transport.sessionId).toBeUndefined()
    expect(errors.filter((reported) => reported.message.includes('expired'))).toHaveLength(1)
    await client.close()
  })

  it('a 404 to the answer of a server request is never retried, and the tools/call is not re-sent', async () => {
    const mock = useMock()
    const {client, transport} = await connect()
    const sessionId = transport.sessionId!
    let answer: (() => void) | undefined
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      await new Promise<void>((resolve) => (answer = resolve))
      return {model: 'm', role: 'assistant', content: {type: 'text', text: 'late'}}
    })
    const call = client.callTool({name: 'ask'}).catch((error: unknown) => error)
    await until(() => answer !== undefined)
    mock.faults.expireSession(sessionId)
    answer!()

    expect(codeOf(await call)).toBe('session-expired')
    await until(() => mock.requests('POST').some((entry) => entry.status === 404))
    const answers = mock.requests('POST').filter((entry) => entry.rpcMethod === undefined)
    expect(answers).toEqual([expect.objectContaining({sessionId, status: 404})])
    expect(mock.requests('POST', 'tools/call')).toHaveLength(1)
    expect(mock.executions).toEqual({ask: 1})
    await client.close()
  })

  it('the app re-initializes after expiry: close and connect the Client again, a new session starts', async () => {
    const mock = useMock()
    const {client, transport} = await connect()
    mock.faults.expireSession(transport.sessionId)
    const error = await client.callTool({name: 'echo'}).catch((caught: unknown) => caught)
    expect(codeOf(error)).toBe('session-expired')
    expect(transport.sessionId).toBeUndefined()

    await client.close()
    await client.connect(transport)
    expect(transport.sessionId).toBe('session-2')
    await client.callTool({name: 'echo'})
    expect(mock.executions).toEqual({echo: 1})
    expect(transport.metrics.newSessions).toBe(2)
    await client.close()
  })

  // The SDK Client's connect() chains the onmessage it finds on the transport: close() drops its wrapper, or after
  // close() + connect() every message would be dispatched twice (a sampling handler run twice).
  it('after close() and connect() on the same transport, each message reaches the Client once', async () => {
    useMock()
    const {client, transport, errors, sampled} = await connect()
    await client.close()
    await client.connect(transport)
    try {
      await client.callTool({name: 'ask'})
      expect(sampled).toEqual(['question 1'])
      expect(errors).toEqual([])
    } finally {
      await client.close()
    }
  })
})

describe('a session that expires under calls sent at once', () => {
  it('rejects every call with session-expired, emits one session-expired naming the session, and leaves onerror quiet', async () => {
    const mock = useMock()
    const {client, transport, events, errors} = await connect()
    // Served, then kept open and silent, the standalone stream does not find the session gone before the calls do.
    await untilGetsServed()
    mock.faults.expireSession(transport.sessionId, {closeConnections: false})
    // The server answers neither call before it has both: msw 3 runs a handler some turns after its fetch, and the
    // first 404 would end the session before the second call reached the server.
    let seen = 0
    let bothSeen: () => void = () => {}
    const both = new Promise<void>((resolve) => (bothSeen = resolve))
    network.use(
      http.post(url, async ({request}) => {
        if (((await request.clone().json()) as {method?: string}).method !== 'tools/call') return undefined
        if (++seen === 2) bothSeen()
        await both
        return mock.handle(request)
      }),
    )
    const calls = await Promise.all(
      [client.callTool({name: 'echo'}), client.callTool({name: 'echo'})].map((call) =>
        call.catch((error: unknown) => error),
      ),
    )
    expect(calls.map(codeOf)).toEqual(['session-expired', 'session-expired'])
    expect(mock.requests('POST', 'tools/call').map((entry) => entry.status)).toEqual([404, 404])
    expect(eventsOf(events, 'session-expired')).toEqual([
      {type: 'session-expired', sessionId: 'session-1', settledRequests: 1},
    ])
    expect(errors).toEqual([])
    await client.close()
  })
})
