/**
 * A refused cursor is dropped for good, in memory and in the store, and only that cursor: the next event the
 * stream brings is a valid position again (docs/design.md#cursor). And closing stops reconnects without calling
 * them failures.
 */
import {describe, expect, it} from 'vitest'
import {connect, eventsOf, interceptGets, storedSession, until, url, useMock} from '../fixtures/harness.ts'
import {quiet} from '../fixtures/timing.ts'
import {frame, sse} from '../fixtures/wire.ts'

const notice = {jsonrpc: '2.0', method: 'notifications/tools/list_changed'}

describe('a refused cursor', () => {
  it.each([
    ['the standalone stream', 'standalone', [undefined, 'bogus', undefined, undefined]],
    // Its request ends without its answer: the live standalone stream re-attaches without a cursor (docs/failures.md).
    ['a response stream a dead process left', 'request:7', [undefined, undefined, 'bogus', undefined, undefined]],
  ])('of %s is deleted from the store, so a later process never sends it again', async (_, stream, expected) => {
    const mock = useMock()
    const store = await storedSession()
    // A cursor the server does not know, stored in the session it does know.
    await store.set(`mcp-resumable-http:${url}#stream:${stream}`, {sessionId: 'session-1', lastEventId: 'bogus'})

    const second = await connect({store})
    await until(
      () =>
        eventsOf(second.events, 'cursor-rejected').length === 1 && mock.requests('GET').length === expected.length - 1,
    )
    await second.client.close()
    const third = await connect({store})
    await until(() => mock.requests('GET').length === expected.length)
    await quiet()
    await third.client.close()

    expect(mock.requests('GET').map((get) => get.lastEventId)).toEqual(expected)
  })

  it('stops mattering once the stream brings a new event: the next break resumes from that one', async () => {
    const mock = useMock()
    const gets = interceptGets(mock, (_get, index) => {
      if (index === 0) return sse([frame('g1', notice)], 'error')
      // The first cursor is refused; the stream is re-attached without one, brings g2, and breaks again.
      if (index === 1) return new Response(null, {status: 400})
      if (index === 2) return sse([frame('g2', notice)], 'error')
      return sse([], 'open')
    })
    const {client, errors} = await connect()
    await until(() => gets.length === 4)
    await client.close()

    expect(gets.map((get) => get.lastEventId)).toEqual([undefined, 'g1', undefined, 'g2'])
    expect(errors.map((error) => (error as {code?: unknown}).code)).toEqual(['resumption-rejected'])
  })
})

describe('closing', () => {
  it('reports no failed reconnect for the streams it stops while they wait to reconnect', async () => {
    const mock = useMock()
    const {client, events, errors} = await connect()
    mock.faults.cutNext({after: 2, how: 'close', retryMs: 5_000, on: 'POST'})
    const call = client
      .callTool({name: 'slow', arguments: {steps: 5}}, undefined, {onprogress: () => {}})
      .catch((error: unknown) => error)
    await until(() => mock.requests('POST', 'tools/call').length === 1 && !mock.stream('p2')!.connected)
    await quiet(50)
    const before = events.length
    await client.close()
    await call

    expect(eventsOf(events.slice(before), 'reconnect-failed')).toEqual([])
    expect(errors).toEqual([])
  })
})
