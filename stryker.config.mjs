// Mutation testing of the core (docs/mutation.md): `npm run mutate` runs it on a supported Node (scripts/node.mjs).
// A subset: `npm run mutate -- --mutate src/policy/decision.ts,src/streams/stream.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // The tests a mutant covers are named to vitest; no need for it to work out which files relate to the mutant.
  vitest: {configFile: 'vitest.stryker.config.ts', related: false},
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/**/*.ts',
    '!src/testing/**',
    // Entry points only re-export.
    '!src/index.ts',
    '!src/node.ts',
    '!src/idb.ts',
    '!src/redis.ts',
    '!src/cloudflare.ts',
    // It needs a Durable Object's storage: its tests run in workerd (npm run test:workerd), out of Stryker's reach.
    '!src/persistence/durable-object-store.ts',
  ],
  // Results are kept in the repository (docs/mutation.md, "Incremental"): a run re-tests only the mutants whose
  // code or covering tests changed since. `npm run mutate:full` re-tests every one and rewrites the file.
  incremental: true,
  incrementalFile: 'mutation/incremental.json',
  // Only the tests that reach a mutant run against it.
  coverageAnalysis: 'perTest',
  // Two cores, shared with other work: two mutants at a time at most.
  concurrency: 2,
  // A mutant that hangs a test fails it by vitest's own 5 s timeout (vitest.stryker.config.ts), before Stryker's:
  // restarting a timed-out runner costs more than the wait.
  timeoutMS: 10_000,
  // TypeScript mutants that do not compile are not run (the checker would cost more than it saves here).
  disableTypeChecks: 'src/**/*.ts',
  ignoreStatic: true,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: {fileName: 'reports/mutation/index.html'},
  jsonReporter: {fileName: 'reports/mutation/mutation.json'},
  thresholds: {high: 90, low: 80, break: null},
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
}
