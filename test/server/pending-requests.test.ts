/**
 * reemitPendingRequests around each SDK server transport, over real sockets through a TCP proxy that cuts them: the
 * server's unanswered requests come again on a stream attached without `Last-Event-ID` (session resumption), never
 * on one resumed with it (stream resumption), and the memory they take is bounded.
 */
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {WebStandardStreamableHTTPServerTransport} from '@modelcontextprotocol/server'
import {describe, expect, it} from 'vitest'
import {
  reemitPendingRequests,
  ResumableEventStore,
  type PendingRequestsOptions,
  type SessionResumption,
} from '../../src/server.ts'
import {callTool, until, type Kind} from '../fixtures/interop.ts'
import {
  flavours,
  useServerStacks,
  type Flavour,
  type ServerStack,
  type TestServerOptions,
} from '../fixtures/sdk-servers.ts'
import {afterEventWith} from '../fixtures/tcp-proxy.ts'

interface Stack extends ServerStack {
  /** Samplings the Client received and holds unanswered; `answer()` lets them go. */
  held: string[]
  answer: () => void
}

const stackOf = useServerStacks()
/** The Client's first reconnect delay, in ms (its longest: twice that). */
const reconnectMs = 20

const isAttach = (chunk: string): boolean => /^GET /.test(chunk) && !/last-event-id/i.test(chunk)

/** Cuts the connection just before the first event carrying `needle`: the client never sees that event. */
const beforeEventWith =
  (needle: string) =>
  (received: string): number | undefined => {
    const at = received.indexOf(needle)
    return at < 0 ? undefined : received.lastIndexOf('\n\n', at) + 2
  }

/**
 * The server, a proxy, and a Client on `kind` whose sampling handler holds every request until `answer()`. The
 * Client's first standalone stream is cut before the notification `cut-standalone` (`server.notify`) reaches it:
 * a stream that never carried an event ID, which a client attaches again without `Last-Event-ID`. The Client
 * reconnects {@link reconnectMs} apart, up to twice that, and fetches through `recordingFetch` (useServerStacks).
 */
async function start(
  flavour: Flavour,
  kind: Kind,
  reemit: PendingRequestsOptions | false,
  options: Partial<TestServerOptions> = {},
): Promise<Stack> {
  const stack = await stackOf(
    kind,
    {flavour, store: 'resumable', reemit, ...options},
    {request: isAttach, at: beforeEventWith('cut-standalone')},
    reconnectMs,
  )
  const {server, peer} = stack
  const held: string[] = []
  const waiting: (() => void)[] = []
  peer.client.setRequestHandler(CreateMessageRequestSchema, async () => {
    held.push('sampling')
    await new Promise<void>((resolve) => waiting.push(resolve))
    return {model: 'm', role: 'assistant', content: {type: 'text', text: `answer ${held.length}`}}
  })
  await until(() => server.requests('GET').some((entry) => entry.status === 200))
  return {...stack, held, answer: () => waiting.splice(0).forEach((resolve) => resolve())}
}

const sessionOf = (stack: Stack) => stack.server.session(stack.peer.transport.sessionId!)
const attachesAgain = async ({server}: Stack): Promise<void> => {
  const before = server.requests('GET', 'without').filter((entry) => entry.status === 200).length
  await server.notify('cut-standalone')
  await until(() => server.requests('GET', 'without').filter((entry) => entry.status === 200).length === before + 1)
}

describe.each(flavours)('on %s', (flavour) => {
  it('sends a request still unanswered again on a stream attached without Last-Event-ID, counts it apart from replays, and says so after each attach', async () => {
    const heard: SessionResumption[] = []
    const stack = await start(flavour, 'ours', {onSessionResumption: (resumption) => heard.push(resumption)})
    const call = callTool(stack.peer, 'sample')
    await until(() => stack.held.length === 1)
    expect(sessionOf(stack).pending!.metrics).toMatchObject({pendingRequests: 1, reemittedRequests: 0})
    await attachesAgain(stack)
    await until(() => sessionOf(stack).pending!.metrics.reemittedRequests === 1)
    stack.answer()
    await call.settled
    expect(call.text).toBe('sampled: answer 1')
    // This transport recognises the request by its ID: its handler ran once.
    expect(stack.held).toEqual(['sampling'])
    expect(sessionOf(stack).pending!.metrics).toEqual({
      pendingRequests: 0,
      sessionResumptions: 2,
      reemittedRequests: 1,
      cancelledRequests: 0,
      forgottenRequests: 0,
    })
    expect(sessionOf(stack).store!.metrics).toMatchObject({streamResumptions: 0, replayedEvents: 0})
    // The first standalone stream is an attach too, with nothing to send again.
    expect(heard).toEqual([
      {reemittedRequests: 0, cancelledRequests: 0},
      {reemittedRequests: 1, cancelledRequests: 0},
    ])
  })

  it('cancels instead when asked: the client is told, the tool gets an error as its answer', async () => {
    const heard: SessionResumption[] = []
    const stack = await start(flavour, 'ours', {
      pendingOnAttach: 'cancel',
      onSessionResumption: (resumption) => {
        heard.push(resumption)
        throw new Error('an observer that throws changes nothing')
      },
    })
    const call = callTool(stack.peer, 'sample')
    await until(() => stack.held.length === 1)
    await attachesAgain(stack)
    await call.settled
    expect(call.state).toBe('result')
    expect(call.text).toMatch(/Request cancelled: the stream that carried it was lost/)
    expect(stack.server.results['sample']).toBeUndefined()
    expect(sessionOf(stack).pending!.metrics).toMatchObject({
      pendingRequests: 0,
      reemittedRequests: 0,
      cancelledRequests: 1,
    })
    expect(heard.at(-1)).toEqual({reemittedRequests: 0, cancelledRequests: 1})
  })
})

describe('what the wrapper remembers', () => {
  it('forgets a request once answered: a later attach sends nothing again', async () => {
    const stack = await start('v1-node', 'ours', {})
    const call = callTool(stack.peer, 'sample')
    await until(() => stack.held.length === 1)
    stack.answer()
    await call.settled
    await attachesAgain(stack)
    expect(sessionOf(stack).pending!.metrics).toMatchObject({
      pendingRequests: 0,
      sessionResumptions: 2,
      reemittedRequests: 0,
    })
  })

  it('forgets a request the server gave up on (its timeout sends notifications/cancelled): a later attach sends nothing again', async () => {
    const stack = await start('v2-web', 'ours', {})
    const call = callTool(stack.peer, 'sample-briefly')
    await until(() => stack.held.length === 1)
    expect(sessionOf(stack).pending!.metrics.pendingRequests).toBe(1)
    await call.settled
    expect(call.text).toMatch(/timed out/i)
    expect(sessionOf(stack).pending!.metrics.pendingRequests).toBe(0)
    await attachesAgain(stack)
    expect(sessionOf(stack).pending!.metrics).toMatchObject({sessionResumptions: 2, reemittedRequests: 0})
  })

  it('forgets every request of a transport that closed (the session ended by DELETE)', async () => {
    const stack = await start('v1-node', 'ours', {})
    void callTool(stack.peer, 'ask-twice')
    await until(() => stack.held.length === 2)
    const session = sessionOf(stack)
    expect(session.pending!.metrics.pendingRequests).toBe(2)
    await fetch(stack.server.url, {method: 'DELETE', headers: {'mcp-session-id': stack.peer.transport.sessionId!}})
    await until(() => session.pending!.metrics.pendingRequests === 0)
  })

  it('keeps at most maxPending requests: the oldest is forgotten, counted, and not sent again', async () => {
    const stack = await start('v2-web', 'ours', {maxPending: 1})
    const call = callTool(stack.peer, 'ask-twice')
    await until(() => stack.held.length === 2)
    expect(sessionOf(stack).pending!.metrics).toMatchObject({pendingRequests: 1, forgottenRequests: 1})
    await attachesAgain(stack)
    await until(() => sessionOf(stack).pending!.metrics.reemittedRequests === 1)
    stack.answer()
    await call.settled
    expect(call.text).toBe('answer 2, answer 2')
  })

  it('keeps at most maxPendingBytes of requests', async () => {
    const stack = await start('v1-web', 'ours', {maxPendingBytes: 300})
    const call = callTool(stack.peer, 'ask-twice')
    await until(() => stack.held.length === 2)
    // One sampling request is some 180 characters of JSON: two are over 300.
    expect(sessionOf(stack).pending!.metrics).toMatchObject({pendingRequests: 1, forgottenRequests: 1})
    stack.answer()
    await call.settled
  })

  it('sends nothing again on a GET with Last-Event-ID: the store replays that stream instead', async () => {
    const stack = await start('v1-node', 'ours', {})
    const {server, proxy} = stack
    // The tool's own stream is cut after the sampling request: this transport resumes it from that event.
    const cut = proxy.cutNext({
      request: (chunk) => chunk.includes('"tools/call"'),
      at: afterEventWith('sampling/createMessage'),
    })
    const call = callTool(stack.peer, 'sample')
    await cut
    await until(() => stack.held.length === 1 && server.requests('GET', 'with').some((entry) => entry.status === 200))
    stack.answer()
    await call.settled
    expect(call.text).toBe('sampled: answer 1')
    expect(sessionOf(stack).pending!.metrics).toMatchObject({sessionResumptions: 1, reemittedRequests: 0})
    // Resumed before the answer: nothing was missed, the result came live on the resumed connection.
    expect(sessionOf(stack).store!.metrics).toMatchObject({streamResumptions: 1, replayedEvents: 0})
  })

  it('refuses a transport wrapped twice, a transport it cannot wrap, and options it cannot use, naming them', () => {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => 's',
      eventStore: new ResumableEventStore(),
    })
    reemitPendingRequests(transport)
    expect(() => reemitPendingRequests(transport)).toThrow(/wrapped already/)
    expect(() => reemitPendingRequests({} as never)).toThrow(/transport must be an SDK server transport/)
    const fresh = (): WebStandardStreamableHTTPServerTransport =>
      new WebStandardStreamableHTTPServerTransport({sessionIdGenerator: () => 's'})
    expect(() => reemitPendingRequests(fresh(), {pendingOnAttach: 'resend' as never})).toThrow(
      /options\.pendingOnAttach must be 're-emit' or 'cancel'/,
    )
    for (const name of ['maxPending', 'maxPendingBytes']) {
      for (const value of [0, -1, 2.5, '3', Number.NaN])
        expect(() => reemitPendingRequests(fresh(), {[name]: value})).toThrow(
          new RegExp(`options\\.${name} must be a positive integer`),
        )
    }
    expect(() => reemitPendingRequests(fresh(), {maxpending: 1} as never)).toThrow(/unknown option maxpending/)
    expect(() => reemitPendingRequests(fresh(), {onSessionResumption: 'log' as never})).toThrow(
      /options\.onSessionResumption must be a function/,
    )
  })
})
