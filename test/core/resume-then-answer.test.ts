/**
 * Resume, then answer (docs/design.md#session): a restarted process POSTs its answer to a server request it restored
 * only once the stream that brought the request has a connection again, or cannot be resumed. Against the reference
 * server in `mode: 'live-result-only'`, which loses a call's result written while no connection of its stream is
 * live, as Cloudflare's McpAgent does (test/interop/deployed-servers.test.ts runs that server itself).
 */
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {http, HttpResponse} from 'msw'
import {describe, expect, it} from 'vitest'
import {MemoryStore} from '../../src/index.ts'
import type {LoggedRequest, ServerMode} from '../../src/testing/index.ts'
import {connect, network, storedSession, until, url, useMock} from '../fixtures/harness.ts'

/** The next process's first resumption waits at least this backoff (jittered up to twice it); an answer need not. */
const backoff = {minDelayMs: 300, maxDelayMs: 1000}

/** Where the first resumption GET and the first answer POST (202) stand in the server's log. */
function order(log: readonly LoggedRequest[]): {resumed: number; answered: number} {
  return {
    resumed: log.findIndex((entry) => entry.method === 'GET' && entry.lastEventId !== undefined),
    answered: log.findIndex(
      (entry) => entry.method === 'POST' && entry.rpcMethod === undefined && entry.status === 202,
    ),
  }
}

/**
 * A first process on `store` that calls `ask` and closes, as a process dies (its records stay), while the tool waits
 * for the sampling answer. With `answered`, its Client gave the answer, but no POST of it reached the server.
 */
async function dieWhileAsked(store: MemoryStore, answered: boolean, mode: ServerMode = 'live-result-only') {
  const mock = useMock({mode})
  let asked = 0
  let refused = 0
  const first = await connect({store, callJournal: true})
  first.client.setRequestHandler(CreateMessageRequestSchema, () => {
    asked++
    return answered ? {model: 'm', role: 'assistant', content: {type: 'text', text: 'kept'}} : new Promise(() => {})
  })
  let refusing = true
  network.use(
    http.post(url, async ({request}) => {
      const {method} = (await request.clone().json()) as {method?: unknown}
      if (!refusing || method !== undefined) return undefined
      refused++
      return HttpResponse.error()
    }),
  )
  const call = first.client.callTool({name: 'ask'}).catch(() => 'the process died')
  await until(() => asked === 1 && (!answered || refused > 0))
  await first.transport.close()
  await call
  refusing = false
  // The server holds no connection of the call's stream any more.
  await until(() => mock.session().streams.every((stream) => !stream.connected))
  return mock
}

/** The next process on `store`, and what became of the call the previous one left, as its journal says. */
async function nextProcess(store: MemoryStore) {
  const next = await connect({store, callJournal: true, reconnect: backoff})
  const [call] = next.transport.calls.list()
  return {next, settled: await next.transport.calls.wait(call!.callId)}
}

describe('a restarted process with a server request restored with a call', () => {
  it("resumes the call's stream before it answers the request: the result the answer ends the tool with arrives", async () => {
    const store = new MemoryStore()
    const mock = await dieWhileAsked(store, false)
    const {next, settled} = await nextProcess(store)
    expect(settled).toMatchObject({state: 'completed', result: {content: [{type: 'text', text: 'answer 1'}]}})
    const {resumed, answered} = order(mock.log)
    expect(resumed).toBeGreaterThan(-1)
    expect(answered).toBeGreaterThan(resumed)
    expect(mock.counters.droppedResults).toBe(0)
    expect(mock.executions).toEqual({ask: 1})
    await next.client.close()
  })

  it('sends again the answer the previous process gave, which the server never took, once the stream is resumed', async () => {
    const store = new MemoryStore()
    const mock = await dieWhileAsked(store, true)
    const {next, settled} = await nextProcess(store)
    expect(settled).toMatchObject({state: 'completed', result: {content: [{type: 'text', text: 'kept'}]}})
    const {resumed, answered} = order(mock.log)
    expect(answered).toBeGreaterThan(resumed)
    expect([...mock.answers.values()].map((answers) => answers.length)).toEqual([1])
    expect(mock.counters.droppedResults).toBe(0)
    await next.client.close()
  })

  it('answers once the cursor is refused, without waiting for a connection that will not come: outcome-unknown', async () => {
    const store = new MemoryStore()
    const mock = await dieWhileAsked(store, false, 'correct')
    // The server forgets the call's stream (its events too), not the session: the cursor is refused.
    mock.faults.expireStreams()
    const {next, settled} = await nextProcess(store)
    expect(settled.state).toBe('outcome-unknown')
    await until(() => mock.answers.size === 1)
    const {resumed, answered} = order(mock.log)
    expect(mock.log[resumed]?.status).toBe(422)
    expect(answered).toBeGreaterThan(resumed)
    await next.client.close()
  })

  it("answers at once a request whose stream left no cursor, while another call's stream waits to resume", async () => {
    const mock = useMock()
    const store = await storedSession()
    const prefix = `mcp-resumable-http:${url}#`
    await store.set(`${prefix}stream:request:5`, {sessionId: 'session-1', lastEventId: 'p9_4'})
    await store.set(`${prefix}request:"s1"`, {
      sessionId: 'session-1',
      message: {
        jsonrpc: '2.0',
        id: 's1',
        method: 'sampling/createMessage',
        params: {messages: [{role: 'user', content: {type: 'text', text: 'still there?'}}], maxTokens: 10},
      },
      stream: 'request:7',
    })
    const next = await connect({store, reconnect: backoff})
    await until(() => next.sampled.length === 1 && order(mock.log).resumed > -1)
    const {resumed, answered} = order(mock.log)
    expect(answered).toBeGreaterThan(-1)
    expect(answered).toBeLessThan(resumed)
    await next.client.close()
  })
})
