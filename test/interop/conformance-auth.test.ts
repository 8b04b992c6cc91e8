/**
 * The official MCP conformance suite's authorization scenarios, `@modelcontextprotocol/conformance`
 * 0.2.0-alpha.12: every `auth/*` client scenario that applies to protocol 2025-11-25 or earlier, graded on
 * conformance/client.ts with this transport and, in the same run, with the SDK's own transport (the baseline).
 * The prerelease is a devDependency under the alias `conformance-next`, beside the stable 0.1 line.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  authScenariosOfBothEras,
  buildConformanceClient,
  failuresOf,
  type ConformanceRun,
} from '../fixtures/conformance.ts'

/** The suite's prerelease, installed beside the stable one under an alias (package.json devDependencies). */
const suite = 'node_modules/conformance-next/dist/index.js'
/** `npx conformance list` of 0.2.0-alpha.12: the `auth/*` client scenarios marked 2025-03-26, 2025-06-18 or 2025-11-25. */
const scenarios = [
  ...authScenariosOfBothEras,
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
]

let conformance: ConformanceRun
/** Scenarios passed (every graded check SUCCESS), per transport. */
const passed = {ours: new Set<string>(), sdk: new Set<string>()}

describe(`MCP conformance suite 0.2.0-alpha.12, auth scenarios up to 2025-11-25`, () => {
  beforeAll(async () => {
    conformance = await buildConformanceClient(suite)
  }, 120_000)

  afterAll(async () => {
    await conformance.remove()
  })

  it.concurrent.each(scenarios)(
    '%s: this transport passes whatever the SDK transport passes',
    async (scenario) => {
      const [ours, sdk] = [await conformance.grade(scenario, 'ours'), await conformance.grade(scenario, 'sdk')]
      for (const [kind, graded] of [
        ['ours', ours],
        ['sdk', sdk],
      ] as const) {
        const {graded: count, failed} = failuresOf(graded)
        expect(count).toBeGreaterThan(0)
        if (failed.length === 0) passed[kind].add(scenario)
      }
      if (passed.sdk.has(scenario)) expect(failuresOf(ours).failed).toEqual([])
    },
    90_000,
  )

  // The count of docs/authorization.md: every scenario, on both transports.
  it('counts 16 of 16 passed with this transport and 16 of 16 with the SDK transport', () => {
    expect([passed.ours.size, passed.sdk.size]).toEqual([16, 16])
  })
})
