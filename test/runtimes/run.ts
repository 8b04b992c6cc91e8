/**
 * Builds the package once (dist/), then runs the runtime suites asked for, one after the other, each in its own
 * runtime and test runner, with its wall time (docs/runtimes.md):
 *
 *   node --experimental-strip-types test/runtimes/run.ts bun|deno|workerd|node24|all
 *
 * (npm run test:bun, …, npm run test:runtimes), through scripts/node.mjs (a supported Node; the flag is needed below
 * Node 22.18 only). The binaries are the devDependencies in node_modules/.bin. With `all`, every suite runs, and
 * the run fails if any did.
 */
import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = (name: string): string => `${root}node_modules/.bin/${name}`

/** What the Deno suite is given: each of its parts narrows it to what it needs (test/runtimes/deno.runtime.ts). */
const denoPermissions = [
  '--allow-net=127.0.0.1',
  '--allow-read=dist,node_modules,.test-build/runtimes',
  '--allow-write=.test-build/runtimes',
  '--allow-sys=hostname',
  '--allow-run',
  '--allow-env',
]

const suites: Record<string, string[][]> = {
  bun: [[bin('bun'), 'test', './test/runtimes/bun.runtime.ts']],
  // --no-check: Deno's type checker does not resolve the SDK's subpath exports (TS2307); see deno.runtime.ts.
  deno: [[bin('deno'), 'test', '--no-check', ...denoPermissions, 'test/runtimes/deno.runtime.ts']],
  // Workers code is type-checked against the build, with Cloudflare's types, then run.
  workerd: [
    [process.execPath, bin('tsc'), '-p', 'examples/cloudflare-worker/tsconfig.json'],
    [process.execPath, '--experimental-strip-types', 'test/runtimes/workerd.runtime.ts'],
  ],
  node24: [[process.execPath, 'scripts/node.mjs', '--line', '24', 'node --test test/runtimes/node.runtime.ts']],
}

const [asked = ''] = process.argv.slice(2)
const names = asked === 'all' ? Object.keys(suites) : [asked]
if (!names.every((name) => name in suites)) {
  console.error(`usage: node test/runtimes/run.ts ${[...Object.keys(suites), 'all'].join('|')}`)
  process.exit(2)
}

/** Runs `command` in the repository, its output passed through; its exit status. */
function run([command, ...args]: string[]): number {
  return spawnSync(command!, args, {cwd: root, stdio: 'inherit'}).status ?? 1
}

const timed = (label: string, commands: string[][]): boolean => {
  const started = performance.now()
  const ok = commands.every((command) => run(command) === 0)
  console.info(
    `\nruntimes: ${label} ${ok ? 'passed' : 'FAILED'} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  return ok
}

if (!timed('build', [[process.execPath, 'scripts/node.mjs', 'npm run build']])) process.exit(1)
const failed = names.filter((name) => !timed(name, suites[name]!))
if (failed.length > 0) console.error(`runtimes: failed: ${failed.join(', ')}`)
process.exit(failed.length === 0 ? 0 : 1)
