/**
 * `npm run sim`: the deterministic simulation. `--schedules N` runs N schedules over `--workers` threads (one per
 * core by default), from `--base` (random unless given); each failing one is shrunk and written out with its trace.
 * `--seed N` replays one schedule (with `--path P`, its shrunk form), trace included. Exits 1 on any violation.
 */
import {availableParallelism} from 'node:os'
import {parseArgs} from 'node:util'
import {installClock, realTime, VirtualClock} from './clock.ts'
import {invariantNames, type InvariantName} from './invariants.ts'
import {describeFailure, emptyTally, judge, runSeeds, shrink, type Tally} from './runner.ts'
import {scheduleOf} from './schedule.ts'
import {runOnWorkers, seedsOf} from './workers.ts'

const command = 'npm run sim'
const {values} = parseArgs({
  options: {
    schedules: {type: 'string', default: '1000'},
    seed: {type: 'string'},
    path: {type: 'string'},
    base: {type: 'string'},
    workers: {type: 'string'},
    'shrink-seconds': {type: 'string', default: '30'},
  },
})
const integer = (name: string, value: string): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`--${name} must be a whole number, got ${value}`)
  return n
}

const clock = new VirtualClock()
installClock(clock)
const shrinkSeconds = integer('shrink-seconds', values['shrink-seconds'])
let shrinkDeadline = 0

/**
 * Shrinks the first schedule found breaking each invariant, and writes it out: `--shrink-seconds` in all, shared
 * among the invariants broken.
 */
async function reportFindings(tally: Tally): Promise<void> {
  const first = new Map<InvariantName, number>()
  for (const {seed, violations} of [...tally.findings].sort((a, b) => a.seed - b.seed))
    for (const {invariant} of violations) if (!first.has(invariant)) first.set(invariant, seed)
  const broken = invariantNames.filter((invariant) => first.has(invariant))
  for (const [index, invariant] of broken.entries()) {
    const seed = first.get(invariant)!
    const seeds = tally.findings.filter((finding) => finding.violations.some((v) => v.invariant === invariant))
    console.log(`\n=== "${invariant}": broken by ${seeds.length} schedules, the first being seed ${seed}; shrinking it`)
    const seconds = Math.max(1, (shrinkDeadline - realTime.now()) / 1000 / (broken.length - index))
    const shrunk = await shrink(seed, invariant, clock, {seconds})
    console.log(shrunk === undefined ? `seed ${seed} no longer fails` : describeFailure(seed, shrunk, command))
  }
}

if (values.seed !== undefined) {
  const seed = integer('seed', values.seed)
  if (values.path === undefined) {
    const {ledger, violations} = await judge(scheduleOf(seed), clock)
    if (violations.length > 0)
      console.log(describeFailure(seed, {schedule: ledger.schedule, path: undefined, ledger, violations}, command))
    else console.log(`seed ${seed}: every invariant holds\n${ledger.trace.format()}`)
    process.exitCode = violations.length === 0 ? 0 : 1
  } else {
    const shrunk = await shrink(seed, undefined, clock, {path: values.path})
    console.log(
      shrunk === undefined
        ? `seed ${seed} path ${values.path}: every invariant holds`
        : describeFailure(seed, shrunk, command),
    )
    process.exitCode = shrunk === undefined ? 0 : 1
  }
} else {
  const count = integer('schedules', values.schedules)
  const base = values.base === undefined ? realTime.now() % 2 ** 31 : integer('base', values.base)
  const workers = Math.max(1, Math.min(count, integer('workers', values.workers ?? String(availableParallelism()))))
  const started = realTime.now()
  const cpuBefore = process.cpuUsage()
  let shown = 0
  let told = 0
  const progress = (tally: Tally, final = false): void => {
    // Each schedule in violation is named at once: a long run's findings can be replayed while it goes on.
    for (const {seed, violations} of tally.findings.slice(told)) {
      const broken = [...new Set(violations.map(({invariant}) => `"${invariant}"`))].join(', ')
      console.error(
        `${process.stderr.isTTY ? '\n' : ''}seed ${seed} breaks ${broken} (replay: ${command} -- --seed ${seed})`,
      )
    }
    told = tally.findings.length
    const now = realTime.now()
    if (!final && now - shown < 1000) return
    shown = now
    const seconds = (now - started) / 1000
    const rate = tally.schedules / Math.max(seconds, 0.001)
    const left = rate > 0 ? (count - tally.schedules) / rate : Infinity
    const line = `${tally.schedules}/${count} schedules, ${Math.round(rate)}/s (${Math.round(rate / workers)}/s per worker), ${tally.findings.length} violating, ${final ? `${seconds.toFixed(1)} s` : `~${Math.ceil(left)} s left`}`
    if (process.stderr.isTTY && !final) process.stderr.write(`\r${line}`)
    else console.error(line)
  }
  console.log(`${command}: ${count} schedules from seed ${base} on ${workers} workers (replay one with --seed N)`)
  const single = emptyTally()
  const tally =
    workers === 1
      ? await runSeeds(seedsOf({base, count, index: 0, of: 1}), clock, single, () => progress(single))
      : await runOnWorkers(
          Array.from({length: workers}, (_, index) => ({base, count, index, of: workers})),
          (totals) => progress(totals),
        )
  progress(tally, true)
  shrinkDeadline = realTime.now() + shrinkSeconds * 1000
  const seconds = (realTime.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  // Per core: schedules over the CPU time of every thread, which a machine shared with other work does not skew.
  const perCore = tally.schedules / ((cpu.user + cpu.system) / 1e6)
  console.log(
    `${tally.schedules} schedules, ${tally.calls} calls, ${tally.faults} faults, ${tally.findings.length} violating schedules, ${Math.round(tally.schedules / seconds)} schedules/s on ${workers} workers, ${Math.round(perCore)} per CPU second (${seconds.toFixed(1)} s)`,
  )
  await reportFindings(tally)
  process.exitCode = tally.findings.length === 0 ? 0 : 1
}
