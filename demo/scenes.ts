/**
 * The story told against the reference server of `mcp-resumable-http/testing`, one fresh server per scene.
 */
import {createParser} from 'eventsource-parser'
import type {Listening, ReferenceServer, ReferenceServerOptions} from '../src/testing/node.ts'
import {agentDone, connect, readStoreFile, sayStored, startAgent, until, withStoreFile} from './client.ts'
import {bold, dim, red, say, yellow, type Narrator} from './output.ts'
import {codeOf, resultText} from './wording.ts'

export interface ReferenceContext {
  url: string
  server: ReferenceServer
  listening: Listening
  narrator: Narrator
}

export interface ReferenceScene {
  /** A short name, for the summary table. */
  name: string
  title: string
  /** How this scene's reference server is created. */
  options?: ReferenceServerOptions
  run: (context: ReferenceContext) => Promise<void>
}

const posts = (server: ReferenceServer, rpcMethod: string): number => server.requests('POST', rpcMethod).length

/** The request stream of the (only) session whose events mention `text`. */
function requestStream(server: ReferenceServer, sessionId: string, text: string) {
  return server
    .session(sessionId)
    .streams.find((stream) => stream.kind === 'request' && stream.events.some((event) => event.data.includes(text)))
}

export const referenceScenes: ReferenceScene[] = [
  {
    name: 'connection cut',
    title: 'A tool streaming progress loses its connection → stream resumption',
    options: {retryMs: 100},
    run: async ({url, server, listening, narrator: n}) => {
      const {client} = await connect(url, n)
      const progress: number[] = []
      say('→ tools/call slow {steps: 6, delayMs: 80}, with progress')
      const call = client.callTool({name: 'slow', arguments: {steps: 6, delayMs: 80}}, undefined, {
        onprogress: ({progress: step}) => progress.push(step),
      })
      await until(() => progress.length >= 2, 5000, 'progress 2')
      say(
        `${red('✂')} every socket of the server destroyed after progress ${progress.join(' ')}: a real connection drop`,
      )
      listening.dropConnections()
      const result = await call
      n.counters()
      n.check(progress.join() === '1,2,3,4,5,6', `progress delivered once each, in order: ${progress.join(' ')}`)
      n.check(resultText(result) === 'done after 6 steps', `the result arrived once: "${resultText(result)}"`)
      n.check(
        (n.reconnects['stream-resumption'] ?? 0) >= 1,
        "the tool's stream resumed after its own cursor (stream resumption)",
      )
      n.check(
        posts(server, 'tools/call') === 1 && server.executions['slow'] === 1,
        'tools/call POSTed once; the tool ran once on the server',
      )
      await client.close()
    },
  },
  {
    name: 'process restart',
    title: 'The client process is killed mid-call and restarts on its FileStore → stream resumption across processes',
    run: ({url, server, narrator: n}) =>
      withStoreFile(async (file, agents) => {
        const steps = 8
        const progressA: number[] = []
        say(`process A: new FileStore('session.json'); tools/call slow {steps: ${steps}, delayMs: 150}`)
        const a = startAgent('A│', ['call', url, file, 'slow', JSON.stringify({steps, delayMs: 150})], n, (line) => {
          if (line.progress === undefined) return
          progressA.push(line.progress)
          say(`${dim('A│')} progress ${line.progress}/${steps}`)
        })
        agents.push(a)
        await until(() => progressA.length >= 3, 10_000, "process A's progress 3")
        a.kill()
        await a.exited
        say(
          `${red('✂')} process A (pid ${a.pid}) killed with SIGKILL after progress ${progressA.join(' ')}: no close(), no cleanup`,
        )
        const stored = await readStoreFile(file)
        const {sessionId, cursors} = stored
        sayStored(stored)

        let connected: {sessionId: string | undefined; initialized: boolean} | undefined
        say('process B starts on the same file, and calls nothing')
        const b = startAgent('B│', ['resume', url, file], n, (line) => {
          if (line.connected === undefined) return
          connected = line.connected
          say(
            `${dim('B│')} connected: session ${String(line.connected.sessionId)} from the file, ${line.connected.initialized ? 'initialized again' : 'no initialize'}`,
          )
        })
        agents.push(b)
        const done = await agentDone(b, 'B│', n, 15_000)
        const orphaned = n.takeOrphaned()
        say(
          `${dim('B│')} ${orphaned} progress notifications replayed for A's Client: not delivered to B's, which never made that call`,
        )
        n.counters()

        const unmatched = b.lines.flatMap((line) => (line.event?.type === 'unmatched-response' ? [line.event] : []))
        const resumed = b.lines.flatMap((line) =>
          line.event?.type === 'reconnect' && line.event.stream === 'request' ? [line.event] : [],
        )
        const [stream, cursor] = cursors.find(([key]) => key.startsWith('request:')) ?? []
        n.check(
          connected?.sessionId === sessionId && connected?.initialized === false && posts(server, 'initialize') === 1,
          'B took the session from the file: no second initialize',
        )
        n.check(
          resumed.length === 1 &&
            resumed[0]!.branch === 'stream-resumption' &&
            resumed[0]!.headers['last-event-id'] === cursor,
          `B resumed A's ${stream ?? 'request stream'} with the stored Last-Event-ID ${cursor ?? '—'}`,
        )
        n.check(
          unmatched.length === 1 && resultText(unmatched[0]!.message) === `done after ${steps} steps`,
          "A's result arrived once, in B, as an unmatched-response",
        )
        n.check(
          progressA.length + orphaned === steps && done?.metrics.duplicatesDropped === 0,
          `no event twice: A got progress 1–${progressA.length}, the replay held the other ${orphaned} and the result`,
        )
        n.check(
          posts(server, 'tools/call') === 1 && server.executions['slow'] === 1,
          'tools/call POSTed once; the tool ran once on the server',
        )
      }),
  },
  {
    name: 'cursor lost',
    title:
      'A client comes back with the session ID but no cursor → session resumption, re-emitted requests answered once',
    run: async ({url, server, narrator: n}) => {
      say('→ client A: tools/call ask {count: 2}: the server asks the Client 2 sampling questions mid-call')
      const a = await connect(url, n, {label: 'A│', answer: false})
      const call = a.client.callTool({name: 'ask', arguments: {count: 2}}).catch(() => undefined)
      await until(() => a.unanswered.length === 2, 5000, 'the 2 sampling requests')
      const sessionId = a.transport.sessionId!
      await a.client.close()
      await call
      say(
        `${red('✂')} client A closes before answering. Client B (a new transport and Client) has the session ID ${sessionId}, and not one cursor`,
      )
      const b = await connect(url, n, {label: 'B│', sessionId})
      await until(
        () => server.pendingRequests().length === 0 && requestStream(server, sessionId, 'question')?.finished === true,
        5000,
        'the tool to finish',
      )
      n.counters()
      const m = b.transport.metrics
      const answers = [...server.answers.values()]
      n.check(posts(server, 'initialize') === 1, 'B re-attached to the session: no second initialize')
      n.check(
        server.counters.reemittedRequests === 2 && m.reemittedRequests === 2 && m.replayedEvents === 0,
        `the server re-emitted its 2 pending requests on B's fresh GET; replayed events ${m.replayedEvents}: the counters move independently`,
      )
      n.check(
        b.answered.length === 2 && answers.length === 2 && answers.every((list) => list.length === 1),
        'each sampling request answered exactly once',
      )
      n.check(
        posts(server, 'tools/call') === 1 && server.executions['ask'] === 1,
        "the tool got its answers and finished; it ran once (its result was on A's stream, which B could not resume)",
      )
      await b.client.close()
    },
  },
  {
    name: 'session expired',
    title: 'The session expires while a call is in flight → 404, no duplicate tools/call',
    options: {retryMs: 100},
    run: async ({url, server, listening, narrator: n}) => {
      const {transport, client} = await connect(url, n)
      const sessionId = transport.sessionId!
      say('→ tools/call slow {steps: 4, delayMs: 80}')
      const started = Date.now()
      const call = client.callTool({name: 'slow', arguments: {steps: 4, delayMs: 80}}).then(
        () => undefined,
        (error: unknown) => error,
      )
      await until(() => posts(server, 'tools/call') === 1, 5000, 'the tools/call')
      say(`${red('✂')} the server forgets ${sessionId} and its connections drop`)
      server.faults.expireSession(sessionId)
      listening.dropConnections()
      const error = await call
      const code = codeOf(error)
      const elapsed = Date.now() - started
      n.counters()
      n.check(
        code === 'session-expired',
        `the call failed with '${String(code)}' after ${elapsed} ms, not at a timeout`,
      )
      n.check(posts(server, 'tools/call') === 1, 'tools/call was POSTed once, never again')
      n.check(transport.sessionId === undefined, 'the session and its cursors were cleared')
      say('→ the app re-initializes on the same transport (client.close(), client.connect(transport))')
      await client.close()
      await client.connect(transport)
      n.check(
        transport.sessionId !== undefined && transport.sessionId !== sessionId,
        `a new session: ${String(transport.sessionId)}`,
      )
      n.check(
        !server.log.some((entry) => entry.sessionId !== sessionId && entry.lastEventId !== undefined),
        `no cursor of ${sessionId} was ever sent with another session`,
      )
      await client.close()
    },
  },
  {
    name: 'cursor-per-session server',
    title: 'Faulty server "cursor-per-session": a resumption replays other streams too → duplicates dropped',
    options: {mode: 'cursor-per-session'},
    run: async ({url, server, narrator: n}) => {
      say(
        dim(
          'the server numbers events per session and replays the session log after a Last-Event-ID, whatever the stream',
        ),
      )
      const {client} = await connect(url, n)
      const progress = {x: [] as number[], y: [] as number[]}
      const calls = {x: {steps: 3, delayMs: 20}, y: {steps: 2}}
      n.runs?.name('X', 'slow', calls.x)
      n.runs?.name('Y', 'slow', calls.y)
      server.faults.cutNext({after: 2, how: 'close', retryMs: 300, on: 'POST'})
      say(
        '→ call X: tools/call slow {steps: 3, delayMs: 20}; the server closes its stream after progress 1 (retry: 300 ms)',
      )
      const x = client.callTool({name: 'slow', arguments: calls.x}, undefined, {
        onprogress: ({progress: step}) => progress.x.push(step),
      })
      await until(() => progress.x.length === 1, 5000, "X's progress 1")
      say('→ call Y: tools/call slow {steps: 2} runs to its end meanwhile, on its own stream')
      await client.callTool({name: 'slow', arguments: calls.y}, undefined, {
        onprogress: ({progress: step}) => progress.y.push(step),
      })
      await x
      await new Promise((resolve) => setTimeout(resolve, 50))
      n.counters()
      const streamX = server.session().streams.find((stream) => stream.kind === 'request' && stream.replayed > 0)
      const replayed = streamX?.replayed ?? 0
      say(
        `${yellow('⚠')} ${bold('the server')} replayed ${replayed} events on X's stream; a correct server replays X's own 3 (progress 2, 3 and its result)`,
      )
      n.check(replayed === 7, "the faulty server's replay held call Y's 4 events too (shown, not our doing)")
      n.check(
        progress.x.join() === '1,2,3' && progress.y.join() === '1,2',
        `each call's progress delivered once: X ${progress.x.join(' ')}, Y ${progress.y.join(' ')}`,
      )
      n.check(
        n.metrics().duplicatesDropped === 3,
        "Y's result and its 2 progress notifications dropped: Y was answered already",
      )
      n.check(
        posts(server, 'tools/call') === 2 && n.runs?.of('X') === 1 && n.runs.of('Y') === 1,
        'each call POSTed once, and each ran once: X and Y',
      )
      say(
        dim(
          '(its other fault — nothing re-emitted on a GET without Last-Event-ID — is one no client can repair: see docs/comparison.md)',
        ),
      )
      await client.close()
    },
  },
  {
    name: 'global-log server',
    title: 'Faulty server "global-log": a dead session\'s Last-Event-ID is served to a new session → never sent by us',
    options: {mode: 'global-log'},
    run: async ({url, server, narrator: n}) => {
      say(dim('the server looks a Last-Event-ID up in one log across all sessions, dead ones included'))
      const {transport, client} = await connect(url, n)
      const dead = transport.sessionId!
      server.faults.cutNext({after: 1, how: 'close', retryMs: 200, on: 'POST'})
      say(
        `→ tools/call ask: its stream closes after the priming event (retry: 200 ms) and the server garbage-collects ${dead} meanwhile`,
      )
      const started = Date.now()
      const call = client.callTool({name: 'ask'}).then(
        () => undefined,
        (error: unknown) => error,
      )
      await until(() => posts(server, 'tools/call') === 1, 5000, 'the tools/call')
      server.faults.expireSession(dead, {closeConnections: false})
      const code = codeOf(await call)
      n.check(
        code === 'session-expired',
        `the call failed with '${String(code)}' after ${Date.now() - started} ms, once the 404 came`,
      )
      say('→ the app re-initializes on the same transport')
      await client.close()
      await client.connect(transport)
      const fresh = transport.sessionId!
      await client.listTools()
      n.counters()
      const deadCursor = server.log.find(
        (entry) => entry.sessionId === dead && entry.lastEventId !== undefined,
      )?.lastEventId
      n.check(
        !server.log.some((entry) => entry.sessionId === fresh && entry.lastEventId !== undefined),
        `our transport sent no Last-Event-ID with ${fresh}: the cursor ${deadCursor ?? '—'} died with ${dead}`,
      )
      n.check(
        posts(server, 'tools/call') === 1 && server.executions['ask'] === 1,
        'tools/call POSTed once; nothing ran twice',
      )
      if (deadCursor === undefined) return
      const probe = await probeResumption(url, fresh, deadCursor, transport.protocolVersion)
      say(
        `${yellow('⚠')} ${bold('the server')}: a GET naming ${fresh} with the dead Last-Event-ID ${deadCursor} (what a client that kept it would send) is answered`,
      )
      say(
        `  HTTP ${probe.status}, replaying ${probe.methods.length} message(s) of ${dead}: ${probe.methods.join(', ') || '—'}; a correct server answers 422`,
      )
      n.check(
        probe.status === 200 && probe.methods.length > 0,
        "the faulty server serves a dead session's events (shown, not our doing)",
      )
      await client.close()
    },
  },
]

/** A raw GET with `Last-Event-ID`, read for a moment: the HTTP status and the methods of the messages replayed. */
async function probeResumption(
  url: string,
  sessionId: string,
  lastEventId: string,
  version: string | undefined,
): Promise<{status: number; methods: string[]}> {
  const controller = new AbortController()
  const headers: Record<string, string> = {
    accept: 'text/event-stream',
    'mcp-session-id': sessionId,
    'last-event-id': lastEventId,
  }
  if (version !== undefined) headers['mcp-protocol-version'] = version
  const response = await fetch(url, {headers, signal: controller.signal})
  const methods: string[] = []
  if (response.ok && response.body !== null) {
    const parser = createParser({
      onEvent: (event) => {
        if (event.data === '') return
        const message = JSON.parse(event.data) as {method?: string; id?: string | number}
        methods.push(`${message.method ?? 'response'} ${String(message.id ?? '')}`.trim())
      },
    })
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    const timer = setTimeout(() => controller.abort(), 300)
    try {
      for (;;) {
        const {done, value} = await reader.read()
        if (done) break
        parser.feed(decoder.decode(value, {stream: true}))
      }
    } catch {
      // Aborted after the moment's read.
    } finally {
      clearTimeout(timer)
    }
  }
  controller.abort()
  return {status: response.status, methods}
}
