/**
 * `resumeTimeoutMs`, against the official SDK server (1.32) over real sockets: a response stream resumed with
 * `Last-Event-ID` that brings no event for that long is resumed again from its newest cursor, up to three times in a
 * row with nothing new, then its request is settled `outcome-unknown` instead of hanging. server-everything's event
 * store makes a resumed connection replay and then fall silent, its answer stored and sent nowhere: the next
 * resumption brings it. The SDK's example event store answers an event ID it does not know with 200 and a stream
 * that stays silent for ever: settled after the bound. A correct server with a quiet tool answers each resumption
 * with nothing new, and the result arrives.
 */
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {resolveOptions} from '../../src/options.ts'
import {callTool, duplicates, eventsOf, pause, until, useStacks, type Stack} from '../fixtures/interop.ts'
import type {SdkServerOptions} from '../fixtures/sdk-server.ts'
import {afterEventWith, type TcpProxy} from '../fixtures/tcp-proxy.ts'

const startStack = useStacks()
let proxy: TcpProxy | undefined

async function start(options: SdkServerOptions, resumeTimeoutMs: number): Promise<Stack> {
  const stack = await startStack('ours', options, {resumeTimeoutMs, callJournal: true})
  proxy = stack.proxy
  return stack
}

/** Cuts the connection of the next `tools/call` once the event carrying `needle` has passed. */
const cutCallAfter = (needle: string): Promise<void> =>
  proxy!.cutNext({request: (chunk) => chunk.includes('"tools/call"'), at: afterEventWith(needle)})

describe('resumeTimeoutMs', () => {
  it('defaults to 60 s (the SDK Client request timeout); Infinity disables it; 0 and NaN are refused', () => {
    const url = new URL('http://h/mcp')
    expect(resolveOptions(url).resumeTimeoutMs).toBe(60_000)
    expect(resolveOptions(url, {resumeTimeoutMs: Infinity}).resumeTimeoutMs).toBe(Infinity)
    expect(() => resolveOptions(url, {resumeTimeoutMs: 0})).toThrow(TypeError)
    expect(() => resolveOptions(url, {resumeTimeoutMs: Number.NaN})).toThrow(TypeError)
  })

  it('an unknown Last-Event-ID answered 200 and silence (example-like store): resumed again three times, then outcome-unknown, never re-sent', async () => {
    const {server, peer} = await start({store: 'plain'}, 150)
    const {transport} = peer
    if (!(transport instanceof ResumableHTTPClientTransport)) throw new TypeError('the peer runs this transport')
    const cut = cutCallAfter('"progress":2')
    const call = callTool(peer, 'slow')
    await until(() => transport.calls.list().length === 1)
    // Without a signal: it ends when the call does.
    const waiting = transport.calls.wait(transport.calls.list()[0]!.callId)
    await cut
    server.forgetEvents()
    const startedAt = Date.now()
    await call.settled
    const waited = Date.now() - startedAt

    expect(call.state).toBe('error')
    expect(call.failure).toBe('outcome-unknown')
    await expect(waiting).resolves.toMatchObject({state: 'delivered'})
    // Four silences of 150 ms (and the server's retry of 100 ms before each resumption).
    expect(waited).toBeGreaterThanOrEqual(4 * 150)
    expect(waited).toBeLessThan(3000)
    expect(call.progress).toEqual([1, 2])
    expect(server.requests('POST', 'tools/call')).toHaveLength(1)
    const resumes = server.requests('GET').filter((entry) => entry.lastEventId !== undefined)
    expect(resumes).toHaveLength(4)
    expect(new Set(resumes.map((entry) => entry.lastEventId)).size).toBe(1)
    expect(server.executions).toEqual({slow: 1})
    // The initialize stream completed; the call's stream was closed for its silence.
    expect(
      eventsOf(peer, 'stream-closed')
        .filter((event) => event.stream === 'request')
        .map((event) => event.reason),
    ).toEqual(['completed', 'silent'])
  })

  it('without a deadline (Infinity) the same call is still pending long after', async () => {
    const {server, peer} = await start({store: 'plain'}, Infinity)
    const cut = cutCallAfter('"progress":2')
    const call = callTool(peer, 'slow')
    await cut
    server.forgetEvents()
    await pause(800)
    expect(call.state).toBe('pending')
  })

  it('a POST stream quiet for longer than the deadline is left alone', async () => {
    const {server, peer} = await start({quietMs: 500}, 150)
    const call = callTool(peer, 'quiet')
    await call.settled
    expect(call.text).toBe('quiet done')
    expect(server.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toHaveLength(0)
  })

  it('a correct server, its tool quiet for several deadlines after the replay: resumed again from the newest cursor each time, the result arrives once', async () => {
    const {server, peer} = await start({quietMs: 800}, 150)
    const cut = cutCallAfter('"progress":1')
    const call = callTool(peer, 'burst')
    await cut
    await call.settled
    expect(call.text).toBe('burst done')
    expect(call.progress).toEqual([1, 2])
    const resumes = server.requests('GET').filter((entry) => entry.lastEventId !== undefined)
    // The first resumption replays progress 2; each after it resumes from there, and is answered with nothing new.
    expect(resumes.length).toBeGreaterThanOrEqual(3)
    expect(new Set(resumes.slice(1).map((entry) => entry.lastEventId)).size).toBe(1)
    expect(resumes.every((entry) => entry.status === 200)).toBe(true)
    expect(server.executions).toEqual({burst: 1})
    // The initialize stream, then the call's: both completed, none settled for silence.
    const closed = () =>
      eventsOf(peer, 'stream-closed')
        .filter((event) => event.stream === 'request')
        .map((event) => event.reason)
    await until(() => closed().length === 2)
    expect(closed()).toEqual(['completed', 'completed'])
  })

  it("a server that replays and then falls silent (server-everything's store), keep-alive comments and all: the next resumption brings the stored result, once", async () => {
    // Comments every 40 ms, well within the deadline: they hold no silence off.
    const {server, peer} = await start({store: 'replay-all', keepAliveMs: 40, stepMs: 60}, 150)
    const cut = cutCallAfter('"progress":2')
    const call = callTool(peer, 'slow')
    await cut
    await call.settled

    expect(call.text).toBe('done after 6 steps')
    expect(call.progress).toEqual([1, 2, 3, 4, 5, 6])
    expect(duplicates(call.progress)).toBe(0)
    expect(server.requests('POST', 'tools/call')).toHaveLength(1)
    expect(server.requests('GET').filter((entry) => entry.lastEventId !== undefined).length).toBeGreaterThanOrEqual(2)
    expect(server.executions).toEqual({slow: 1})
  })
})
