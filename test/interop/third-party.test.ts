/**
 * Against MCP servers nobody on this project wrote, each a real process on 127.0.0.1 behind the TCP proxy that cuts
 * real sockets (test/fixtures/third-party-server.ts): `@modelcontextprotocol/server-everything` in its Streamable
 * HTTP mode, and a server built with `fastmcp`'s `httpStream` transport. Every row runs with the SDK `Client` on this
 * transport and on the SDK's `StreamableHTTPClientTransport`, and asserts what each did: how the call ended within
 * {@link hangMs} (or that it had not: `hung`), which progress reached the Client, how often the tool ran (reported by
 * the server process itself, as each run starts), how many GETs carried `Last-Event-ID`. The README's table
 * "Against third-party servers" quotes these figures.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {MemoryStore, type ResumableHTTPClientTransportOptions} from '../../src/index.ts'
import {callTool, connectPeer, pause, until, type Call, type Kind, type Peer} from '../fixtures/interop.ts'
import {startThirdPartyServer, type ThirdPartyServer} from '../fixtures/third-party-server.ts'
import {afterEventWith, afterHeaders, startTcpProxy, type TcpProxy} from '../fixtures/tcp-proxy.ts'

/** A call still pending this long after its fault is counted as hung (the Client's own timeout is 30 s). */
const hangMs = 3000
/** Ours: a resumed connection silent this long after its replay (the default is 60 s). */
const resumeTimeoutMs = 500

/** What each server offers for a row: a plain call, a tool with progress, a tool that asks the client. */
const tools = {
  'server-everything': {
    echo: {name: 'echo', arguments: {message: 'hi'}},
    progress: {name: 'trigger-long-running-operation', arguments: {duration: 0.9, steps: 6}},
    // A sampling request on the tool's own POST stream.
    ask: {name: 'trigger-sampling-request', arguments: {prompt: 'hi'}},
  },
  fastmcp: {
    echo: {name: 'echo', arguments: {text: 'hi'}},
    progress: {name: 'slow', arguments: {steps: 6, delayMs: 150}},
    // An elicitation on the standalone GET stream, after a log line there.
    ask: {name: 'elicit', arguments: {}},
  },
} as const

/** The byte offset just past the first SSE event of a response (a priming event), if it has arrived. */
function afterFirstEvent(text: string): number | undefined {
  const body = afterHeaders(text)
  if (body === undefined) return undefined
  const end = text.indexOf('\n\n', body)
  return end < 0 ? undefined : end + 2
}

const toolsCall = (chunk: string): boolean => chunk.includes('"tools/call"')

describe.each(['server-everything', 'fastmcp'] as const)('%s, a real process behind a cutting proxy', (name) => {
  const tool = tools[name]
  let server: ThirdPartyServer
  let directory: string
  const proxies: TcpProxy[] = []
  const peers: Peer[] = []
  const children: ChildProcess[] = []

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'third-party-'))
    server = await startThirdPartyServer(name)
  }, 30_000)
  afterAll(async () => {
    await server.close()
    await rm(directory, {recursive: true, force: true})
  })
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL')
    for (const peer of peers.splice(0)) await peer.client.close()
    for (const proxy of proxies.splice(0)) await proxy.close()
  })

  /** A proxy of its own to the shared server, and what the server did from now on. */
  async function wire(): Promise<{proxy: TcpProxy; runs: () => Record<string, number>; resumes: () => number}> {
    const proxy = await startTcpProxy({port: server.port})
    proxies.push(proxy)
    const ran = {...server.executions}
    const logged = server.log.length
    return {
      proxy,
      runs: () =>
        Object.fromEntries(
          Object.entries(server.executions).flatMap(([tool, count]) =>
            count > (ran[tool] ?? 0) ? [[tool, count - (ran[tool] ?? 0)]] : [],
          ),
        ),
      resumes: () =>
        server.log.slice(logged).filter((entry) => entry.method === 'GET' && entry.lastEventId !== undefined).length,
    }
  }

  async function connect(kind: Kind, proxy: TcpProxy, ours: ResumableHTTPClientTransportOptions = {}): Promise<Peer> {
    const peer = await connectPeer(kind, proxy.url('/mcp'), {resumeTimeoutMs, ...ours})
    peers.push(peer)
    return peer
  }

  /** How `call` ended within {@link hangMs}, with the text of its result and the progress it delivered. */
  async function outcome(call: Call): Promise<{outcome: string; text: string | undefined; progress: number[]}> {
    await Promise.race([call.settled, pause(hangMs)])
    return {
      outcome: call.state === 'result' ? 'result' : call.state === 'pending' ? 'hung' : call.failure!,
      text: call.text,
      progress: [...call.progress],
    }
  }

  /** Starts test/fixtures/third-party-client.mjs; `line` resolves with the first line it prints that `done` accepts. */
  function runClient(
    args: Record<string, unknown>,
    done: (line: Record<string, unknown>) => boolean,
  ): {child: ChildProcess; line: Promise<Record<string, unknown>>} {
    // The client runs src/ itself: Node strips its types from 22.18 on, and needs the flag before.
    const typescript = (process.features as {typescript?: unknown}).typescript
    const strip = typescript === undefined || typescript === false ? ['--experimental-strip-types'] : []
    const child = spawn(
      process.execPath,
      [...strip, '--no-warnings', 'test/fixtures/third-party-client.mjs', JSON.stringify(args)],
      {stdio: ['ignore', 'pipe', 'inherit']},
    )
    children.push(child)
    const line = new Promise<Record<string, unknown>>((resolve, reject) => {
      child.once('exit', (code, signal) => reject(new Error(`the client exited early (${String(code ?? signal)})`)))
      createInterface({input: child.stdout}).on('line', (text) => {
        const parsed = JSON.parse(text) as Record<string, unknown>
        if (done(parsed)) resolve(parsed)
      })
    })
    return {child, line}
  }

  /**
   * One GET with Last-Event-ID; ours against server-everything resumes again from the newest cursor once the resumed
   * stream falls silent after its replay, as many times as it takes the tool to return (within the transport's bound).
   */
  function expectResumes(kind: Kind, resumes: number): void {
    if (kind === 'ours' && name === 'server-everything') expect(resumes).toBeGreaterThanOrEqual(1)
    else expect(resumes).toBe(1)
  }

  describe.each(['ours', 'sdk'] as const)('%s transport', (kind) => {
    // The SDK transport against server-everything: the resumed stream's replay, then silence.
    const hangs = kind === 'sdk' && name === 'server-everything'

    it('a call: answered, the tool ran once', async () => {
      const {proxy, runs} = await wire()
      const peer = await connect(kind, proxy)
      const call = await outcome(callTool(peer, tool.echo.name, {arguments: tool.echo.arguments}))
      expect(call).toEqual({outcome: 'result', text: name === 'fastmcp' ? 'echo: hi' : 'Echo: hi', progress: []})
      expect(runs()).toEqual({echo: 1})
    })

    it(`a cut mid-call after progress 2: ${hangs ? 'hung after the replay' : 'the result, each progress once'}; the tool ran once`, async () => {
      const {proxy, runs, resumes} = await wire()
      const peer = await connect(kind, proxy)
      const cut = proxy.cutNext({request: toolsCall, at: afterEventWith('"progress":2')})
      const call = callTool(peer, tool.progress.name, {arguments: tool.progress.arguments})
      await cut
      const measured = await outcome(call)
      expect(runs()).toEqual({[tool.progress.name]: 1})
      if (hangs) {
        // Resumed with Last-Event-ID: the replay, then silence (the result goes to no stream).
        expect(measured).toEqual({outcome: 'hung', text: undefined, progress: [1, 2]})
      } else {
        expect(measured).toMatchObject({outcome: 'result', progress: [1, 2, 3, 4, 5, 6]})
      }
      expectResumes(kind, resumes())
    })

    it(`${name === 'fastmcp' ? 'an elicitation' : 'a sampling request'} sent while its stream is cut: handled once, ${hangs ? 'then hung' : 'and the result'}`, async () => {
      const {proxy, runs, resumes} = await wire()
      // server-everything: the tool's POST stream, right after its priming event. fastmcp: the standalone GET, once
      // the tool's log line has passed (its first event: the stream's cursor).
      const cut =
        name === 'server-everything'
          ? proxy.cutNext({request: toolsCall, at: afterFirstEvent})
          : proxy.cutNext({request: (chunk) => chunk.startsWith('GET'), at: afterEventWith('asking for a name')})
      const peer = await connect(kind, proxy)
      const call = callTool(peer, tool.ask.name, {arguments: tool.ask.arguments})
      await cut
      const measured = await outcome(call)
      expect(runs()).toEqual({[tool.ask.name]: 1})
      expect(peer.handled).toEqual(name === 'fastmcp' ? {sampling: 0, elicitation: 1} : {sampling: 1, elicitation: 0})
      expectResumes(kind, resumes())
      if (hangs) expect(measured.outcome).toBe('hung')
      else expect(measured.outcome).toBe('result')
      if (name === 'fastmcp') expect(measured.text).toBe('elicited: accept {"name":"Grace"}')
    })

    it(`the client process killed mid-call and started again (${kind === 'ours' ? 'on its FileStore' : 'the app keeping the session ID and the last event ID'}): the call's answer, the tool ran once`, async () => {
      const {proxy, runs} = await wire()
      const done = server.finished[tool.progress.name] ?? 0
      const args = {
        kind,
        url: proxy.url('/mcp'),
        file: join(directory, `${kind}.json`),
        tool: tool.progress.name,
        arguments: tool.progress.arguments,
      }
      const first = runClient({...args, phase: 'call'}, (line) => line['progress'] === 2)
      await first.line
      first.child.kill('SIGKILL')
      await new Promise((resolve) => first.child.once('exit', resolve))
      // Started once the tool has returned on the server: its answer waits in the server's event store.
      await until(() => (server.finished[tool.progress.name] ?? 0) > done, 5000)
      const second = runClient({...args, phase: 'resume'}, (line) => 'result' in line || 'error' in line)
      const line = await Promise.race([second.line, pause(hangMs + 5000).then(() => ({hung: true}))])
      // Ours: the resumed stream's answer is for the app's records (`unmatched-response`); the SDK's: its token path
      // (a GET with the saved Last-Event-ID) renames the replayed answer to the new request.
      expect(line).toMatchObject({
        result: {
          content: [
            {
              type: 'text',
              text:
                name === 'fastmcp'
                  ? 'done after 6 steps'
                  : (expect.stringContaining('Long running operation completed') as unknown),
            },
          ],
        },
      })
      expect(runs()).toEqual({[tool.progress.name]: 1})
    }, 30_000)

    const afterRestart =
      kind === 'ours'
        ? 'the next call fails session-expired, the stored session is cleared, a new session works'
        : `every later call is refused ${name === 'fastmcp' ? 404 : 400}, the dead session kept`
    it(`the server restarted between calls (sessions lost): ${afterRestart}; nothing ran twice`, async () => {
      const {proxy, runs} = await wire()
      const store = new MemoryStore()
      const peer = await connect(kind, proxy, {store})
      const call = (): Promise<{outcome: string}> =>
        outcome(callTool(peer, tool.echo.name, {arguments: tool.echo.arguments}))
      expect(await call()).toMatchObject({outcome: 'result'})
      await server.restart()
      const restarted = server.log.length
      const next = await call()
      if (kind === 'ours') {
        expect(next.outcome).toBe('session-expired')
        expect((await store.list('')).filter((key) => key.endsWith('#session'))).toEqual([])
        // The README's recovery: the Client connected again on the same transport initializes a new session.
        await peer.client.close()
        await peer.client.connect(peer.transport)
        expect(await call()).toMatchObject({outcome: 'result'})
        expect(runs()).toEqual({echo: 2})
      } else {
        // The SDK transport keeps the dead session: every later call is refused the same way.
        const refusal = name === 'fastmcp' ? 'Session not found' : 'No valid session ID provided'
        expect(next.outcome).toContain(refusal)
        expect((await call()).outcome).toContain(refusal)
        const posts = server.log.slice(restarted).filter((entry) => entry.method === 'POST')
        expect(posts.map((entry) => entry.status)).toEqual(name === 'fastmcp' ? [404, 404] : [400, 400])
        expect(runs()).toEqual({echo: 1})
      }
    }, 20_000)
  })
})
