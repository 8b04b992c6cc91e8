/**
 * An `authProvider` without `oauthClient` runs the v1 SDK's flow, imported on the first challenge: without the SDK
 * installed (here: its module fails to load), the challenge rejects the request with an error that says what to
 * install, instead of an import error (src/wire/auth.ts).
 */
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {isTransportError} from '../../src/index.ts'
import {initialize, outcome, scripted, started} from '../fixtures/scripted-fetch.ts'

const missing = new Error("Cannot find package '@modelcontextprotocol/sdk'")
const authModule = '@modelcontextprotocol/sdk/client/auth.js'

// Scoped to this file's test, not hoisted: the Stryker run shares one worker between files (vitest.stryker.config.ts).
beforeEach(() => {
  vi.doMock(authModule, () => {
    throw missing
  })
})
afterEach(() => {
  vi.doUnmock(authModule)
})

describe('an authorization challenge without the SDK installed', () => {
  it('rejects the request with an http error naming the package to install, its cause the failed import', async () => {
    const {fetch, sent} = scripted(() => new Response(null, {status: 401}))
    const {transport} = await started({
      fetch,
      authProvider: {token: () => Promise.resolve('stale'), onUnauthorized: () => Promise.resolve()},
    })
    const result = await outcome(transport.send(initialize))
    expect(isTransportError(result, 'http'), String(result)).toBe(true)
    expect(result).toMatchObject({
      message:
        'The server asks for authorization (HTTP 401/403), and options.authProvider needs @modelcontextprotocol/sdk installed to run it (or options.oauthClient)',
      cause: expect.objectContaining({cause: missing}),
    })
    expect(sent).toHaveLength(1)
    await transport.close()
  })
})
