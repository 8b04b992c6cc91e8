/**
 * `npm run soak` on a short fixed seed, as CI runs it: the real command (compiled as `npm run soak` compiles
 * it), seeded chaos over real sockets on 127.0.0.1, client processes killed and restarted on a FileStore. Its
 * zeros are asserted one by one, so that a failure names the figure; the seed replays it.
 */
import {execFile} from 'node:child_process'
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {SoakFigures} from '../../soak/ledger.ts'

const run = promisify(execFile)
const seed = 2655
let directory: string
let figures: SoakFigures

beforeAll(async () => {
  await mkdir('.test-build', {recursive: true})
  directory = await mkdtemp(join('.test-build', 'soak-'))
  await run('npx', ['tsc', '-p', 'soak/tsconfig.json', '--outDir', directory])
  // Exit 1 when a zero fails: the figures are printed all the same.
  const args = [
    join(directory, 'soak', 'run.js'),
    '--seed',
    String(seed),
    '--calls',
    '400',
    '--hang-ms',
    '10000',
    '--json',
  ]
  const output = await run(process.execPath, args).catch((error: unknown) => ({
    stdout: (error as {stdout?: string}).stdout ?? '',
  }))
  figures = JSON.parse(output.stdout.trim().split('\n').at(-1)!) as SoakFigures
}, 150_000)

afterAll(async () => {
  await rm(directory, {recursive: true, force: true})
})

describe(`npm run soak, seed ${seed}`, () => {
  it('makes hundreds of calls through cuts, bursts, an outage, expiries and killed client processes', () => {
    expect(figures.calls).toBeGreaterThanOrEqual(400)
    expect(figures.outcomes['result']).toBeGreaterThan(100)
    expect(figures.serverRequestsHandled).toBeGreaterThan(20)
    expect(Object.keys(figures.faults).length).toBeGreaterThanOrEqual(5)
    expect(figures.faults.outage).toBeGreaterThanOrEqual(1)
    expect(figures.faults.kill).toBeGreaterThanOrEqual(1)
    expect(figures.faults['session-expired']).toBeGreaterThanOrEqual(1)
  })

  it('never runs a tool twice', () => {
    expect(figures.executions).toBeLessThanOrEqual(figures.calls)
    expect(figures.duplicateExecutions).toBe(0)
  })

  it('never delivers a response or a server request twice to a Client', () => {
    expect(figures.duplicateDeliveries.response).toBe(0)
    expect(figures.duplicateDeliveries['server-request']).toBe(0)
  })

  it('settles every call within the bound', () => {
    expect(figures.hungCalls).toBe(0)
  })

  // Each outcome-unknown by how the call failed (its POST, or how its stream ended): only rows where the answer
  // cannot be had may count any; an answer the server still held is recovered.
  it('settles outcome-unknown only where the answer cannot be had, and names the cause of each', () => {
    expect(figures.outcomeUnknown.filter((row) => row.why === undefined && row.outcomeUnknown > 0)).toEqual([])
    expect(figures.recoverableLost).toBe(0)
    expect(figures.outcomeUnknown.reduce((sum, row) => sum + row.outcomeUnknown, 0)).toBe(
      figures.outcomes['outcome-unknown'] ?? 0,
    )
  })

  // A call whose answer can no longer arrive leaves its tool's server requests on the server: the standalone stream
  // re-attaches without cursor at once, and the server re-emits them (test/core/reemission.test.ts, case by case).
  it('answers every server request the server sent', () => {
    expect(figures.lostServerRequests).toBe(0)
  })
})
