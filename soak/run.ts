/**
 * `npm run soak [-- --seed N] [--calls N] [--minutes N] [--json]`: a seeded chaos run over real sockets on
 * 127.0.0.1 (see soak/soak.ts). Prints duplicate executions, duplicate deliveries, lost server requests, hung
 * calls and answers the server held but the client settled `outcome-unknown` (each must be 0), and every
 * `outcome-unknown` by cause; exits 1, printing the seed to replay, when a zero is not.
 */
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'
import type {SoakFigures} from './ledger.ts'
import {runSoak} from './soak.ts'

const usage = `usage: npm run soak [-- --seed N] [--calls N] [--minutes N] [--clients N] [--children N] [--trace FILE] [--json]

  --seed N      the fault schedule and the calls to draw (default: a new one, printed)
  --calls N     stop starting calls after N (default 2000)
  --minutes N   ... or after N minutes (default 10)
  --clients N   clients in this process, 3 calls at a time each (default 4)
  --children N  client processes killed and restarted on a FileStore (default 2)
  --hang-ms N   a call not settled this long after the faults stop is hung (default 60000)
  --trace FILE  write what the server and every client did, line by line (see soak/trace.ts)
  --json        print the figures as one JSON line`

const {values} = parseArgs({
  options: {
    seed: {type: 'string'},
    calls: {type: 'string', default: '2000'},
    minutes: {type: 'string', default: '10'},
    clients: {type: 'string', default: '4'},
    children: {type: 'string', default: '2'},
    'hang-ms': {type: 'string', default: '60000'},
    trace: {type: 'string'},
    json: {type: 'boolean', default: false},
    help: {type: 'boolean', default: false},
  },
})
if (values.help) {
  console.log(usage)
  process.exit(0)
}

/** A whole number ≥ `min` from option `name`; a clear message and exit 2 otherwise. */
function whole(name: string, text: string | undefined, min: number): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < min) {
    console.error(`--${name} must be a whole number of at least ${min}\n\n${usage}`)
    process.exit(2)
  }
  return value
}

const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : whole('seed', values.seed, 0)
const minutes = Number(values.minutes)
if (!(minutes > 0)) {
  console.error(`--minutes must be more than 0\n\n${usage}`)
  process.exit(2)
}
const options = {
  seed,
  calls: whole('calls', values.calls, 1),
  minutes,
  clients: whole('clients', values.clients, 1),
  concurrency: 3,
  children: whole('children', values.children, 0),
  childEntry: fileURLToPath(new URL('./child.js', import.meta.url)),
  hangMs: whole('hang-ms', values['hang-ms'], 1_000),
  trace: values.trace,
  log: values.json ? undefined : (line: string) => console.log(`  … ${line}`),
}
if (!values.json) console.log(`soak: seed ${seed}`)
const figures = await runSoak(options)
const zeros = {
  'duplicate executions': figures.duplicateExecutions,
  'duplicate deliveries': figures.duplicateDeliveries.response + figures.duplicateDeliveries['server-request'],
  'lost server requests': figures.lostServerRequests,
  'hung calls': figures.hungCalls,
  'recoverable answers lost': figures.recoverableLost,
}
const failed = Object.values(zeros).some((value) => value !== 0)
if (values.json) console.log(JSON.stringify(figures))
else print(figures)
if (failed) console.error(`soak FAILED: replay with npm run soak -- --seed ${seed} --calls ${figures.calls}`)
process.exit(failed ? 1 : 0)

function print(result: SoakFigures): void {
  const mark = (value: number): string => (value === 0 ? '0  ok' : `${value}  FAIL`)
  const {response, progress} = result.duplicateDeliveries
  const faultCount = Object.values(result.faults).reduce((sum, count) => sum + count, 0)
  console.log(
    `\n${result.calls} calls in ${(result.durationMs / 1000).toFixed(1)} s, ${faultCount} faults, ${result.executions} tool executions`,
  )
  console.log(
    `  outcomes: ${Object.entries(result.outcomes)
      .map(([outcome, count]) => `${outcome} ${count}`)
      .join(', ')}`,
  )
  console.log(
    `  faults:   ${Object.entries(result.faults)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(', ')}`,
  )
  console.log(
    `  server requests handled: ${result.serverRequestsHandled}; answers recovered after a kill: ${result.recoveredAfterKill}`,
  )
  console.log('')
  console.log(`  duplicate executions     ${mark(zeros['duplicate executions'])}`)
  console.log(
    `  duplicate deliveries     ${mark(zeros['duplicate deliveries'])}   (responses ${response}, server requests ${result.duplicateDeliveries['server-request']}; progress ${progress}, not counted)`,
  )
  console.log(`  lost server requests     ${mark(zeros['lost server requests'])}`)
  console.log(`  hung calls               ${mark(zeros['hung calls'])}`)
  console.log(
    `  recoverable answers lost ${mark(zeros['recoverable answers lost'])}   (outcome-unknown in a row that must be 0)`,
  )
  console.log(
    '\n  outcome-unknown by cause                                              faults  outcome-unknown  answer made',
  )
  for (const row of result.outcomeUnknown) {
    const count =
      row.why === undefined && row.outcomeUnknown > 0 ? `${row.outcomeUnknown}  FAIL` : String(row.outcomeUnknown)
    console.log(
      `  ${row.cause.padEnd(68)} ${String(row.faults).padStart(6)}  ${count.padStart(15)}  ${String(row.answered).padStart(11)}`,
    )
    console.log(
      `      ${row.why === undefined ? 'the server still holds these answers: must be 0' : `cannot be had: ${row.why}`}`,
    )
    const byFault = Object.entries(row.byFault).sort(([, a], [, b]) => b - a)
    if (byFault.length > 0)
      console.log(`      by the fault acting: ${byFault.map(([kind, count]) => `${kind} ${count}`).join(', ')}`)
  }
  if (result.examples.length > 0)
    console.log(`\n  examples:\n${result.examples.map((line) => `    ${line}`).join('\n')}`)
}
