/**
 * The two failures of docs/design.md#two-failures, against the official SDK servers (v1 on Node, v1 and v2
 * Web-standard) over real sockets: each reproduced with a naive server (the SDK example's `InMemoryEventStore`, no
 * re-emission) and gone with this package's server parts (`ResumableEventStore`, `reemitPendingRequests`).
 */
import {CallToolResultSchema, CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {afterEach, describe, expect, it} from 'vitest'
import {connectPeer, pause, until, type Kind, type Peer} from '../fixtures/interop.ts'
import {
  flavours,
  recordingFetch,
  startTestServer,
  type SeenGet,
  type StoreKind,
  type TestServer,
} from '../fixtures/sdk-servers.ts'

const servers: TestServer[] = []
const peers: Peer[] = []
afterEach(async () => {
  for (const peer of peers.splice(0)) await peer.client.close()
  for (const server of servers.splice(0)) await server.close()
})

async function serve(
  flavour: (typeof flavours)[number],
  parts: boolean,
  naive: StoreKind = 'sdk-example',
): Promise<TestServer> {
  const server = await startTestServer({flavour, store: parts ? 'resumable' : naive, reemit: parts ? {} : false})
  servers.push(server)
  return server
}

async function peerOf(
  kind: Kind,
  url: string,
  ...options: Parameters<typeof connectPeer> extends [unknown, unknown, ...infer Rest] ? Rest : never
): Promise<Peer> {
  const peer = await connectPeer(kind, url, ...options)
  peers.push(peer)
  return peer
}

/** Long enough for anything owed to have arrived on 127.0.0.1: here, to show that nothing does. */
const nothingComesMs = 600

describe.each(flavours)(
  'failure 1 on %s: a client restarts without its event IDs while the tool waits for two samplings',
  (flavour) => {
    describe.each(['ours', 'sdk'] as Kind[])('%s transport', (kind) => {
      /** Process A gets both requests on the tool's stream and dies unanswered; process B holds the session ID alone. */
      async function restart(server: TestServer): Promise<{before: Peer; after: Peer; sessionId: string}> {
        const before = await peerOf(kind, server.url)
        let received = 0
        before.client.setRequestHandler(CreateMessageRequestSchema, () => {
          received++
          return new Promise<never>(() => {})
        })
        void before.client.callTool({name: 'ask-twice'}).catch(() => {})
        await until(() => received === 2)
        const sessionId = before.transport.sessionId!
        await before.client.close()
        const after = await peerOf(kind, server.url, {sessionId}, {sessionId})
        // The SDK's transport opens its standalone stream only on the 202 to notifications/initialized (it skips
        // initialize for a known session): a restarted SDK app attaches by sending it again.
        if (kind === 'sdk') await after.client.notification({method: 'notifications/initialized'})
        return {before, after, sessionId}
      }

      it('the naive server replays nothing and sends neither request again: the tool waits for ever', async () => {
        const server = await serve(flavour, false)
        const {after, sessionId} = await restart(server)
        await until(
          () =>
            server.requests('GET', 'without').filter((entry) => entry.sessionId === sessionId && entry.status === 200)
              .length === 2,
        )
        await pause(nothingComesMs)
        expect(after.handled.sampling).toBe(0)
        expect(server.results['ask-twice']).toBeUndefined()
      })

      it('with the server parts, both requests come again on the new stream, are answered once each, and the tool finishes; nothing is replayed', async () => {
        const server = await serve(flavour, true)
        const {after, sessionId} = await restart(server)
        await until(() => server.results['ask-twice'] !== undefined)
        expect(server.results['ask-twice']).toEqual(['answer 1, answer 2'])
        expect(after.handled.sampling).toBe(2)
        expect(server.executions['ask-twice']).toBe(1)
        expect(server.session(sessionId).pending!.metrics).toMatchObject({
          pendingRequests: 0,
          sessionResumptions: 2,
          reemittedRequests: 2,
        })
        expect(server.session(sessionId).store!.metrics).toMatchObject({streamResumptions: 0, replayedEvents: 0})
      })
    })
  },
)

describe.each(flavours)('failure 2 on %s: an event ID outlives its session', (flavour) => {
  // This package's transport never sends a cursor outside the session that gave it (docs/design.md#cursor), and
  // refuses the SDK's resumptionToken: the SDK's transport, resuming by the token an app kept, makes the mistake.
  async function stale(
    server: TestServer,
  ): Promise<{token: string; next: string; seen: SeenGet[]; answer: Promise<unknown>}> {
    const first = await peerOf('sdk', server.url)
    const tokens: string[] = []
    await first.client.request({method: 'tools/call', params: {name: 'slow'}}, CallToolResultSchema, {
      onresumptiontoken: (token) => void tokens.push(token),
    })
    // The session ends (here by DELETE; a server's expiry does the same): its events should go with it.
    await fetch(server.url, {method: 'DELETE', headers: {'mcp-session-id': first.transport.sessionId!}})
    const seen: SeenGet[] = []
    const second = await peerOf('sdk', server.url, {}, {fetch: recordingFetch(seen)})
    // The app resumes "its call" in the new session with the first token it kept (the call's priming event).
    const answer = second.client
      .request({method: 'tools/call', params: {name: 'slow'}}, CallToolResultSchema, {
        resumptionToken: tokens[0]!,
        timeout: 1500,
      })
      .then(
        (result) => result.content,
        (error: unknown) => (error as Error).message,
      )
    return {token: tokens[0]!, next: second.transport.sessionId!, seen, answer}
  }

  it("a server with one event log for all sessions replays the dead session's events into the new one: an old result for a call never made", async () => {
    const server = await serve(flavour, false, 'sdk-example-shared')
    const {token, seen, answer} = await stale(server)
    expect(await answer).toEqual([{type: 'text', text: 'done after 4 steps'}])
    expect(server.executions['slow']).toBe(1)
    expect(seen).toContainEqual({lastEventId: token, status: 200})
  })

  it('with ResumableEventStore, the ID is foreign to the new session: refused with 400, nothing of the old session replayed', async () => {
    const server = await serve(flavour, true)
    const {token, next, seen, answer} = await stale(server)
    await until(() => seen.some((entry) => entry.lastEventId === token))
    expect(seen.filter((entry) => entry.lastEventId === token)).toEqual([{lastEventId: token, status: 400}])
    expect(server.session(next).store!.metrics).toMatchObject({
      streamResumptions: 0,
      replayedEvents: 0,
      refusedEventIds: 1,
    })
    // The SDK's transport reports the refusal through onerror and does not try again: its call times out.
    expect(await answer).toMatch(/timed out/)
    expect(server.executions['slow']).toBe(1)
  })
})
