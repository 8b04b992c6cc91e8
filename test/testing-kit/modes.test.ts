/**
 * The reference server's modes, over both adapters: the boundary (docs/design.md#what-a-server-must-do), the two
 * faulty servers of docs/design.md#two-failures, and one that loses what nobody reads, so that a client can be shown
 * failing against them.
 */
import {describe, expect, it} from 'vitest'
import {until} from '../fixtures/client.ts'
import {backends, messagesOf, rawClient, readEvents, serve} from '../fixtures/kit.ts'

const idsOf = (messages: Record<string, unknown>[]): unknown[] =>
  messages.map((message) => message['id'] ?? message['method'])

describe.each(backends)('modes over %s', (backend) => {
  describe('cursor-per-session (faulty)', () => {
    it("event IDs are a bare per-session counter, and a stream's resumption replays the other streams' events too", async () => {
      const served = await serve(backend, {mode: 'cursor-per-session'})
      const client = await rawClient(served)
      const first = await readEvents(await client.call('echo', {n: 1}))
      const second = await readEvents(await client.call('echo', {n: 2}))
      expect([...first.events, ...second.events].map((event) => event.id)).toEqual(['1', '2', '3', '4'])
      const resumed = await readEvents(await client.get('1'))
      // Stream p1's own answer, then stream p2's priming event and answer.
      expect(resumed.events.map((event) => event.id)).toEqual(['2', '3', '4'])
      expect(idsOf(messagesOf(resumed.events))).toEqual([1, 2])
    })

    it('a stream attached without Last-Event-ID is "caught up": pending requests are never re-emitted', async () => {
      const served = await serve(backend, {mode: 'cursor-per-session'})
      const client = await rawClient(served)
      await readEvents(await client.call('ask', {count: 2}), 3)
      const attached = await readEvents(await client.get(), 1, 300)
      expect(attached).toEqual({events: [], ending: 'timeout'})
      expect(served.server.counters.reemittedRequests).toBe(0)
      expect(served.server.pendingRequests()).toHaveLength(2)
    })
  })

  describe('global-log (faulty)', () => {
    it("accepts a Last-Event-ID of a garbage-collected session with a fresh one, and replays the dead session's stream", async () => {
      const served = await serve(backend, {mode: 'global-log'})
      const dead = await rawClient(served)
      served.server.faults.cutNext({after: 1, how: 'close'})
      const cut = await readEvents(await dead.call('ask'))
      served.server.faults.expireSession(dead.sessionId, {closeConnections: false})
      const fresh = await rawClient(served)
      const replay = await readEvents(await fresh.get(cut.events[0]!.id), 1)
      // A server request of session-1, now delivered in session-2: its answer matches nothing.
      expect(messagesOf(replay.events)).toMatchObject([{id: 'srv-1', method: 'sampling/createMessage'}])
      expect((await fresh.answer('srv-1', 'too late')).status).toBe(202)
      expect(served.server.counters).toMatchObject({unmatchedAnswers: 1, refusedResumptions: 0})
    })
  })

  describe('live-result-only (faulty)', () => {
    it('loses a result written while no connection of its stream is live: its resumption brings nothing more', async () => {
      const served = await serve(backend, {mode: 'live-result-only'})
      const client = await rawClient(served)
      // The priming event and the request; then the reader goes, and with it the stream's only connection.
      const asked = await readEvents(await client.call('ask'), 2)
      await until(() => served.server.stream('p1')?.connected === false)
      expect((await client.answer('srv-1', 'too soon')).status).toBe(202)
      await until(() => served.server.counters.droppedResults === 1)
      expect(await readEvents(await client.get(asked.events[1]!.id))).toEqual({events: [], ending: 'closed'})
      expect(served.server.executions).toEqual({ask: 1})
    })

    it('writes the result to a connection of its stream that is live: the stream resumed, then the answer', async () => {
      const served = await serve(backend, {mode: 'live-result-only'})
      const client = await rawClient(served)
      const asked = await readEvents(await client.call('ask'), 2)
      const resumed = await client.get(asked.events[1]!.id)
      await until(() => served.server.stream('p1')?.connected === true)
      await client.answer('srv-1', 'in time')
      expect(messagesOf((await readEvents(resumed)).events)).toMatchObject([
        {id: 1, result: {content: [{type: 'text', text: 'in time'}]}},
      ])
      expect(served.server.counters.droppedResults).toBe(0)
    })
  })

  describe('correct', () => {
    it("refuses what the faulty modes accept: another session's event ID; and re-emits pending requests on a plain GET", async () => {
      const served = await serve(backend)
      const dead = await rawClient(served)
      const cut = await readEvents(await dead.call('ask'), 2)
      served.server.faults.expireSession(dead.sessionId, {closeConnections: false})
      const fresh = await rawClient(served)
      expect((await fresh.get(cut.events[0]!.id)).status).toBe(422)
      const other = await rawClient(served)
      await readEvents(await other.call('ask'), 2)
      expect(messagesOf((await readEvents(await other.get(), 1)).events)).toMatchObject([{id: 'srv-1'}])
    })
  })

  it('the mode switches at run time; an unknown one is a TypeError', async () => {
    const served = await serve(backend)
    const client = await rawClient(served)
    const before = await readEvents(await client.call('echo'))
    served.server.mode = 'cursor-per-session'
    const after = await readEvents(await client.call('echo'))
    expect([before.events[0]!.id, after.events[0]!.id]).toEqual(['p1_1', '3'])
    expect(served.server.mode).toBe('cursor-per-session')
    expect(() => (served.server.mode = 'lenient' as never)).toThrow(TypeError)
  })
})
