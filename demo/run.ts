/**
 * `npm run demo`: the transport surviving failures, scene by scene, against the reference server of
 * `mcp-resumable-http/testing` on 127.0.0.1 (started here, nothing to install). Exits 0 when every scene ends
 * as expected.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {isTransportError, ResumableHTTPClientTransport, type TransportEvent} from '../src/index.ts'
import {createReferenceServer, listen, type Listening, type ReferenceServer} from '../src/testing/node.ts'

const color = process.stdout.isTTY && process.env['NO_COLOR'] === undefined
const paint = (code: number) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text)
const [bold, dim, green, red, cyan, yellow] = [1, 2, 32, 31, 36, 33].map(paint) as [Paint, Paint, Paint, Paint, Paint, Paint]
type Paint = (text: string) => string

interface Scene {
  title: string
  run: (server: Listening, mock: ReferenceServer) => Promise<string[]>
}

function log(event: TransportEvent): void {
  if (event.type === 'reconnect' || event.type === 'stream-opened') {
    const branch = event.type === 'reconnect' ? event.branch : 'open'
    const stream = event.stream === 'standalone' ? 'standalone GET' : `stream of request ${String(event.requestId)}`
    console.log(`   ${cyan('↻')} ${bold(branch.padEnd(18))} ${dim(stream)}`)
    console.log(`     GET  Mcp-Session-Id: ${event.headers['mcp-session-id'] ?? '—'}   Last-Event-ID: ${event.headers['last-event-id'] ?? '—'}`)
  } else if (event.type === 'session-expired' || event.type === 'cursor-rejected' || event.type === 'request-settled') {
    console.log(`   ${yellow('!')} ${event.type} ${dim(JSON.stringify({...event, type: undefined}))}`)
  }
}

async function client(url: string, options: {sessionId?: string; answer?: boolean} = {}) {
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    ...(options.sessionId === undefined ? {} : {sessionId: options.sessionId}),
    reconnect: {minDelayMs: 50, maxDelayMs: 500},
    onEvent: log,
  })
  const mcp = new Client({name: 'demo', version: '1.0.0'}, {capabilities: {sampling: {}}})
  let answered = 0
  mcp.setRequestHandler(CreateMessageRequestSchema, (request) => {
    if (options.answer === false) return new Promise<never>(() => {})
    answered++
    const question = request.params.messages[0]?.content
    console.log(`   ${green('✓')} sampling request answered ${dim(JSON.stringify(question))}`)
    return {model: 'demo', role: 'assistant', content: {type: 'text', text: `answer ${answered}`}}
  })
  await mcp.connect(transport)
  return {transport, mcp, answered: () => answered}
}

async function until(predicate: () => boolean): Promise<void> {
  for (let waited = 0; !predicate(); waited += 5) {
    if (waited > 5000) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

function check(failures: string[], ok: boolean, what: string): void {
  console.log(`   ${ok ? green('✓') : red('✗')} ${what}`)
  if (!ok) failures.push(what)
}

const scenes: Scene[] = [
  {
    title: 'A tool streaming progress loses its connection → stream resumption',
    run: async (server, mock) => {
      const failures: string[] = []
      const {transport, mcp} = await client(server.url)
      const progress: number[] = []
      const call = mcp.callTool({name: 'slow', arguments: {steps: 6, delayMs: 60}}, undefined, {
        onprogress: ({progress: step}) => progress.push(step),
      })
      await until(() => progress.length === 2)
      console.log(`   ${red('✂')} every socket destroyed after progress 2`)
      server.dropConnections()
      await call
      check(failures, progress.join() === '1,2,3,4,5,6', `progress delivered once each: ${progress.join(' ')}`)
      check(failures, mock.executions['slow'] === 1, `tool executed once on the server (${mock.executions['slow']})`)
      const m = transport.metrics
      check(failures, m.streamResumptions >= 1 && m.replayedEvents >= 1, `stream resumptions ${m.streamResumptions}, replayed events ${m.replayedEvents}, re-emitted requests ${m.reemittedRequests}`)
      await mcp.close()
      return failures
    },
  },
  {
    title: 'The client restarts and lost its cursors → session resumption, re-emitted requests answered once',
    run: async (server, mock) => {
      const failures: string[] = []
      const before = await client(server.url, {answer: false})
      const call = before.mcp.callTool({name: 'ask', arguments: {count: 2}}).catch(() => undefined)
      await until(() => mock.pendingRequests().length === 2)
      const sessionId = before.transport.sessionId!
      console.log(`   ${red('✂')} process A stops with 2 sampling requests unanswered; process B keeps only ${sessionId}`)
      await before.mcp.close()
      await call
      const after = await client(server.url, {sessionId})
      await until(() => mock.answers.size === 2)
      const m = after.transport.metrics
      check(failures, after.answered() === 2 && [...mock.answers.values()].every((list) => list.length === 1), 'each re-emitted sampling request answered exactly once')
      check(failures, m.reemittedRequests === 2 && m.replayedEvents === 0, `re-emitted requests ${m.reemittedRequests}, replayed events ${m.replayedEvents}: they move independently`)
      check(failures, mock.requests('POST', 'initialize').length === 1, 'no second initialize: the session was re-attached')
      await after.mcp.close()
      return failures
    },
  },
  {
    title: 'The session expires while a call is in flight → 404, no duplicate tools/call',
    run: async (server, mock) => {
      const failures: string[] = []
      const {transport, mcp} = await client(server.url)
      const sessionId = transport.sessionId!
      const call = mcp.callTool({name: 'slow', arguments: {steps: 4, delayMs: 60}}).catch((error: unknown) => error)
      await until(() => mock.requests('POST', 'tools/call').length === 1)
      console.log(`   ${red('✂')} the server forgets ${sessionId} and drops its connections`)
      mock.faults.expireSession(sessionId)
      server.dropConnections()
      const error = await call
      const code = isTransportError(error) ? error.code : (error as {data?: {code?: string}}).data?.code
      check(failures, code === 'session-expired', `the call failed at once with '${code}'`)
      check(failures, mock.requests('POST', 'tools/call').length === 1, 'tools/call was POSTed once, never again')
      check(failures, transport.sessionId === undefined, 'session and cursors cleared')
      await mcp.close()
      await mcp.connect(transport)
      check(failures, transport.sessionId !== undefined && transport.sessionId !== sessionId, `the app re-initialized: ${transport.sessionId}`)
      await mcp.close()
      return failures
    },
  },
]

const results: [string, string[]][] = []
for (const [index, scene] of scenes.entries()) {
  console.log(`\n${bold(`Scene ${index + 1}.`)} ${scene.title}`)
  const mock = createReferenceServer({retryMs: 100})
  const server = await listen(mock)
  try {
    results.push([scene.title, await scene.run(server, mock)])
  } catch (error) {
    results.push([scene.title, [String(error)]])
  } finally {
    await server.close()
  }
}

console.log(`\n${bold('Summary')}`)
for (const [title, failures] of results) console.log(`  ${failures.length === 0 ? green('pass') : red('FAIL')}  ${title}`)
const failed = results.filter(([, failures]) => failures.length > 0).length
console.log(`\n${results.length - failed} passed, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
