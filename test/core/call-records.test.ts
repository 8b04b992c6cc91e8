/**
 * A journaled call as data (docs/design.md#the-call-journal): the digest of its arguments, and which stored call
 * records a next process takes and which it discards, with why. Through the public API: `digestArguments`, and a
 * transport started on a store that holds the records.
 */
import {createHash} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {MemoryStore, ResumableHTTPClientTransport, type JsonValue, type TransportEvent} from '../../src/index.ts'
import {digestArguments} from '../../src/journal.ts'
import {connect, eventsOf, until, url, useMock} from '../fixtures/harness.ts'

const namespace = 'mcp-resumable-http:http://mcp.test/mcp'
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

describe("the digest of a call's arguments", () => {
  it.each<[string, unknown, string]>([
    ['no arguments are the empty object', undefined, '{}'],
    ['null arguments are the empty object', null, '{}'],
    ['keys are sorted at every level', {b: 1, a: {d: [2], c: 'x'}}, '{"a":{"c":"x","d":[2]},"b":1}'],
    [
      'many keys come in code-unit order, whatever order they were written in',
      {m: 1, b: 2, z: 3, a: 4, k: 5, B: 6},
      '{"B":6,"a":4,"b":2,"k":5,"m":1,"z":3}',
    ],
    ['keys are in UTF-16 code-unit order, not code-point order', {'\uffff': 1, '😀': 2}, '{"😀":2,"\uffff":1}'],
    ['a key that is undefined is left out, as in JSON', {a: undefined, b: null}, '{"b":null}'],
    [
      'arrays keep their order; an undefined item is null, as in JSON',
      [3, undefined, 'a', {y: 1, x: 2}, [true]],
      '[3,null,"a",{"x":2,"y":1},[true]]',
    ],
    ['an empty array is an empty array', {list: []}, '{"list":[]}'],
    [
      'keys and strings are escaped as JSON escapes them',
      {'say "hi"': 'line\nnext', é: 'é'},
      '{"say \\"hi\\"":"line\\nnext","é":"é"}',
    ],
    ['a scalar is its JSON', 'text', '"text"'],
  ])('%s', (_, args, canonical) => {
    expect(digestArguments(args)).toBe(sha256(canonical))
  })

  it('is the same for the same arguments written in another key order, and differs when a value or an array order differs', () => {
    const digest = digestArguments({scene: 'intro', options: {fps: 30, hd: true}})
    expect(digestArguments({options: {hd: true, fps: 30}, scene: 'intro'})).toBe(digest)
    expect(digestArguments({scene: 'intro', options: {fps: 31, hd: true}})).not.toBe(digest)
    expect(digestArguments([1, 2])).not.toBe(digestArguments([2, 1]))
    expect(digestArguments({a: 1})).not.toBe(digestArguments([1]))
  })
})

/** A record of a settled call that a next process takes as it is (nothing is sent for it). */
const valid = {
  callId: 'c1',
  method: 'tools/call',
  name: 'echo',
  argumentsDigest: 'd',
  clientId: 1,
  wireId: 0,
  era: 'legacy',
  state: 'completed',
  startedAt: 1,
}

/** Starts a transport with the call journal on a store holding `record` under call `c1`; what it listed and reported. */
async function loadRecord(record: JsonValue): Promise<{listed: string[]; discarded: string[]; kept: boolean}> {
  const store = new MemoryStore()
  await store.set(`${namespace}#call:c1`, record)
  const events: TransportEvent[] = []
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    store,
    callJournal: true,
    onEvent: (event) => events.push(event),
  })
  await transport.start()
  const listed = transport.calls.list().map((call) => call.state)
  await transport.close()
  const discarded = eventsOf(events, 'record-discarded').map((event) => event.reason)
  return {listed, discarded, kept: (await store.get(`${namespace}#call:c1`)) !== undefined}
}

describe('a stored call record a next process loads', () => {
  it.each<[string, JsonValue, string]>([
    ['a string', 'c1', 'a call record that is not an object'],
    ['null', null, 'a call record that is not an object'],
    ['an array', [valid], 'a call record that is not an object'],
    ['without its callId', {...valid, callId: 1}, 'a call without its ID, method, name or digest'],
    ['without its method', {...valid, method: null}, 'a call without its ID, method, name or digest'],
    ['without its name', {...valid, name: 2}, 'a call without its ID, method, name or digest'],
    ['without its digest', {...valid, argumentsDigest: true}, 'a call without its ID, method, name or digest'],
    ['without the Client request ID', {...valid, clientId: null}, 'a call without the Client request ID'],
    ['with a wire ID below 0', {...valid, wireId: -1}, 'a call without its wire ID or start'],
    ['with a wire ID that is no integer', {...valid, wireId: 1.5}, 'a call without its wire ID or start'],
    ['without its start', {...valid, startedAt: '1'}, 'a call without its wire ID or start'],
    ['of no era', {...valid, era: 'future'}, 'a call of no era'],
    ['in a state that is no string', {...valid, state: 3}, 'a call in no known state'],
    ['delivered: such a call has no record', {...valid, state: 'delivered'}, 'a call in no known state'],
    ['in a task state without its task', {...valid, state: 'task'}, 'a task call without its task ID'],
    [
      'in a task state whose task has no ID',
      {...valid, state: 'task', task: {status: 'working'}},
      'a task call without its task ID',
    ],
  ])('%s: is discarded with why, and deleted', async (_, record, why) => {
    const {listed, discarded, kept} = await loadRecord(record)
    expect([listed, discarded, kept]).toEqual([[], [`invalid record of call c1: ${why}`], false])
  })

  it.each<[string, JsonValue, string]>([
    ['a Client request ID that is a string', {...valid, clientId: 'x-1'}, 'completed'],
    ['wire ID 0 and the modern era', {...valid, wireId: 0, era: 'modern'}, 'completed'],
    ['input-required', {...valid, state: 'input-required'}, 'input-required'],
    ['failed', {...valid, state: 'failed', error: {code: 1, message: 'no'}}, 'failed'],
    ['cancelled', {...valid, state: 'cancelled'}, 'cancelled'],
    ['outcome-unknown', {...valid, state: 'outcome-unknown', reason: 'why'}, 'outcome-unknown'],
    ['sent, with no stream left: its outcome is unknown', {...valid, state: 'sent'}, 'outcome-unknown'],
  ])('with %s: is listed, and kept', async (_, record, state) => {
    expect(await loadRecord(record)).toEqual({listed: [state], discarded: [], kept: true})
  })
})

describe('a stored call as the app sees it', () => {
  it('leaves out what only the transport needs: its session, its progress token on the wire, its envelope', async () => {
    const store = new MemoryStore()
    await store.set(`${namespace}#call:c1`, {
      ...valid,
      sessionId: 's1',
      progressToken: 9,
      envelope: {'io.modelcontextprotocol/protocolVersion': '2026-07-28'},
    })
    const transport = new ResumableHTTPClientTransport(new URL(url), {store, callJournal: true})
    await transport.start()
    expect(transport.calls.list()).toEqual([{...valid, inherited: true}])
    await transport.close()
  })
})

describe('waiting for a call', () => {
  it('ends when the Client received its answer: the call is delivered', async () => {
    useMock()
    const {client, transport} = await connect({callJournal: true})
    const call = client.callTool({name: 'slow', arguments: {steps: 2, delayMs: 20}})
    await until(() => transport.calls.list().length === 1)
    const waiting = transport.calls.wait(transport.calls.list()[0]!.callId, AbortSignal.timeout(2000))
    await call
    expect(await waiting).toMatchObject({name: 'slow', state: 'delivered'})
    await client.close()
  })
})
