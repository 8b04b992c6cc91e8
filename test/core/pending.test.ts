/**
 * `pendingRequests` and the `pending-changed` event: what an app needs to arm a keep-alive (an MV3 service worker's
 * alarm) exactly while requests are in flight, its own and those of a previous process being resumed.
 */
import {describe, expect, it} from 'vitest'
import {MemoryStore, type JsonValue} from '../../src/index.ts'
import {connect, dieMidCall, eventsOf, interceptGets, until, useMock} from '../fixtures/harness.ts'

/** The counts announced by `pending-changed`, in order. */
const counts = (events: Parameters<typeof eventsOf>[0]): number[] =>
  eventsOf(events, 'pending-changed').map((event) => event.pending)

describe('pending requests', () => {
  it('counts each request from its send to its answer, and announces every change', async () => {
    useMock()
    const {client, transport, events} = await connect()
    expect(transport.pendingRequests).toBe(0)
    // initialize went 0 → 1 → 0.
    expect(counts(events)).toEqual([1, 0])
    const seen: number[] = []
    const slow = client.callTool({name: 'slow', arguments: {steps: 3, delayMs: 20}}, undefined, {
      onprogress: () => seen.push(transport.pendingRequests),
    })
    const echo = client.callTool({name: 'echo'})
    expect(transport.pendingRequests).toBe(0) // the Client sends on a later turn
    await echo
    await slow
    expect(seen.length).toBe(3)
    expect(seen.every((count) => count === 1)).toBe(true)
    expect(transport.pendingRequests).toBe(0)
    expect(counts(events)).toEqual([1, 0, 1, 2, 1, 0])
    await client.close()
  })

  it('stops counting a request that failed or was cancelled', async () => {
    const mock = useMock()
    const {client, transport, events} = await connect()
    mock.faults.failNext({method: 'POST', status: 500, rpcMethod: 'tools/call'})
    await expect(client.callTool({name: 'echo'})).rejects.toThrow()
    expect(transport.pendingRequests).toBe(0)
    const cancel = new AbortController()
    const call = client.callTool({name: 'slow', arguments: {steps: 50, delayMs: 20}}, undefined, {
      signal: cancel.signal,
    })
    await until(() => transport.pendingRequests === 1)
    cancel.abort()
    await expect(call).rejects.toThrow()
    expect(transport.pendingRequests).toBe(0)
    expect(counts(events).slice(2)).toEqual([1, 0, 1, 0])
    await client.close()
  })

  it("counts a previous process's call while its stream is resumed, until its answer arrives; its progress comes with the call", async () => {
    useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2)
    // Its call counted from its send until the transport closed (after initialize: 0 → 1 → 0).
    expect(counts(before.events)).toEqual([1, 0, 1, 0])
    expect(before.transport.pendingRequests).toBe(0)

    const after = await connect({store})
    // Counted from start(): the stream of the earlier call is being resumed.
    expect(counts(after.events)[0]).toBe(1)
    await until(() => after.transport.metrics.unmatchedResponses === 1)
    expect(after.transport.pendingRequests).toBe(0)
    expect(counts(after.events)).toEqual([1, 0])

    const [answer] = eventsOf(after.events, 'unmatched-response')
    expect(answer!.message).toMatchObject({result: {content: [{type: 'text', text: 'done after 6 steps'}]}})
    // The replayed progress of that call reaches the app with its values and the call it belongs to.
    const orphaned = eventsOf(after.events, 'orphaned-notification')
    expect(orphaned.map((event) => (event.message as unknown as {params: {progress: number}}).params.progress)).toEqual(
      [3, 4, 5, 6],
    )
    for (const event of orphaned) {
      expect(event.call).toEqual({method: 'tools/call', name: 'slow', clientId: 1})
      // On the wire, the token is the request's wire ID: the ID its unmatched answer carries.
      expect((event.message as unknown as {params: {progressToken: JsonValue}}).params.progressToken).toBe(answer!.id)
    }
    await after.client.close()
  })

  it("stops counting a previous process's call whose stream cannot be resumed", async () => {
    const mock = useMock()
    const store = new MemoryStore()
    await dieMidCall(store, 1)
    // The server refuses the stored cursor: the earlier call's answer can never come.
    interceptGets(mock, (get) => (get.lastEventId === undefined ? undefined : new Response(null, {status: 400})))

    const after = await connect({store})
    await until(() => eventsOf(after.events, 'stream-closed').some((event) => event.stream === 'request'))
    expect(after.transport.pendingRequests).toBe(0)
    expect(counts(after.events)).toEqual([1, 0])
    expect(after.transport.metrics.unmatchedResponses).toBe(0)
    await after.client.close()
  })

  it("stops counting a previous process's call when the transport closes", async () => {
    const mock = useMock()
    const store = new MemoryStore()
    await dieMidCall(store, 1)
    // The resumed stream stays open and silent: the call is still pending when the transport closes.
    interceptGets(mock, (get) =>
      get.lastEventId === undefined
        ? undefined
        : new Response(new ReadableStream(), {headers: {'content-type': 'text/event-stream'}}),
    )

    const after = await connect({store})
    await until(() => after.transport.metrics.streamResumptions === 1)
    expect(after.transport.pendingRequests).toBe(1)
    await after.client.close()
    expect(after.transport.pendingRequests).toBe(0)
    expect(counts(after.events)).toEqual([1, 0])
  })
})
