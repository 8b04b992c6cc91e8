/**
 * The runtime suite in Node's own test runner, for a Node line vitest does not run on in CI (24):
 * `node scripts/node.mjs --line 24 "node --test test/runtimes/node.runtime.ts"` (npm run test:node24).
 */
import {after, before, describe, test} from 'node:test'
import {setupServer} from 'msw/node'
import {registerTests} from './suite.ts'

registerTests({
  runner: {
    describe: (title, _needs, body) => void describe(title, body),
    test: (title, body, timeoutMs) => void test(title, {timeout: timeoutMs}, body),
    beforeAll: (body) => before(body),
    afterAll: (body) => after(body),
  },
  command: (script, args) => [process.execPath, script, ...args],
  mock: (handlers) => {
    const network = setupServer(...handlers)
    network.listen({onUnhandledFrame: 'error'})
    return Promise.resolve(() => {
      network.close()
      return Promise.resolve()
    })
  },
})
