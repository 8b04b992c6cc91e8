/**
 * The official MCP conformance suite's client scenarios at revision 2026-07-28 (`@modelcontextprotocol/conformance`
 * 0.2.0-alpha.12, the scenarios its requirements/2026-07-28.yaml lists for clients): conformance/client-v2.ts, the
 * v2 `Client` pinned to 2026-07-28, on this transport and, in the same run, on the v2 SDK's own transport (the
 * baseline). The prerelease is a devDependency under the alias `conformance-next`.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  authScenariosOfBothEras,
  buildConformanceClient,
  failuresOf,
  type ConformanceRun,
  type Graded,
} from '../fixtures/conformance.ts'

/** The suite's prerelease, installed beside the stable one under an alias (package.json devDependencies). */
const suite = 'node_modules/conformance-next/dist/index.js'
/** The wire scenarios: headers, per-request metadata, input_required rounds, a tool schema's `$ref`. */
const wire = [
  'tools_call',
  'request-metadata',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'sep-2322-client-request-state',
  'json-schema-ref-no-deref',
]
const auth = [
  ...authScenariosOfBothEras,
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
]

let conformance: ConformanceRun
/** Scenarios passed (every graded check SUCCESS), per transport. */
const passed = {ours: new Set<string>(), sdk: new Set<string>()}

/** The checks graded FAILURE or WARNING (SKIPPED: a step the scenario offers and this client does not take). */
const failedIds = (graded: Graded): string[] =>
  [
    ...new Set(
      graded.checks
        .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
        .map((check) => check.id),
    ),
  ].sort()

async function gradeBoth(scenario: string): Promise<{ours: Graded; sdk: Graded}> {
  const [ours, sdk] = [
    await conformance.grade(scenario, 'ours', '2026-07-28'),
    await conformance.grade(scenario, 'sdk', '2026-07-28'),
  ]
  for (const [kind, graded] of [
    ['ours', ours],
    ['sdk', sdk],
  ] as const) {
    expect(failuresOf(graded).graded).toBeGreaterThan(0)
    if (failedIds(graded).length === 0) passed[kind].add(scenario)
  }
  return {ours, sdk}
}

describe(`MCP conformance suite 0.2.0-alpha.12, client scenarios at 2026-07-28, the v2 Client`, () => {
  beforeAll(async () => {
    conformance = await buildConformanceClient(suite)
  }, 120_000)

  afterAll(async () => {
    await conformance.remove()
  })

  it.concurrent.each(wire)(
    '%s: passes on this transport and on the v2 SDK transport',
    async (scenario) => {
      const {ours, sdk} = await gradeBoth(scenario)
      expect(failedIds(sdk)).toEqual([])
      expect(failedIds(ours)).toEqual([])
      expect(ours.exitCode).toBe(0)
    },
    90_000,
  )

  // conformance/client-v2.ts gives this transport the v2 SDK's OAuth client (`oauthClient`): the
  // flow the v2 transport runs.
  it.concurrent.each(auth)(
    '%s: passes on this transport running the v2 OAuth client and on the v2 SDK transport',
    async (scenario) => {
      const {ours, sdk} = await gradeBoth(scenario)
      expect(failedIds(sdk)).toEqual([])
      expect(failedIds(ours)).toEqual([])
    },
    90_000,
  )

  // The counts of docs/eras.md.
  it('counts every scenario passed on each transport', () => {
    expect({ours: passed.ours.size, sdk: passed.sdk.size}).toEqual({
      ours: wire.length + auth.length,
      sdk: wire.length + auth.length,
    })
  })
})
