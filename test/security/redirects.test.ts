/**
 * Redirects, over real sockets: the MCP server on one origin of 127.0.0.1, another origin on another port that
 * records what reaches it. Nothing the transport sends (body, `Mcp-Session-Id`, `Last-Event-ID`, the app's
 * headers) may reach another origin unless the app lists it.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {
  isTransportError,
  ResumableHTTPClientTransport,
  type ResumableHTTPClientTransportOptions,
} from '../../src/index.ts'
import {codeOf, connectTo, until} from '../fixtures/client.ts'
import {mcpOrigin, recordingOrigin, type McpOrigin, type RecordingOrigin} from './origins.ts'

const apiKey = 'app-credential-7f3a9c'
const opened: {close(): Promise<void>}[] = []

afterEach(async () => {
  await Promise.all(opened.splice(0).map((origin) => origin.close()))
})

async function origins(): Promise<{mcp: McpOrigin; other: RecordingOrigin}> {
  const mcp = await mcpOrigin()
  const other = await recordingOrigin()
  opened.push(mcp, other)
  return {mcp, other}
}

function connect(mcp: McpOrigin, options: ResumableHTTPClientTransportOptions = {}): ReturnType<typeof connectTo> {
  return connectTo(mcp.url, {requestInit: {headers: {'x-api-key': apiKey}}, ...options})
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error,
  )
}

describe('redirects to another origin', () => {
  it('a 307 answering a tools/call POST fails the call: the other origin receives nothing, neither the body nor the session ID nor the app header, and answers nothing', async () => {
    const {mcp, other} = await origins()
    const {client} = await connect(mcp)
    mcp.rule = ({rpcMethod}) =>
      rpcMethod === 'tools/call' ? {status: 307, location: `${other.origin}/mcp`} : undefined

    const error = await failure(client.callTool({name: 'echo', arguments: {note: 'private'}}))
    expect(isTransportError(error, 'http')).toBe(true)
    expect(error).toMatchObject({status: 307})
    expect((error as Error).message).toContain(`to another origin, ${other.origin}/mcp`)
    expect((error as Error).message).toContain('allowedRedirectOrigins')
    expect(other.received).toEqual([])
    expect(mcp.server.executions).toEqual({})
    await client.close()
  })

  it.each([301, 302, 303])('a %i answering the POST turns into no GET to the other origin', async (status) => {
    const {mcp, other} = await origins()
    const {client} = await connect(mcp)
    mcp.rule = ({rpcMethod}) => (rpcMethod === 'tools/call' ? {status, location: `${other.origin}/mcp`} : undefined)

    const error = await failure(client.callTool({name: 'echo', arguments: {}}))
    expect(isTransportError(error, 'http')).toBe(true)
    expect(other.received).toEqual([])
    await client.close()
  })

  it('a 307 of the standalone GET is not followed: the stream is given up at its first attempt and reported through onerror', async () => {
    const {mcp, other} = await origins()
    mcp.rule = ({method}) => (method === 'GET' ? {status: 307, location: `${other.origin}/mcp`} : undefined)
    const {client, errors} = await connect(mcp, {reconnect: {maxAttempts: 4, minDelayMs: 1, maxDelayMs: 5}})

    await until(() => errors.length > 0)
    expect(isTransportError(errors[0], 'http')).toBe(true)
    expect(errors[0]).toMatchObject({status: 307})
    expect(other.received).toEqual([])
    // Final: a redirect not followed comes back the same on every attempt.
    expect(mcp.received.filter((request) => request.method === 'GET')).toHaveLength(1)
    await client.close()
  })

  it('a reconnect with Last-Event-ID redirected elsewhere sends that origin neither the cursor nor the session; the call is settled outcome-unknown', async () => {
    const {mcp, other} = await origins()
    const {client} = await connect(mcp)
    mcp.server.faults.cutNext({after: 2, how: 'error', on: 'POST'})
    mcp.rule = ({method, url}) =>
      method === 'GET' && url.pathname === '/mcp' ? {status: 308, location: `${other.origin}/mcp`} : undefined

    const error = await failure(
      client.callTool({name: 'slow', arguments: {steps: 5, delayMs: 10}}, undefined, {onprogress: () => {}}),
    )
    expect(codeOf(error)).toBe('outcome-unknown')
    expect(
      mcp.received.some((request) => request.method === 'GET' && request.headers['last-event-id'] !== undefined),
    ).toBe(true)
    expect(other.received).toEqual([])
    expect(mcp.server.executions).toEqual({slow: 1})
    await client.close()
  })

  it('an origin listed in allowedRedirectOrigins is followed with the whole request; unlisted, the same redirect fails at connect', async () => {
    const front = await mcpOrigin()
    const target = await mcpOrigin()
    opened.push(front, target)
    front.rule = () => ({status: 307, location: target.url})

    expect(codeOf(await failure(connect(front)))).toBe('http')
    expect(target.received).toEqual([])

    const {client, transport} = await connect(front, {allowedRedirectOrigins: [target.origin]})
    const result = await client.callTool({name: 'echo', arguments: {n: 1}})
    expect(result.content).toEqual([{type: 'text', text: 'echo: {"n":1}'}])
    expect(target.server.executions).toEqual({echo: 1})
    const call = target.received.find((request) => request.body.includes('tools/call'))!
    expect(call.headers).toMatchObject({'x-api-key': apiKey, 'mcp-session-id': transport.sessionId})
    await client.close()
  })

  it("redirectPolicy 'follow' leaves the redirect to fetch, which takes the request to the other origin", async () => {
    const {mcp, other} = await origins()
    const {client} = await connect(mcp, {redirectPolicy: 'follow'})
    mcp.rule = ({rpcMethod}) =>
      rpcMethod === 'tools/call' ? {status: 307, location: `${other.origin}/mcp`} : undefined

    const result = await client.callTool({name: 'echo', arguments: {}})
    expect(result.content).toEqual([{type: 'text', text: 'from the other origin'}])
    expect(other.received).toEqual([
      expect.objectContaining({method: 'POST', headers: expect.objectContaining({'x-api-key': apiKey})}),
    ])
    await client.close()
  })
})

describe('redirects within the origin', () => {
  it.each([307, 308])('a %i keeps the method and the body: the call succeeds and the tool ran once', async (status) => {
    const {mcp} = await origins()
    const {client, transport} = await connect(mcp)
    mcp.rule = ({rpcMethod, url}) =>
      rpcMethod === 'tools/call' && url.pathname === '/mcp' ? {status, location: '/moved'} : undefined

    const result = await client.callTool({name: 'echo', arguments: {n: 2}})
    expect(result.content).toEqual([{type: 'text', text: 'echo: {"n":2}'}])
    expect(mcp.server.executions).toEqual({echo: 1})
    const moved = mcp.received.filter((request) => request.target === '/moved')
    expect(moved).toEqual([
      expect.objectContaining({
        method: 'POST',
        headers: expect.objectContaining({'mcp-session-id': transport.sessionId, 'x-api-key': apiKey}),
      }),
    ])
    expect(moved[0]!.body).toContain('"name":"echo"')
    await client.close()
  })

  it('a 301 of the standalone GET is followed as a GET with its session ID: the stream is open at the new path', async () => {
    const {mcp} = await origins()
    mcp.rule = ({method, url}) =>
      method === 'GET' && url.pathname === '/mcp' ? {status: 301, location: '/stream'} : undefined
    const {client, transport, events} = await connect(mcp)

    await until(() => mcp.server.session(transport.sessionId).streams.some((stream) => stream.connected))
    expect(mcp.received.filter((request) => request.target === '/stream')).toEqual([
      expect.objectContaining({
        method: 'GET',
        headers: expect.objectContaining({'mcp-session-id': transport.sessionId}),
      }),
    ])
    expect(events.filter((event) => event.type === 'reconnect-failed')).toEqual([])
    await client.close()
  })

  it('a 303 of a POST is an error that says so: the JSON-RPC message is never sent again as a GET', async () => {
    const {mcp} = await origins()
    const {client} = await connect(mcp)
    mcp.rule = ({rpcMethod}) => (rpcMethod === 'tools/call' ? {status: 303, location: '/moved'} : undefined)

    const error = await failure(client.callTool({name: 'echo', arguments: {}}))
    expect(isTransportError(error, 'http')).toBe(true)
    expect(error).toMatchObject({status: 303})
    expect((error as Error).message).toContain('would turn the POST into a GET')
    expect(mcp.received.filter((request) => request.target === '/moved')).toEqual([])
    await client.close()
  })

  it('a redirect loop ends after 5 hops with an error, the request sent 6 times in all', async () => {
    const {mcp} = await origins()
    const {client} = await connect(mcp)
    mcp.rule = ({rpcMethod, url}) =>
      rpcMethod === 'tools/call'
        ? {status: 307, location: `/mcp?hop=${Number(url.searchParams.get('hop') ?? 0) + 1}`}
        : undefined

    const error = await failure(client.callTool({name: 'echo', arguments: {}}))
    expect(isTransportError(error, 'http')).toBe(true)
    expect((error as Error).message).toContain('more than 5 times')
    expect(mcp.received.filter((request) => request.body.includes('tools/call'))).toHaveLength(6)
    await client.close()
  })
})

describe('redirect options', () => {
  it('refuses a redirectPolicy it does not know and an allowed origin that is not an http(s) URL, naming them', () => {
    const url = new URL('http://127.0.0.1:9/mcp')
    const policy = {redirectPolicy: 'manual'} as unknown as ResumableHTTPClientTransportOptions
    expect(() => new ResumableHTTPClientTransport(url, policy)).toThrow(
      /redirectPolicy must be 'same-origin' or 'follow', got "manual"/,
    )
    expect(() => new ResumableHTTPClientTransport(url, {allowedRedirectOrigins: ['mcp.example.com']})).toThrow(
      TypeError,
    )
    expect(() => new ResumableHTTPClientTransport(url, {allowedRedirectOrigins: ['ftp://mcp.example.com']})).toThrow(
      /http\(s\) origins/,
    )
  })
})
