/**
 * The runtime suite in Deno's own test runner (npm run test:deno; the command and the permissions it grants, the union
 * of the parts', are in run.ts). Each part runs with the permissions it needs and no more (Deno.test's `permissions`),
 * so this suite is the proof of the table in docs/runtimes.md. `--no-check`: Deno's type checker does not resolve the
 * SDK's subpath exports (`@modelcontextprotocol/sdk/client/index.js`: TS2307); the package's own types are checked with
 * `deno check` on the installed package (test/package/consumer.test.ts).
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {existsSync} from 'node:fs'
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import {join} from 'node:path'
import {FileStore} from 'mcp-resumable-http/node'
import {mockFetch} from './fetch-network.ts'
import {dist, nodeModules, registerTests, scratch, type Needs} from './suite.ts'

/** What each part of the suite is granted: the rows of docs/runtimes.md's table. */
function permissionsOf(needs: Needs): Deno.PermissionOptionsObject {
  return {
    net: needs.loopback ? ['127.0.0.1'] : false,
    read: [...(needs.loopback ? [dist, nodeModules] : []), ...(needs.fileStore ? [scratch] : [])],
    write: needs.fileStore ? [scratch] : false,
    sys: needs.fileStore ? ['hostname'] : false,
    // FileStore's liveness check (process.kill(pid, 0)) needs it whole: --allow-run=<a program> is not enough.
    run: needs.fileStore === true || needs.processes === true,
    // node:child_process reads the environment to start a process; msw's debug reads every variable.
    env: needs.env === true || needs.processes === true,
  }
}

/** The same, as the flags of `deno run` for a client process of the FileStore part. */
const childFlags = [
  '--allow-net=127.0.0.1',
  `--allow-read=${dist},${nodeModules},${scratch}`,
  `--allow-write=${scratch}`,
  '--allow-sys=hostname',
  '--allow-run',
]

interface Part {
  tests: {title: string; body: () => Promise<void>; timeoutMs: number}[]
  before: (() => Promise<void>)[]
  after: (() => Promise<void>)[]
}
let part: Part | undefined

/** `body` within `timeoutMs`, or a failure that says so: Deno.test has no timeout of its own. */
async function within(timeoutMs: number, body: () => Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([body(), timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** A describe is one Deno.test with its permissions; its tests are steps, between its hooks. */
function describe(name: string, permissions: Deno.PermissionOptionsObject, body: () => void): void {
  const collected: Part = {tests: [], before: [], after: []}
  part = collected
  body()
  part = undefined
  Deno.test({
    name,
    permissions,
    fn: async (context) => {
      for (const hook of collected.before) await hook()
      try {
        for (const {title, body: run, timeoutMs} of collected.tests)
          await context.step(title, () => within(timeoutMs, run))
      } finally {
        for (const hook of collected.after) await hook()
      }
    },
  })
}

const current = (): Part => part ?? assert.fail('a test or hook outside a describe')
const test = (title: string, body: () => Promise<void>, timeoutMs: number): void =>
  void current().tests.push({title, body, timeoutMs})
const beforeAll = (body: () => Promise<void>): void => void current().before.push(body)
const afterAll = (body: () => Promise<void>): void => void current().after.push(body)

registerTests({
  runner: {describe: (title, needs, body) => describe(title, permissionsOf(needs), body), test, beforeAll, afterAll},
  command: (script, args) => [Deno.execPath(), 'run', ...childFlags, script, ...args],
  mock: mockFetch,
})

// FileStore in a Deno process given less than the table grants (issue 28, item 8): what Deno refuses never makes it
// take a live owner's lease, nor fail. Each runs in a process of its own, started with those flags, as an app is:
// FileStore reads the host name once per process.
const folderFlags = [`--allow-read=${dist},${nodeModules},${scratch}`, `--allow-write=${scratch}`]

/** Runs `code` (JavaScript, FileStore in scope) in `deno run` with `flags`; resolves with what it printed. */
async function denoRun(flags: string[], code: string): Promise<string> {
  // Not execFileSync: this process must go on releasing its lock while the other waits for it.
  const child = spawn(Deno.execPath(), ['run', '--quiet', ...flags, '-'], {stdio: ['pipe', 'pipe', 'inherit']})
  child.stdin.end(`import {FileStore} from ${JSON.stringify(`${dist}/node.js`)}\n${code}`)
  let printed = ''
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()))
  const status = await new Promise((resolve) => child.once('exit', resolve))
  assert.equal(status, 0, `deno run ${flags.join(' ')} exited with ${String(status)}`)
  return printed
}

// Run and the environment: to start the processes (node:child_process reads the environment).
describe(
  'FileStore in a Deno process given less than docs/runtimes.md says',
  {read: [scratch], write: [scratch], sys: ['hostname'], run: true, env: true},
  () => {
    let directory = ''
    beforeAll(async () => {
      await mkdir(scratch, {recursive: true})
      directory = await mkdtemp(join(scratch, 'permissions-'))
    })
    afterAll(() => rm(directory, {recursive: true, force: true}))

    test('without --allow-run, it never takes the lease of a live owner (this process), which keeps it', async () => {
      const file = join(directory, 'no-run.json')
      const owner = await new FileStore(file).acquire('session', 10_000)
      assert.equal(owner?.token, 1)
      const code = `const lease = await new FileStore(${JSON.stringify(file)}).acquire('session', 10_000); console.log(JSON.stringify(lease?.token ?? null))`
      assert.equal((await denoRun([...folderFlags, '--allow-sys=hostname'], code)).trim(), 'null')
      assert.equal(await owner.renew(), true)
    }, 10_000)

    test('without --allow-sys=hostname, it stores, reads, lists and leases', async () => {
      const file = join(directory, 'no-sys.json')
      const code = `const store = new FileStore(${JSON.stringify(file)})
await store.set('session', {id: 's1'})
const lease = await store.acquire('owner', 10_000)
console.log(JSON.stringify({read: await new FileStore(${JSON.stringify(file)}).get('session'), listed: await store.list('sess'), token: lease?.token, again: (await new FileStore(${JSON.stringify(file)}).acquire('owner', 10_000)) ?? null}))`
      assert.deepEqual(JSON.parse(await denoRun([...folderFlags, '--allow-run'], code)), {
        read: {id: 's1'},
        listed: ['session'],
        token: 1,
        again: null,
      })
    }, 10_000)

    test('Deno.exit() right after a write leaves no lock behind (it fires the unload event, not the process exit)', async () => {
      const file = join(directory, 'exit.json')
      // The write resolves while its lock is still held (a hold outlives its write by a turn): the exit comes first.
      await denoRun(
        [...folderFlags, '--allow-sys=hostname', '--allow-run'],
        `await new FileStore(${JSON.stringify(file)}).set('written', true)\nDeno.exit(0)`,
      )
      assert.equal(await new FileStore(file).get('written'), true)
      assert.equal(existsSync(`${file}.lock`), false)
    }, 10_000)
  },
)
