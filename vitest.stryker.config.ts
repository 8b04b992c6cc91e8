import {defineConfig, mergeConfig} from 'vitest/config'
import base from './vitest.config.ts'

/**
 * The suite Stryker runs against each mutant of the core (stryker.config.mjs, docs/mutation.md): the tests that
 * drive src/ in process, through the public API (test/core, test/stores, test/security, and the interop tests on
 * real sockets that take a second or less). Left out: the tests of the testing kit (src/testing is not mutated),
 * the slow interop runs against the SDK server (15 s) and the conformance suites (a Node 22 subprocess each, a
 * minute), the scale test and the crash test (a child process killed mid-call; the in-process restart tests
 * check the same records), the layout test (it reads the sources, which Stryker rewrites), and whatever builds
 * the package, runs the docs or the demo, or drives Chromium.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        'test/e2e/**',
        'test/testing-kit/**',
        'test/interop/sdk-server.test.ts',
        'test/interop/conformance.test.ts',
        'test/interop/conformance-auth.test.ts',
        'test/interop/conformance-eras.test.ts',
        'test/core/scale.test.ts',
        'test/core/layout.test.ts',
        'test/stores/file-store-crash.test.ts',
        'test/package/**',
        'test/docs/**',
        'test/security/browser-redirects.test.ts',
        '**/node_modules/**',
      ],
      // One worker for every file of a mutant's run instead of one per file: the SDK, msw and zod are imported
      // once per run. The setup file resets the project's own modules before each file, as isolation would.
      isolate: false,
      setupFiles: ['test/fixtures/stryker-isolation.ts'],
      // A mutant that hangs a test fails it within 5 s (a killed mutant); tests that need longer say so themselves.
      testTimeout: 5_000,
      hookTimeout: 5_000,
    },
  }),
)
