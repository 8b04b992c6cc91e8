/**
 * The official MCP conformance suite's authorization scenarios, `@modelcontextprotocol/conformance`
 * 0.2.0-alpha.12: every `auth/*` client scenario that applies to protocol 2025-11-25 or earlier, graded on
 * conformance/client.ts with this transport and, in the same run, with the SDK's own transport (the baseline).
 * The suite needs Node 22: scripts/node22.sh installs it from the npm registry into .tools/ on the first run
 * (never touching the system Node); when that install fails, the tests are skipped with its reason.
 */
import {execFile} from 'node:child_process'
import {promisify} from 'node:util'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {authScenariosOfBothEras, buildConformanceClient, failuresOf, type ConformanceRun} from '../fixtures/conformance.ts'

const suite = '.tools/node_modules/@modelcontextprotocol/conformance/dist/index.js'
/** `npx conformance list` of 0.2.0-alpha.12: the `auth/*` client scenarios marked 2025-03-26, 2025-06-18 or 2025-11-25. */
const scenarios = [...authScenariosOfBothEras, 'auth/2025-03-26-oauth-metadata-backcompat', 'auth/2025-03-26-oauth-endpoint-fallback']

/** The Node 22 binary, or why it could not be installed. */
const tools = await promisify(execFile)('bash', ['scripts/node22.sh'], {timeout: 300_000}).then(
  ({stdout}) => ({node: stdout.trim().split('\n').at(-1)!, reason: undefined}),
  (error: unknown) => ({node: undefined, reason: `scripts/node22.sh failed: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`}),
)
if (tools.reason !== undefined) console.warn(`Skipping the conformance auth scenarios: ${tools.reason}`)

let conformance: ConformanceRun
/** Scenarios passed (every graded check SUCCESS), per transport. */
const passed = {ours: new Set<string>(), sdk: new Set<string>()}

describe.skipIf(tools.node === undefined)(`MCP conformance suite 0.2.0-alpha.12, auth scenarios up to 2025-11-25${tools.reason === undefined ? '' : ` (skipped: ${tools.reason})`}`, () => {
  beforeAll(async () => {
    conformance = await buildConformanceClient(suite, tools.node)
  }, 120_000)

  afterAll(async () => {
    await conformance.remove()
  })

  it.concurrent.each(scenarios)('%s: this transport passes whatever the SDK transport passes', async (scenario) => {
    const [ours, sdk] = [await conformance.grade(scenario, 'ours'), await conformance.grade(scenario, 'sdk')]
    for (const [kind, graded] of [['ours', ours], ['sdk', sdk]] as const) {
      const {graded: count, failed} = failuresOf(graded)
      expect(count).toBeGreaterThan(0)
      if (failed.length === 0) passed[kind].add(scenario)
    }
    if (passed.sdk.has(scenario)) expect(failuresOf(ours).failed).toEqual([])
  }, 90_000)

  // The README's count ("Authorization"): every scenario, on both transports.
  it('counts 16 of 16 passed with this transport and 16 of 16 with the SDK transport', () => {
    expect([passed.ours.size, passed.sdk.size]).toEqual([16, 16])
  })
})
