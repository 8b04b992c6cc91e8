/**
 * `npm run demo -- --server URL`: the scenes that need no fault on the server, against any MCP server. The
 * connection cuts are made on the client's side (see {@link cuttableFetch}); the server's own counters are
 * unknown, so only the client's are shown.
 */
import {
  agentDone,
  connect,
  cuttableFetch,
  readStoreFile,
  sayStored,
  startAgent,
  until,
  withStoreFile,
} from './client.ts'
import {dim, red, say, type Narrator} from './output.ts'
import {codeOf, resultText} from './wording.ts'

export interface Tool {
  name: string
  args: Record<string, unknown>
}

export interface RemoteContext {
  url: string
  narrator: Narrator
  /** The tool to call; undefined when the server lists none that fits and none was chosen. */
  tool: Tool | undefined
}

/** The reason to skip a scene: thrown, caught by the runner, shown in the summary. */
export class Skip extends Error {}

export interface RemoteScene {
  name: string
  title: string
  run: (context: RemoteContext) => Promise<void>
}

const describe = (tool: Tool): string => `${tool.name} ${JSON.stringify(tool.args)}`

function needTool(tool: Tool | undefined): Tool {
  if (tool === undefined)
    throw new Skip('no tool to call: pass --tool NAME (and --args JSON) for one that streams progress')
  return tool
}

export const remoteScenes: RemoteScene[] = [
  {
    name: 'connection cut',
    title: "A tool streaming progress loses its connection (cut on the client's side) → stream resumption",
    run: async ({url, narrator: n, tool}) => {
      const {name, args} = needTool(tool)
      const network = cuttableFetch()
      const {client} = await connect(url, n, {fetch: network.fetch})
      const progress: number[] = []
      say(`→ tools/call ${describe({name, args})}, with progress`)
      const state = {settled: false}
      const call = client
        .callTool({name, arguments: args}, undefined, {
          onprogress: ({progress: step}) => progress.push(step),
          timeout: 60_000,
        })
        .then(
          (result) => ({result, error: undefined}),
          (error: unknown) => ({result: undefined, error}),
        )
        .finally(() => (state.settled = true))
      await until(() => progress.length >= 2 || state.settled, 30_000, 'progress 2')
      if (state.settled) {
        await client.close()
        throw new Skip(
          `${name} sent ${progress.length} progress notification(s) before its result: nothing to cut mid-stream`,
        )
      }
      say(`${red('✂')} the client's connections cut after progress ${progress.join(' ')} (the server is not told)`)
      network.cut()
      const {result, error} = await call
      n.counters()
      n.check(new Set(progress).size === progress.length, `progress never delivered twice: ${progress.join(' ')}`)
      n.check(network.posted['tools/call'] === 1, 'tools/call POSTed once')
      if (result !== undefined) {
        n.check(
          (n.reconnects['stream-resumption'] ?? 0) >= 1,
          `the stream resumed from its cursor; the result arrived once: "${resultText(result)}"`,
        )
      } else {
        const code = codeOf(error)
        say(dim('the server could not resume the stream (no event IDs, or no event store)'))
        n.check(code === 'outcome-unknown', `the call settled '${String(code)}' at once and was not sent again`)
      }
      await client.close()
    },
  },
  {
    name: 'process restart',
    title: 'The client process is killed mid-call and restarts on its FileStore → stream resumption across processes',
    run: async ({url, narrator: n, tool}) => {
      const {name, args} = needTool(tool)
      await withStoreFile(async (file, agents) => {
        const progressA: number[] = []
        say(`process A: new FileStore('session.json'); tools/call ${describe({name, args})}`)
        const a = startAgent('A│', ['call', url, file, name, JSON.stringify(args)], n, (line) => {
          if (line.progress === undefined) return
          progressA.push(line.progress)
          say(`${dim('A│')} progress ${line.progress}`)
        })
        agents.push(a)
        const finished = (): boolean => a.lines.some((line) => line.result !== undefined || line.error !== undefined)
        await until(() => progressA.length >= 2 || finished(), 30_000, "process A's progress 2")
        if (finished())
          throw new Skip(`${name} finished before its second progress notification: nothing to kill mid-call`)
        a.kill()
        await a.exited
        say(`${red('✂')} process A (pid ${a.pid}) killed with SIGKILL after progress ${progressA.join(' ')}`)
        const stored = await readStoreFile(file)
        sayStored(stored)
        // Without a cursor of A's call (the server sent no event IDs) there is nothing of it to wait for.
        const resumable = stored.cursors.some(([stream]) => stream.startsWith('request:'))
        say('process B starts on the same file, and calls nothing')
        const b = startAgent('B│', ['resume', url, file, name, '{}', resumable ? '20000' : '500'], n)
        agents.push(b)
        const done = await agentDone(b, 'B│', n, 25_000)
        const connected = b.lines.find((line) => line.connected !== undefined)?.connected
        const orphaned = n.takeOrphaned()
        if (orphaned > 0) say(`${dim('B│')} ${orphaned} notifications replayed for A's Client: not delivered to B's`)
        n.counters()
        const unmatched = b.lines.filter((line) => line.event?.type === 'unmatched-response')
        n.check(
          connected?.sessionId !== undefined && !connected.initialized,
          `B took session ${String(connected?.sessionId)} from the file: no second initialize`,
        )
        n.check(
          unmatched.length <= 1 && done?.metrics.duplicatesDropped === 0,
          `nothing delivered twice; A's result ${unmatched.length === 1 ? 'arrived once, in B' : 'did not come back (the server did not resume the stream)'}`,
        )
      })
    },
  },
  {
    name: 'cursor lost',
    title: 'A client comes back with the session ID but no cursor → session resumption',
    run: async ({url, narrator: n}) => {
      const a = await connect(url, n, {label: 'A│'})
      const sessionId = a.transport.sessionId
      await a.client.close()
      if (sessionId === undefined) throw new Skip('the server keeps no session')
      say(`client A closes. Client B (a new transport and Client) has the session ID ${sessionId}, and not one cursor`)
      const b = await connect(url, n, {label: 'B│', sessionId})
      const {tools} = await b.client.listTools()
      n.counters()
      n.check(b.transport.metrics.newSessions === 0, 'B re-attached to the session: no initialize')
      n.check(true, `the session serves B: tools/list → ${tools.map((listed) => listed.name).join(', ') || 'no tools'}`)
      await b.client.close()
    },
  },
  {
    name: 'session expired',
    title: 'The session ends under the client → 404, the request not sent again, a new session',
    run: async ({url, narrator: n}) => {
      const network = cuttableFetch()
      const {transport, client} = await connect(url, n, {fetch: network.fetch})
      const sessionId = transport.sessionId
      if (sessionId === undefined) throw new Skip('the server keeps no session')
      const headers: Record<string, string> = {'mcp-session-id': sessionId}
      if (transport.protocolVersion !== undefined) headers['mcp-protocol-version'] = transport.protocolVersion
      const ended = await fetch(url, {method: 'DELETE', headers})
      if (!ended.ok) {
        await client.close()
        throw new Skip(`the server does not let a client end its session (DELETE: HTTP ${ended.status})`)
      }
      say(`${red('✂')} ${sessionId} ended behind the transport's back (a DELETE of its own, HTTP ${ended.status})`)
      say('→ tools/list')
      const code = codeOf(
        await client.listTools().then(
          () => undefined,
          (error: unknown) => error,
        ),
      )
      n.counters()
      n.check(code === 'session-expired', `tools/list failed with '${String(code)}'`)
      n.check(network.posted['tools/list'] === 1, 'tools/list was POSTed once, never again')
      await client.close()
      await client.connect(transport)
      n.check(
        transport.sessionId !== undefined && transport.sessionId !== sessionId,
        `the app re-initialized: ${String(transport.sessionId)}`,
      )
      await client.close()
    },
  },
]
