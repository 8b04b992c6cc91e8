import {defineConfig, mergeConfig} from 'vitest/config'
import base from './vitest.config.ts'

/**
 * The suite Stryker runs against each mutant of the core (stryker.config.mjs): every test that drives src/ in
 * process. Left out are the tests that build the package, run the docs or the demo, or drive Chromium and the
 * conformance runner: they guard packaging and the browser, run many seconds each, and cover the core only through
 * the tests kept here.
 */
export default mergeConfig(base, defineConfig({
  test: {
    exclude: [
      'test/e2e/**',
      'test/package/**',
      'test/docs/**',
      'test/interop/conformance.test.ts',
      'test/security/browser-redirects.test.ts',
      'test/testing-kit/browser.test.ts',
      'test/testing-kit/guide.test.ts',
      '**/node_modules/**',
    ],
  },
}))
