/**
 * `mcp-resumable-http/server` needs nothing of Node: esbuild bundles both its entry points for the browser platform
 * (where a Node built-in does not resolve), and Bun and Deno (the registry binaries, devDependencies) run a whole
 * session of the SDK's Web-standard transport with the event store and the wrapper.
 */
import {execFile} from 'node:child_process'
import {promisify} from 'node:util'
import {build} from 'esbuild'
import {describe, expect, it} from 'vitest'

const run = promisify(execFile)
const session = 'test/fixtures/server-session.ts'
const expected = {reemitted: 1, result: true, refused: 400}

describe('the server half outside Node', () => {
  it('bundles for the browser platform, ./server and ./server/redis, without a Node built-in', async () => {
    const result = await build({
      entryPoints: ['src/server.ts', 'src/server/redis.ts'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      outdir: 'out',
      logLevel: 'silent',
    })
    expect(result.errors).toEqual([])
    expect(result.outputFiles.map((file) => file.text).join('\n')).not.toMatch(/from ["']node:/)
  })

  it('runs a session with re-emission, replay and a refused ID under Bun', async () => {
    const {stdout} = await run('node_modules/.bin/bun', [session])
    expect(JSON.parse(stdout)).toMatchObject(expected)
  }, 30_000)

  it('runs a session with re-emission, replay and a refused ID under Deno', async () => {
    const {stdout} = await run('node_modules/.bin/deno', ['run', '--no-check', '--allow-read', '--allow-env', session])
    expect(JSON.parse(stdout)).toMatchObject(expected)
  }, 30_000)
})
