/**
 * `resumeTimeoutMs`: a response stream resumed with `Last-Event-ID` that brings nothing settles its request
 * `outcome-unknown` instead of hanging, against the official SDK server (1.32) over real sockets. The SDK's
 * example event store answers an event ID it does not know with 200 and a stream that stays silent for ever.
 */
import {describe, expect, it} from 'vitest'
import {resolveOptions} from '../../src/options.ts'
import {callTool, eventsOf, pause, useStacks, type Stack} from '../fixtures/interop.ts'
import type {SdkServerOptions} from '../fixtures/sdk-server.ts'
import {afterEventWith, type TcpProxy} from '../fixtures/tcp-proxy.ts'

const startStack = useStacks()
let proxy: TcpProxy | undefined

async function start(options: SdkServerOptions, resumeTimeoutMs: number): Promise<Stack> {
  const stack = await startStack('ours', options, {resumeTimeoutMs})
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

  it('an unknown Last-Event-ID answered 200 and silence (example-like store): outcome-unknown at the deadline, never re-sent', async () => {
    const {server, peer} = await start({store: 'plain'}, 300)
    const cut = cutCallAfter('"progress":2')
    const call = callTool(peer, 'slow')
    await cut
    server.forgetEvents()
    const startedAt = Date.now()
    await call.settled
    const waited = Date.now() - startedAt

    expect(call.state).toBe('error')
    expect(call.failure).toBe('outcome-unknown')
    expect(waited).toBeGreaterThanOrEqual(300)
    expect(waited).toBeLessThan(1500)
    expect(call.progress).toEqual([1, 2])
    expect(server.requests('POST', 'tools/call')).toHaveLength(1)
    expect(server.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toHaveLength(1)
    expect(server.executions).toEqual({slow: 1})
    // The initialize stream completed; the call's stream was closed for its silence.
    expect(eventsOf(peer, 'stream-closed').filter((event) => event.stream === 'request').map((event) => event.reason)).toEqual([
      'completed',
      'silent',
    ])
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

  it('a resumed connection that brought an event may then stay quiet for longer than the deadline', async () => {
    const {server, peer} = await start({quietMs: 600}, 200)
    const cut = cutCallAfter('"progress":1')
    const call = callTool(peer, 'burst')
    await cut
    await call.settled
    expect(call.text).toBe('burst done')
    expect(call.progress).toEqual([1, 2])
    expect(server.requests('GET').filter((entry) => entry.lastEventId !== undefined)).toHaveLength(1)
    expect(server.executions).toEqual({burst: 1})
  })
})
