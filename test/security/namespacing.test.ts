/**
 * Sessions and cursors kept in one store, over real sockets: endpoints that differ in their query string never
 * share them, and the store holds a digest of the query, never its value.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {connectTo} from '../fixtures/client.ts'
import {RecordingStore} from '../fixtures/recording-store.ts'
import {mcpOrigin, type McpOrigin} from './origins.ts'

let mcp: McpOrigin | undefined
afterEach(async () => {
  await mcp?.close()
})

describe('one store, one endpoint, two query strings', () => {
  it('?token=ALICE then ?token=BOB: BOB initializes his own session and never sends ALICE’s', async () => {
    mcp = await mcpOrigin()
    const store = new RecordingStore()
    const alice = await connectTo(`${mcp.url}?token=ALICE`, {store})
    const aliceSession = alice.transport.sessionId!
    await alice.client.close()

    const bob = await connectTo(`${mcp.url}?token=BOB`, {store})
    expect(bob.transport.sessionId).toBeDefined()
    expect(bob.transport.sessionId).not.toBe(aliceSession)
    const bobRequests = mcp.received.filter((request) => request.target.endsWith('?token=BOB'))
    expect(bobRequests.map((request) => request.headers['mcp-session-id'])).not.toContain(aliceSession)
    expect(mcp.server.requests('POST', 'initialize')).toHaveLength(2)
    await bob.client.close()
  })

  it('the store keys hold a digest of the query and no record holds its value; the same query finds its session again', async () => {
    mcp = await mcpOrigin()
    const store = new RecordingStore()
    const first = await connectTo(`${mcp.url}?token=ALICE-7c1e`, {store})
    const sessionId = first.transport.sessionId
    await first.client.close()

    expect([...store.keys]).toEqual(
      expect.arrayContaining([expect.stringMatching(/\/mcp\?sha256=[0-9a-f]{32}#session$/)]),
    )
    expect(JSON.stringify(store.writes)).not.toContain('ALICE-7c1e')

    const again = await connectTo(`${mcp.url}?token=ALICE-7c1e`, {store})
    expect(again.transport.sessionId).toBe(sessionId)
    expect(mcp.server.requests('POST', 'initialize')).toHaveLength(1)
    await again.client.close()
  })
})
