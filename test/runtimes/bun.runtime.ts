/**
 * The runtime suite in Bun's own test runner: `bun test ./test/runtimes/bun.runtime.ts` (npm run test:bun).
 */
import {afterAll, beforeAll, describe, test} from 'bun:test'
import {mockFetch} from './fetch-network.ts'
import {registerTests} from './suite.ts'

registerTests({
  runner: {
    describe: (title, _needs, body) => describe(title, body),
    test: (title, body, timeoutMs) => test(title, body, timeoutMs),
    beforeAll,
    afterAll,
  },
  command: (script, args) => [process.execPath, script, ...args],
  mock: mockFetch,
})
