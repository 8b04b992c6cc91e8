/**
 * `npm run demo`: the transport surviving failures, scene by scene, with the SDK `Client` on top, against the
 * reference server of `mcp-resumable-http/testing` on 127.0.0.1 (started here: nothing to install). Exits 0
 * when every scene ends as expected.
 *
 * `npm run demo -- --server URL [--tool NAME] [--args JSON]`: the scenes that need no server fault, against
 * any MCP server. `--otel`: the clients on `mcp-resumable-http/otel`, and the counters they exported at the end.
 */
import {parseArgs} from 'node:util'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport} from '../src/index.ts'
import {createReferenceServer, listen} from '../src/testing/node.ts'
import {bold, dim, green, legend, Narrator, red, table, ToolRuns, yellow, type SceneStats} from './output.ts'
import {remoteScenes, Skip, type Tool} from './remote.ts'
import {referenceScenes} from './scenes.ts'
import {instrumentClients} from './client.ts'
import {printTelemetry} from './telemetry.ts'

interface Outcome {
  name: string
  status: 'pass' | 'FAIL' | 'skip'
  note: string
  stats: SceneStats | undefined
}

const sceneTimeoutMs = 30_000

const usage = `usage: npm run demo [-- [--otel] [--server URL [--tool NAME] [--args JSON]]]

  (no options)   every scene, against the reference server started on 127.0.0.1
  --otel         the clients on mcp-resumable-http/otel; at the end, the counters they exported
  --server URL   the scenes that need no server fault, against the MCP server at URL
  --tool NAME    the tool to call there (one that streams progress); default: "slow" when the server lists it
  --args JSON    its arguments; default for "slow": {"steps":6,"delayMs":300}`

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`the scene did not end within ${ms / 1000} s`)), ms).unref(),
  )
}

/** Runs one scene under its title; its failures, skip reason and counters become its outcome. */
async function scene(
  index: number,
  name: string,
  title: string,
  narrator: Narrator,
  run: () => Promise<void>,
): Promise<Outcome> {
  console.log(`\n${bold(`Scene ${index}.`)} ${bold(title)}`)
  try {
    await Promise.race([run(), timeout(sceneTimeoutMs)])
  } catch (error) {
    if (error instanceof Skip) {
      console.log(`   ${yellow('–')} skipped: ${error.message}`)
      return {name, status: 'skip', note: error.message, stats: undefined}
    }
    narrator.check(false, `the scene broke off: ${error instanceof Error ? error.message : String(error)}`)
  }
  const failed = narrator.failures.length > 0
  return {name, status: failed ? 'FAIL' : 'pass', note: narrator.failures[0] ?? '', stats: narrator.stats()}
}

async function runReference(): Promise<Outcome[]> {
  console.log(
    `${bold('mcp-resumable-http')} — the SDK Client on ResumableHTTPClientTransport, against the reference server`,
  )
  console.log(dim('(mcp-resumable-http/testing) on 127.0.0.1, a fresh one per scene. What the marks mean:'))
  for (const line of legend) console.log(dim(`  ${line}`))
  const outcomes: Outcome[] = []
  for (const [index, definition] of referenceScenes.entries()) {
    const runs = new ToolRuns()
    const server = createReferenceServer({...definition.options, tools: runs.tools()})
    const listening = await listen(server)
    const narrator = new Narrator({server, runs})
    try {
      outcomes.push(
        await scene(index + 1, definition.name, definition.title, narrator, () =>
          definition.run({url: listening.url, server, listening, narrator}),
        ),
      )
    } finally {
      await listening.close()
    }
  }
  return outcomes
}

/** The tool to call on a server that is not ours: the one asked for, else the reference server's `slow` if listed. */
async function chooseTool(url: string, name: string | undefined, args: string | undefined): Promise<Tool | undefined> {
  const parsed = args === undefined ? undefined : (JSON.parse(args) as Record<string, unknown>)
  if (name !== undefined) return {name, args: parsed ?? {}}
  const client = new Client({name: 'mcp-resumable-http-demo', version: '1.0.0'})
  const transport = new ResumableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  try {
    const {tools} = await client.listTools()
    return tools.some((tool) => tool.name === 'slow')
      ? {name: 'slow', args: parsed ?? {steps: 6, delayMs: 300}}
      : undefined
  } finally {
    await transport.terminateSession().catch(() => {})
    await client.close()
  }
}

async function runRemote(url: string, toolName: string | undefined, args: string | undefined): Promise<Outcome[]> {
  console.log(`${bold('mcp-resumable-http')} — the SDK Client on ResumableHTTPClientTransport, against ${url}`)
  console.log(
    dim(
      "Only the scenes that need no server fault; connection cuts are made on the client's side; the server's counters are not known.",
    ),
  )
  console.log(dim('What the marks mean:'))
  for (const line of legend.filter((line) => !line.startsWith('⚠'))) console.log(dim(`  ${line}`))
  const tool = await chooseTool(url, toolName, args)
  console.log(
    dim(
      tool === undefined
        ? 'No tool chosen (--tool NAME): the tool scenes are skipped.'
        : `Tool: ${tool.name} ${JSON.stringify(tool.args)}`,
    ),
  )
  const outcomes: Outcome[] = []
  for (const [index, definition] of remoteScenes.entries()) {
    const narrator = new Narrator()
    outcomes.push(
      await scene(index + 1, definition.name, definition.title, narrator, () => definition.run({url, narrator, tool})),
    )
  }
  return outcomes
}

function summary(outcomes: Outcome[]): void {
  const branches = (stats: SceneStats): string =>
    (['stream-resumption', 'session-resumption', 'new-session'] as const)
      .filter((branch) => stats.reconnects[branch] !== undefined)
      .map((branch) => `${branch.replace('-resumption', '')}×${String(stats.reconnects[branch])}`)
      .join(' ') || '—'
  const rows = outcomes.map((outcome, index) => {
    const stats = outcome.stats
    const cells =
      stats === undefined
        ? ['', '', '', '', '']
        : [branches(stats), String(stats.replayed), String(stats.reemitted), String(stats.dropped), stats.runs ?? 'n/a']
    return [String(index + 1), outcome.name, ...cells, outcome.status]
  })
  console.log(`\n${bold('Summary')}`)
  const header = ['#', 'scene', 'reconnects', 'replayed', 're-emitted', 'dup. dropped', 'tool runs', 'result']
  const lines = table(header, rows, (row, column, text) => {
    if (column !== header.length - 1) return text
    const status = outcomes[row]!.status
    return status === 'pass' ? green(text) : status === 'FAIL' ? red(text) : yellow(text)
  })
  for (const line of lines) console.log(`  ${line}`)
  console.log(
    dim(
      '  reconnects: stream = stream resumption (Last-Event-ID), session = session resumption (the session ID alone)',
    ),
  )
  const count = (status: Outcome['status']): number => outcomes.filter((outcome) => outcome.status === status).length
  const skipped = count('skip') > 0 ? `, ${count('skip')} skipped` : ''
  // Scenes, not tests: worded so that no test-runner summary can be mistaken for it.
  console.log(`\nscenes: ${count('pass')} as expected, ${count('FAIL')} not${skipped}`)
}

async function main(): Promise<number> {
  const {values} = parseArgs({
    options: {
      server: {type: 'string'},
      tool: {type: 'string'},
      args: {type: 'string'},
      otel: {type: 'boolean'},
      help: {type: 'boolean', short: 'h'},
    },
  })
  if (values.help === true) {
    console.log(usage)
    return 0
  }
  const started = Date.now()
  if (values.otel === true) instrumentClients()
  const outcomes =
    values.server === undefined ? await runReference() : await runRemote(values.server, values.tool, values.args)
  summary(outcomes)
  if (values.otel === true) await printTelemetry()
  console.log(dim(`${((Date.now() - started) / 1000).toFixed(1)} s`))
  return outcomes.some((outcome) => outcome.status === 'FAIL') ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    console.error(usage)
    process.exit(2)
  },
)
