// Mutation testing of the core (docs/mutation.md): `npm run mutate` runs it with Node 22 (scripts/node22.sh).
// A subset: `npm run mutate -- --mutate src/decision.ts,src/streams/stream.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: {configFile: 'vitest.stryker.config.ts'},
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/**/*.ts',
    '!src/testing/**',
    // Entry points only re-export.
    '!src/index.ts',
    '!src/node.ts',
    '!src/idb.ts',
  ],
  // Only the tests that reach a mutant run against it.
  coverageAnalysis: 'perTest',
  // Two cores, shared with other work: two mutants at a time at most.
  concurrency: 2,
  // A mutant that hangs a test fails it by vitest's own 10 s timeout, before Stryker's: restarting a timed-out
  // runner costs more than the wait.
  timeoutMS: 15_000,
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
