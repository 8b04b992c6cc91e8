/**
 * Stream resumption and session resumption against the official SDK servers (v1 on Node, v1 and v2 Web-standard)
 * over real sockets, through a TCP proxy that cuts them, with this package's transport and with the SDK's: each
 * scenario with the server parts (`ResumableEventStore`, `reemitPendingRequests`) and without the part it guards.
 * The counters show which of the two resumptions did the work: replayed events and re-emitted requests move apart.
 */
import {CallToolResultSchema} from '@modelcontextprotocol/sdk/types.js'
import {afterEach, describe, expect, it} from 'vitest'
import {MemoryEventLog, type EventBounds, type Lookup} from '../../src/server.ts'
import {callTool, connectPeer, pause, until, type Call, type Kind} from '../fixtures/interop.ts'
import {
  flavours,
  startTestServer,
  useServerStacks,
  type Flavour,
  type ServerStack,
  type TestServer,
  type TestServerOptions,
} from '../fixtures/sdk-servers.ts'
import {afterEventWith, afterHeaders} from '../fixtures/tcp-proxy.ts'

type Stack = ServerStack
const start = useServerStacks()

/** Long enough for anything owed to have arrived on 127.0.0.1: here, to show that nothing does. */
const nothingComesMs = 600

const isAttach = (chunk: string): boolean => /^GET /.test(chunk) && !/last-event-id/i.test(chunk)
const isToolsCall = (chunk: string): boolean => chunk.includes('"tools/call"')

const parts = (flavour: Flavour, options: Partial<TestServerOptions> = {}): TestServerOptions => ({
  flavour,
  store: 'resumable',
  reemit: {},
  ...options,
})
const sessionOf = ({server, peer}: Stack) => server.session(peer.transport.sessionId!)

/** How `call` ended, or 'hung' when it had not after {@link nothingComesMs}. */
async function outcome(call: Call): Promise<string> {
  await Promise.race([call.settled, pause(nothingComesMs)])
  return call.state === 'pending'
    ? 'hung'
    : call.state === 'result'
      ? `result: ${call.text ?? ''}`
      : `error: ${call.failure ?? ''}`
}

describe.each(flavours)('on %s', (flavour) => {
  describe.each(['ours', 'sdk'] as Kind[])('%s transport', (kind) => {
    it('a call cut right after its sampling request resumes from that event: answered once, the result once', async () => {
      const stack = await start(kind, parts(flavour), {
        request: isToolsCall,
        at: afterEventWith('sampling/createMessage'),
      })
      const call = callTool(stack.peer, 'sample')
      await stack.cut
      expect(await outcome(call)).toBe('result: sampled: answer 1')
      expect(stack.peer.handled.sampling).toBe(1)
      expect(stack.server.executions['sample']).toBe(1)
      expect(stack.seen.filter((entry) => entry.lastEventId !== undefined).map((entry) => entry.status)).toEqual([200])
      expect(sessionOf(stack).store!.metrics.streamResumptions).toBe(1)
    })

    it('without an event store the same cut loses the call: its stream has no event ID to resume from', async () => {
      const stack = await start(
        kind,
        {flavour, store: 'none', reemit: false},
        {request: isToolsCall, at: afterEventWith('sampling/createMessage')},
      )
      const call = callTool(stack.peer, 'sample')
      await stack.cut
      expect(await outcome(call)).toBe(kind === 'ours' ? 'error: outcome-unknown' : 'hung')
      await until(() => stack.server.results['sample'] !== undefined)
      expect(stack.seen.filter((entry) => entry.lastEventId !== undefined)).toEqual([])
    })

    /** The standalone stream, cut after the notification `first`: its cursor is that notification's event. */
    async function standaloneCut(options: TestServerOptions, reconnectMs: number): Promise<Stack> {
      const stack = await start(kind, options, {request: isAttach, at: afterEventWith('"first"')}, reconnectMs)
      await until(() => stack.server.requests('GET').some((entry) => entry.status === 200))
      await stack.server.notify('first')
      await stack.cut
      // While the stream is down, a tool asks the user something on it.
      await callTool(stack.peer, 'ask-later').settled
      return stack
    }

    it('a request sent on the standalone stream while it is cut comes back by stream resumption, replayed by the store', async () => {
      const stack = await standaloneCut(parts(flavour), 150)
      await until(() => stack.server.lateAnswers.length === 1)
      expect(stack.server.lateAnswers).toEqual(['accept'])
      expect(stack.peer.handled.elicitation).toBe(1)
      expect(stack.seen.filter((entry) => entry.lastEventId !== undefined).map((entry) => entry.status)).toEqual([200])
      expect(sessionOf(stack).store!.metrics).toMatchObject({streamResumptions: 1, replayedEvents: 1})
      expect(sessionOf(stack).pending!.metrics).toMatchObject({sessionResumptions: 1, reemittedRequests: 0})
    })

    it("with the SDK example store the standalone stream's resumption is answered 200 and silence: the request is lost", async () => {
      const stack = await standaloneCut({flavour, store: 'sdk-example', reemit: false}, 150)
      await until(() => stack.seen.some((entry) => entry.lastEventId !== undefined))
      await pause(nothingComesMs)
      // v2 ends a replayed stream it does not know at once, and the client comes back: 200 each time.
      expect(
        new Set(stack.seen.filter((entry) => entry.lastEventId !== undefined).map((entry) => entry.status)),
      ).toEqual(new Set([200]))
      expect(stack.peer.handled.elicitation).toBe(0)
      expect(stack.server.lateAnswers).toEqual([])
    })

    /** The standalone stream, cut before it carried any event: a client has no cursor for it. */
    async function unprimedCut(options: TestServerOptions): Promise<Stack> {
      const stack = await start(kind, options, {request: isAttach, at: afterHeaders}, 150)
      await stack.cut
      await callTool(stack.peer, 'ask-later').settled
      return stack
    }

    it('a request sent on a standalone stream cut before it carried an event ID comes back by session resumption, re-emitted', async () => {
      const stack = await unprimedCut(parts(flavour))
      await until(() => stack.server.lateAnswers.length === 1)
      expect(stack.peer.handled.elicitation).toBe(1)
      expect(stack.seen.filter((entry) => entry.lastEventId !== undefined)).toEqual([])
      expect(sessionOf(stack).pending!.metrics).toMatchObject({sessionResumptions: 2, reemittedRequests: 1})
      expect(sessionOf(stack).store!.metrics).toMatchObject({streamResumptions: 0, replayedEvents: 0})
    })

    it('without re-emission that request is lost: the new stream starts empty', async () => {
      const stack = await unprimedCut({flavour, store: 'resumable', reemit: false})
      await until(() => stack.server.requests('GET', 'without').filter((entry) => entry.status === 200).length === 2)
      await pause(nothingComesMs)
      expect(stack.peer.handled.elicitation).toBe(0)
      expect(stack.server.lateAnswers).toEqual([])
    })

    it('a cursor the store no longer holds is refused with 400, never answered with silence', async () => {
      // Events live 100 ms; the client comes back after 400 ms or more (the SDK's transport waits the `retry` of
      // any priming event it saw, for every stream: the server's retryInterval).
      const stack = await standaloneCut(
        parts(flavour, {storeOptions: () => ({maxAgeMs: 100}), retryInterval: 400}),
        400,
      )
      await until(() => stack.seen.some((entry) => entry.lastEventId !== undefined))
      if (kind === 'ours') {
        // This transport drops the refused cursor and attaches without it: the request comes again.
        await until(() => stack.server.lateAnswers.length === 1)
        expect(stack.seen.filter((entry) => entry.lastEventId !== undefined).map((entry) => entry.status)).toEqual([
          400,
        ])
        expect(sessionOf(stack).pending!.metrics).toMatchObject({sessionResumptions: 2, reemittedRequests: 1})
      } else {
        // The SDK's transport tries the same cursor twice (maxRetries 2) and gives its standalone stream up.
        await until(() => stack.seen.filter((entry) => entry.lastEventId !== undefined).length === 2)
        await pause(nothingComesMs)
        expect(stack.seen.filter((entry) => entry.lastEventId !== undefined).map((entry) => entry.status)).toEqual([
          400, 400,
        ])
        expect(stack.server.lateAnswers).toEqual([])
      }
      expect(sessionOf(stack).store!.metrics).toMatchObject({streamResumptions: 0, replayedEvents: 0})
    })
  })
})

/** A GET of the standalone stream of `sessionId` with `lastEventId`, as any client sends it: its status, and what it brought within {@link nothingComesMs}. */
async function resumeRaw(url: string, sessionId: string, lastEventId: string): Promise<{status: number; body: string}> {
  const response = await fetch(url, {
    headers: {
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'last-event-id': lastEventId,
      'mcp-protocol-version': '2025-11-25',
    },
  })
  const reader = response.body!.getReader()
  const timer = setTimeout(() => void reader.cancel(), nothingComesMs)
  let body = ''
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    body += new TextDecoder().decode(chunk.value)
  clearTimeout(timer)
  return {status: response.status, body}
}

/** Two sessions on `server`: an event ID of the first (its call's first event, as the SDK's transport reports it), and the second's ID. */
async function twoSessions(server: TestServer): Promise<{foreign: string; sessionId: string}> {
  const first = await connectPeer('sdk', server.url)
  const second = await connectPeer('sdk', server.url)
  const tokens: string[] = []
  await first.client.request({method: 'tools/call', params: {name: 'slow'}}, CallToolResultSchema, {
    onresumptiontoken: (token) => void tokens.push(token),
  })
  const sessionId = second.transport.sessionId!
  await first.client.close()
  await second.client.close()
  return {foreign: tokens[0]!, sessionId}
}

/** A memory log whose events vanish between the SDK's two look-ups of a `Last-Event-ID`, once armed. */
class VanishingLog extends MemoryEventLog {
  armed = false
  override async after(
    stream: number,
    seq: number,
    now: number,
    bounds: EventBounds,
    withEvents: boolean,
  ): Promise<Lookup> {
    const found = await super.after(stream, seq, now, bounds, withEvents)
    if (this.armed && !withEvents) await this.clear()
    return found
  }
}

describe.each(flavours)('what %s answers to a Last-Event-ID', (flavour) => {
  const servers: TestServer[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close()
  })
  const serve = async (options: TestServerOptions): Promise<TestServer> => {
    const server = await startTestServer(options)
    servers.push(server)
    return server
  }

  it('of another session: ResumableEventStore refuses it with 400 (the SDK\'s "Invalid event ID format")', async () => {
    const server = await serve(parts(flavour))
    const {foreign, sessionId} = await twoSessions(server)
    const {status, body} = await resumeRaw(server.url, sessionId, foreign)
    expect(status).toBe(400)
    expect(JSON.parse(body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {code: -32000, message: 'Invalid event ID format'},
    })
    expect(server.session(sessionId).store!.metrics).toMatchObject({refusedEventIds: 1, streamResumptions: 0})
  })

  it('of another session: the SDK example store answers 200 and a stream that never brings anything', async () => {
    const server = await serve({flavour, store: 'sdk-example', reemit: false})
    const {foreign, sessionId} = await twoSessions(server)
    expect(await resumeRaw(server.url, sessionId, foreign)).toEqual({status: 200, body: ''})
  })

  it('whose events went between the two look-ups of the SDK: replayEventsAfter throws and the SDK answers 500', async () => {
    const log = new VanishingLog()
    const server = await serve(parts(flavour, {storeOptions: () => ({log})}))
    const first = await connectPeer('sdk', server.url)
    const tokens: string[] = []
    await first.client.request({method: 'tools/call', params: {name: 'slow'}}, CallToolResultSchema, {
      onresumptiontoken: (token) => void tokens.push(token),
    })
    const sessionId = first.transport.sessionId!
    await first.client.close()
    log.armed = true
    const {status, body} = await resumeRaw(server.url, sessionId, tokens[0]!)
    expect(status).toBe(500)
    expect(JSON.parse(body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {code: -32000, message: 'Error replaying events'},
    })
    expect(server.session(sessionId).store!.metrics).toMatchObject({
      refusedEventIds: 1,
      streamResumptions: 0,
      replayedEvents: 0,
    })
  })
})
