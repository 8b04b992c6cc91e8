/**
 * A client process of the demo's restart scene, spawned by demo/client.ts: the SDK Client on our transport
 * with a FileStore. Prints one JSON line per thing that happens (see {@link AgentLine}).
 *
 * `call`: connects and calls the tool, printing each progress; the demo kills it mid-call.
 * `resume`: starts on the same file, calls nothing, and waits for the earlier process's call to finish on the
 * stream it resumes; then prints its counters and exits.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {CreateMessageRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {ResumableHTTPClientTransport, type TransportEvent, type TransportMetrics} from '../src/index.ts'
import {FileStore} from '../src/node.ts'

export interface AgentLine {
  /** A transport event; an error is sent as its message. */
  event?: TransportEvent
  connected?: {sessionId: string | undefined; initialized: boolean}
  progress?: number
  result?: unknown
  /** `resume`: the earlier call ended (answered, or given up), or the wait timed out. */
  done?: {metrics: TransportMetrics; timedOut: boolean}
  error?: string
}

function print(line: AgentLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`)
}

async function main(): Promise<void> {
  const [phase, url, file, tool = 'slow', args = '{}', waitMs = '10000'] = process.argv.slice(2)
  if ((phase !== 'call' && phase !== 'resume') || url === undefined || file === undefined) {
    throw new Error('usage: agent.js call|resume URL STORE_FILE [TOOL] [ARGS_JSON] [WAIT_MS]')
  }
  let finished: () => void = () => {}
  const earlierCallEnded = new Promise<void>((resolve) => (finished = resolve))
  const transport = new ResumableHTTPClientTransport(new URL(url), {
    store: new FileStore(file),
    reconnect: {minDelayMs: 50, maxDelayMs: 500},
    onEvent: (event) => {
      const error =
        'error' in event ? {error: event.error instanceof Error ? event.error.message : String(event.error)} : {}
      print({event: {...event, ...error} as TransportEvent})
      if (
        event.type === 'unmatched-response' ||
        (event.type === 'stream-closed' && event.stream === 'request' && event.reason !== 'completed')
      )
        finished()
    },
  })
  const client = new Client({name: 'mcp-resumable-http-demo-agent', version: '1.0.0'}, {capabilities: {sampling: {}}})
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    model: 'demo',
    role: 'assistant',
    content: {type: 'text', text: 'answer'},
  }))
  await client.connect(transport)
  print({connected: {sessionId: transport.sessionId, initialized: transport.metrics.newSessions > 0}})

  if (phase === 'call') {
    const result = await client.callTool(
      {name: tool, arguments: JSON.parse(args) as Record<string, unknown>},
      undefined,
      {
        onprogress: ({progress}) => print({progress}),
        timeout: 60_000,
      },
    )
    print({result})
  } else {
    const timedOut = await Promise.race([
      earlierCallEnded.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(resolve, Number(waitMs), true)),
    ])
    // Let a duplicate, if the server sent one, arrive before the counters are read.
    await new Promise((resolve) => setTimeout(resolve, 100))
    print({done: {metrics: transport.metrics, timedOut}})
  }
  await client.close()
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    print({error: error instanceof Error ? error.message : String(error)})
    process.exit(1)
  },
)
