/**
 * The official MCP conformance suite, `@modelcontextprotocol/conformance` 0.1.13 (the last release that runs on
 * Node 20 as it is), grades conformance/client.ts: the SDK `Client` 1.32 on this transport. Each scenario's
 * checks must all succeed: a FAILURE or a WARNING fails the test.
 */
import {execFile} from 'node:child_process'
import {mkdir, mkdtemp, readdir, readFile, rm} from 'node:fs/promises'
import {join} from 'node:path'
import {promisify} from 'node:util'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

const run = promisify(execFile)
const suite = 'node_modules/@modelcontextprotocol/conformance/dist/index.js'
const scenarios = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry']

let directory: string

beforeAll(async () => {
  // Inside the repository, so that the build finds node_modules. Node 20 runs JavaScript: build the client.
  await mkdir('.test-build', {recursive: true})
  directory = await mkdtemp(join('.test-build', 'conformance-'))
  await run('npx', ['tsc', '-p', 'conformance/tsconfig.json', '--outDir', directory])
}, 120_000)

afterAll(async () => {
  await rm(directory, {recursive: true, force: true})
})

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED'
  errorMessage?: string
}

async function grade(scenario: string): Promise<{exitCode: number; checks: Check[]}> {
  const output = join(directory, 'results', scenario)
  const command = `node ${join(directory, 'conformance', 'client.js')}`
  let exitCode = 0
  try {
    await run(process.execPath, [suite, 'client', '--command', command, '--scenario', scenario, '--timeout', '20000', '-o', output])
  } catch (error) {
    exitCode = (error as {code?: number}).code ?? -1
  }
  // One folder per run, named after the scenario and the time.
  const [folder] = await readdir(output)
  const checks = JSON.parse(await readFile(join(output, folder!, 'checks.json'), 'utf8')) as Check[]
  return {exitCode, checks}
}

describe('MCP conformance suite 0.1.13, client scenarios, with this transport in the SDK Client', () => {
  it.concurrent.each(scenarios)('%s passes', async (scenario) => {
    const {exitCode, checks} = await grade(scenario)
    const graded = checks.filter((check) => check.status !== 'INFO')
    expect(graded.filter((check) => check.status !== 'SUCCESS')).toEqual([])
    expect(graded.length).toBeGreaterThan(0)
    expect(exitCode).toBe(0)
  }, 60_000)
})
