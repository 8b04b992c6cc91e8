import {defineConfig, mergeConfig} from 'vitest/config'
import base from './vitest.config.ts'

/**
 * The suite Stryker runs against each mutant of the core (stryker.config.mjs, docs/mutation.md): the tests that
 * drive src/ in process, through the public API (test/core, test/stores, test/security, and the interop tests on
 * real sockets that take a second or less). Left out: the tests of the testing kit (src/testing is not mutated),
 * the slow interop runs against the SDK server (15 s) and the scale test (they repeat what test/core checks, with
 * more traffic), and whatever builds the package, runs the docs or the demo, or drives Chromium.
 */
export default mergeConfig(base, defineConfig({
  test: {
    exclude: [
      'test/e2e/**',
      'test/testing-kit/**',
      'test/interop/sdk-server.test.ts',
      'test/core/scale.test.ts',
      'test/package/**',
      'test/docs/**',
      'test/interop/conformance.test.ts',
      'test/security/browser-redirects.test.ts',
      '**/node_modules/**',
    ],
  },
}))
