/**
 * The simulation's commands, compiled as `npm run sim` compiles them: the run on worker threads (the seeds split
 * among the workers run once each, and their tallies add up to what one thread finds) and the floor of its real parts.
 */
import {execFile} from 'node:child_process'
import {promisify} from 'node:util'
import {beforeAll, describe, expect, it} from 'vitest'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url)

/** The run's summary line: schedules, calls, faults and violating schedules, without its speed. */
async function summary(workers: number): Promise<string> {
  const {stdout, stderr} = await run(
    process.execPath,
    ['.sim/sim/run.js', '--schedules', '30', '--base', '400', '--workers', String(workers)],
    {cwd: root},
  )
  expect(stderr).toMatch(/30\/30 schedules, \d+\/s \(\d+\/s per worker\), 0 violating, [\d.]+ s/)
  const line = stdout.split('\n').find((text) => text.includes('violating schedules'))
  return line!.replace(/, \d+ schedules\/s.*/, '')
}

beforeAll(async () => {
  await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'sim/tsconfig.json'], {cwd: root})
}, 120_000)

describe('the simulation on worker threads', () => {
  it('two workers run the same schedules as one thread, each once: the same calls, faults and findings', async () => {
    const [two, one] = await Promise.all([summary(2), summary(1)])
    expect(two).toMatch(/^30 schedules, \d+ calls, \d+ faults, 0 violating schedules$/)
    expect(two).toBe(one)
  }, 120_000)
})

describe('the floor of the real parts', () => {
  it('times rounds of nine calls on this transport and on the SDK one, each with its rate per CPU second', async () => {
    const {stdout} = await run(process.execPath, ['.sim/sim/floor.js', '--rounds', '3'], {cwd: root})
    expect(stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^this transport: 3 rounds of 9 calls, \d+\/s, \d+ per CPU second$/),
      expect.stringMatching(/^the SDK's transport: 3 rounds of 9 calls, \d+\/s, \d+ per CPU second$/),
    ])
  }, 120_000)
})
