/**
 * The call journal (`transport.calls`, docs/design.md#the-call-journal) with the SDK Client against the reference
 * server: what it records, when a record goes, what a later process finds, and bad input.
 */
import {describe, expect, it} from 'vitest'
import {MemoryStore, type FetchLike, type JournaledCall} from '../../src/index.ts'
import {digestArguments} from '../../src/journal.ts'
import {connect, dieMidCall, eventsOf, until, useMock} from '../fixtures/harness.ts'
import {SlowApplyStore} from '../fixtures/recording-store.ts'

const namespace = 'mcp-resumable-http:http://mcp.test/mcp'
const stateChanges = (events: Parameters<typeof eventsOf>[0]): JournaledCall['state'][] =>
  eventsOf(events, 'call-changed').map((event) => event.call.state)

describe('the call journal', () => {
  it('is off unless asked for: a tools/call writes no record, and a stored one is not loaded', async () => {
    useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    expect(before.transport.calls.list()).toHaveLength(1)
    const {client, transport, events} = await connect({store})
    await client.callTool({name: 'slow', arguments: {steps: 2, delayMs: 10}})
    expect([transport.calls.list(), eventsOf(events, 'call-changed')]).toEqual([[], []])
    await client.close()
    // Only the first process's record, untouched.
    expect(await store.list(`${namespace}#call:`)).toHaveLength(1)
  })

  it('records a tools/call while it runs, with its progress, and lets it go once the Client has the answer', async () => {
    useMock()
    const store = new MemoryStore()
    const {client, transport, events} = await connect({callJournal: true, store})
    const during: JournaledCall[][] = []
    await client.callTool({name: 'slow', arguments: {steps: 2, delayMs: 10}}, undefined, {
      onprogress: () => during.push(transport.calls.list()),
    })
    expect(during[1]).toEqual([
      expect.objectContaining({
        name: 'slow',
        state: 'sent',
        era: 'legacy',
        inherited: false,
        argumentsDigest: digestArguments({steps: 2, delayMs: 10}),
      }),
    ])
    expect(during[1]![0]!.progress).toMatchObject({progress: 2})
    expect(stateChanges(events).at(-1)).toBe('delivered')
    expect(transport.calls.list()).toEqual([])
    // Other requests are not journaled: a read can be sent again.
    await client.listTools()
    expect(eventsOf(events, 'call-changed').every((event) => event.call.method === 'tools/call')).toBe(true)
    await client.close() // waits for the store writes
    expect(await store.list(`${namespace}#call:`)).toEqual([])
  })

  it('lets a call go when the transport settles it for the Client, and when the Client cancels it', async () => {
    const mock = useMock()
    const {client, transport, events} = await connect({callJournal: true})
    mock.faults.failNext({method: 'POST', status: 500, rpcMethod: 'tools/call'})
    await expect(client.callTool({name: 'echo'})).rejects.toThrow()
    const cancel = new AbortController()
    const call = client.callTool({name: 'slow', arguments: {steps: 50, delayMs: 20}}, undefined, {
      signal: cancel.signal,
    })
    await until(() => transport.calls.list().length === 1)
    cancel.abort()
    await expect(call).rejects.toThrow()
    await until(() => transport.calls.list().length === 0)
    expect(stateChanges(events)).toEqual(['sent', 'delivered', 'sent', 'delivered'])
    await client.close()
  })

  it('keeps a call over close(): the next process lists it, learns its result from the resumed stream, and keeps it until forgotten', async () => {
    useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    const [call] = before.transport.calls.list()
    expect(call).toMatchObject({name: 'slow', state: 'sent', progress: {progress: 2}})

    const after = await connect({callJournal: true, store})
    expect(after.transport.calls.list()).toEqual([
      expect.objectContaining({callId: call!.callId, state: 'sent', inherited: true}),
    ])
    const settled = await after.transport.calls.wait(call!.callId, AbortSignal.timeout(3000))
    expect(settled).toMatchObject({
      state: 'completed',
      progress: {progress: 6},
      result: {content: [expect.objectContaining({type: 'text'})]},
    })
    await after.client.close()

    const later = await connect({callJournal: true, store})
    expect(later.transport.calls.list()).toEqual([
      expect.objectContaining({callId: call!.callId, state: 'completed', inherited: true}),
    ])
    await later.transport.calls.forget(call!.callId)
    expect(await store.list(`${namespace}#call:`)).toEqual([])
    await later.client.close()
  })

  it('settles a call outcome-unknown when its process ended and no stream of it is left to resume', async () => {
    useMock()
    const store = new MemoryStore()
    const before = await dieMidCall(store, 2, {callJournal: true})
    const [call] = before.transport.calls.list()
    for (const key of await store.list(`${namespace}#stream:request`)) await store.delete(key)
    const after = await connect({callJournal: true, store})
    expect(after.transport.calls.list()).toEqual([
      expect.objectContaining({
        callId: call!.callId,
        state: 'outcome-unknown',
        reason: expect.stringContaining('no stream'),
      }),
    ])
    await after.client.close()
  })

  it.each([
    ['strict', 1],
    ['relaxed', 0],
  ] as const)(
    'with durability %s, %i journal record(s) are in the store when the tools/call POST leaves',
    async (durability, expected) => {
      useMock()
      const store = new SlowApplyStore(30)
      const atPost: number[] = []
      const fetch: FetchLike = (input, init) => {
        if (typeof init?.body === 'string' && init.body.includes('"tools/call"'))
          atPost.push(store.appliedCalls().length)
        return globalThis.fetch(input, init)
      }
      const {client} = await connect({callJournal: true, store, fetch, durability})
      await client.callTool({name: 'echo'})
      expect(atPost).toEqual([expected])
      await client.close()
    },
  )

  it('reports an invalid call record and deletes it; wait() on a call it does not hold is a TypeError, and stops at its signal', async () => {
    useMock()
    const store = new MemoryStore()
    await store.set(`${namespace}#call:bad`, {callId: 'bad', state: 'sent'})
    const {client, transport, events} = await connect({callJournal: true, store})
    expect(eventsOf(events, 'record-discarded')).toEqual([
      {
        type: 'record-discarded',
        key: `${namespace}#call:bad`,
        reason: expect.stringContaining('invalid record of call bad'),
      },
    ])
    await expect(transport.calls.wait('nope')).rejects.toBeInstanceOf(TypeError)
    const call = client.callTool({name: 'slow', arguments: {steps: 50, delayMs: 20}}).catch(() => undefined)
    await until(() => transport.calls.list().length === 1)
    const stop = new AbortController()
    const waiting = transport.calls.wait(transport.calls.list()[0]!.callId, stop.signal)
    stop.abort()
    await expect(waiting).rejects.toMatchObject({code: 'aborted'})
    await client.close()
    await call
    expect(await store.get(`${namespace}#call:bad`)).toBeUndefined()
  })
})
