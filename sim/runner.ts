/**
 * Runs schedules and judges them: a range of seeds with a tally, one seed replayed with its trace, and a failing
 * seed shrunk by fast-check to a small schedule that breaks the same invariant.
 */
import fc from 'fast-check'
import {realTime, type VirtualClock} from './clock.ts'
import {check, type InvariantName, type Violation} from './invariants.ts'
import {scheduleArbitrary, scheduleOf, type Schedule} from './schedule.ts'
import {runSchedule, type Ledger} from './world.ts'

/** A schedule that broke at least one invariant. */
export interface Finding {
  seed: number
  violations: Violation[]
}

export interface Tally {
  schedules: number
  calls: number
  faults: number
  findings: Finding[]
}

export const emptyTally = (): Tally => ({schedules: 0, calls: 0, faults: 0, findings: []})

/** Runs schedule `seed` and judges it. */
export async function judge(
  schedule: Schedule,
  clock: VirtualClock,
): Promise<{ledger: Ledger; violations: Violation[]}> {
  const ledger = await runSchedule(schedule, clock)
  return {ledger, violations: check(ledger)}
}

/** Runs the schedules of `seeds`, adding to `tally`; `onEach` hears of each one done. */
export async function runSeeds(
  seeds: Iterable<number>,
  clock: VirtualClock,
  tally: Tally,
  onEach: (finding: Finding | undefined) => void = () => undefined,
): Promise<Tally> {
  for (const seed of seeds) {
    const {ledger, violations} = await judge(scheduleOf(seed), clock)
    tally.schedules++
    tally.calls += ledger.calls.length
    tally.faults += ledger.faults
    const finding = violations.length === 0 ? undefined : {seed, violations}
    if (finding !== undefined) tally.findings.push(finding)
    onEach(finding)
  }
  return tally
}

export interface Shrunk {
  schedule: Schedule
  /** fast-check's path to it from the seed: `--seed N --path P` replays it. */
  path: string | undefined
  ledger: Ledger
  violations: Violation[]
}

/**
 * Schedule `seed` shrunk by fast-check to a small one that still breaks `invariant` (within `seconds`); with `path`,
 * the shrunk schedule that path names, at once.
 */
export async function shrink(
  seed: number,
  invariant: InvariantName | undefined,
  clock: VirtualClock,
  options: {path?: string | undefined; seconds?: number} = {},
): Promise<Shrunk | undefined> {
  // Past the deadline every candidate passes: the shrinker then stops at the smallest failure found so far.
  const deadline = realTime.now() + (options.seconds ?? 60) * 1000
  const property = fc.asyncProperty(scheduleArbitrary, async (schedule) => {
    if (options.path === undefined && realTime.now() > deadline) return true
    const {violations} = await judge(schedule, clock)
    return !violations.some((violation) => invariant === undefined || violation.invariant === invariant)
  })
  const result = await fc.check(property, {
    seed,
    numRuns: 1,
    ...(options.path === undefined ? {} : {path: options.path, endOnFailure: true}),
  })
  const schedule = result.counterexample?.[0]
  if (schedule === undefined) return undefined
  const {ledger, violations} = await judge(schedule, clock)
  return {schedule, path: result.counterexamplePath ?? undefined, ledger, violations}
}

/** A failing schedule, written out: the seed, the invariants broken, the schedule, how to replay it, the trace. */
export function describeFailure(seed: number, shrunk: Shrunk, command: string): string {
  const broken = [...new Set(shrunk.violations.map((violation) => violation.invariant))]
  return [
    `seed ${seed}: ${broken.map((name) => `"${name}"`).join(', ')} broken`,
    ...shrunk.violations.map((violation) => `  - ${violation.invariant}: ${violation.detail}`),
    `schedule: ${JSON.stringify(shrunk.schedule)}`,
    `replay: ${command} -- --seed ${seed}${shrunk.path === undefined ? '' : ` --path ${shrunk.path}`}`,
    ...(shrunk.path === undefined ? [] : [`the schedule as drawn: ${command} -- --seed ${seed}`]),
    'trace (virtual ms since the start):',
    shrunk.ledger.trace.format(),
  ].join('\n')
}
