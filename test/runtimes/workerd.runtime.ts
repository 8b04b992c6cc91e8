/**
 * The workerd suite (npm run test:workerd): workerd run directly, with a capnp config written here (wrangler is not
 * used), on a Worker bundled by esbuild from test/runtimes/workerd/worker.ts and the package as built (dist/, by its
 * name): no `nodejs_compat`, and no `node:` import in the bundle. Its named exports' `test()` handlers are the tests
 * (`workerd test`). The reference servers run here, in Node, on 127.0.0.1: workerd reaches them through a network
 * service that allows local addresses (by default a Worker may reach public addresses only).
 *
 *   node test/runtimes/workerd.runtime.ts     after `npm run build`
 */
import {spawn} from 'node:child_process'
import {mkdir, rm, writeFile} from 'node:fs/promises'
import {relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {build} from 'esbuild'
import {createReferenceServer, listen, type ReferenceServer} from 'mcp-resumable-http/testing/node'

const repository = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url))
const out = repository('.test-build/workerd')
/** The compatibility date of the installed workerd (`workerd --version`): the newest it knows. */
const compatibilityDate = '2026-11-17'

// Each run starts with no stored object.
await rm(`${out}/storage`, {recursive: true, force: true})
await mkdir(`${out}/storage`, {recursive: true})
const bundle = await build({
  entryPoints: [repository('test/runtimes/workerd/worker.ts')],
  outfile: `${out}/worker.js`,
  bundle: true,
  format: 'esm',
  // As wrangler bundles for Workers: browser builds of the dependencies, no Node built-in to fall back on.
  platform: 'browser',
  conditions: ['workerd', 'worker', 'browser'],
  target: 'es2022',
  metafile: true,
  logLevel: 'warning',
})
const inputs = Object.keys(bundle.metafile.inputs)
const fromTheBuild = inputs.filter((input) => input.startsWith('dist/'))
if (
  !fromTheBuild.includes('dist/index.js') ||
  !fromTheBuild.includes('dist/cloudflare.js') ||
  inputs.some((input) => input.startsWith('src/'))
) {
  throw new Error(
    `the bundle must hold the package as built (dist/), never its sources: ${inputs.filter((input) => !input.startsWith('node_modules/')).join(', ')}`,
  )
}

/** One reference server per test, at `/<name>/mcp`, its control at `/<name>/control`: `GET` its state, `POST` a fault. */
const servers = new Map<string, ReferenceServer>()
const listening = await listen({
  handle: async (request) => {
    const [, name = '', route] = new URL(request.url).pathname.split('/')
    let server = servers.get(name)
    if (server === undefined) servers.set(name, (server = createReferenceServer()))
    if (route === 'mcp') return server.handle(request)
    if (route !== 'control') return new Response('Not found', {status: 404})
    if (request.method === 'POST') {
      const {cutNext} = (await request.json()) as {cutNext?: Parameters<ReferenceServer['faults']['cutNext']>[0]}
      if (cutNext !== undefined) server.faults.cutNext(cutNext)
      return new Response(null, {status: 204})
    }
    return Response.json({
      executions: server.executions,
      initialize: server.requests('POST', 'initialize').length,
      toolCalls: server.requests('POST', 'tools/call').length,
    })
  },
})

const config = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .suite),
    # Loopback addresses only: what the reference servers need, and nothing else.
    (name = "loopback", network = (allow = ["local"])),
    # On disk (SQLite, as Cloudflare stores objects): inMemory storage is dropped with an instance that aborts.
    (name = "storage", disk = (path = "${out}/storage", writable = true)),
  ],
);

const suite :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${compatibilityDate}",
  globalOutbound = "loopback",
  bindings = [
    (name = "MCP_SERVER_URL", text = "${new URL('/agent/mcp', listening.url).href}"),
    (name = "MCP_AGENT", durableObjectNamespace = "AbortableAgent"),
    (name = "STORE", durableObjectNamespace = "StoreChecks"),
  ],
  durableObjectNamespaces = [
    (className = "AbortableAgent", uniqueKey = "mcp-resumable-http-suite-agent"),
    (className = "StoreChecks", uniqueKey = "mcp-resumable-http-suite-store"),
  ],
  durableObjectStorage = (localDisk = "storage"),
);
`
await writeFile(`${out}/config.capnp`, config)

const started = performance.now()
// The platform's binary itself: the package's launcher adds a Node stack trace to every failure.
const workerd = spawn(
  repository('node_modules/@cloudflare/workerd-linux-64/bin/workerd'),
  ['test', `${out}/config.capnp`],
  {stdio: 'inherit'},
)
const code = await new Promise<number>((resolve) => workerd.once('exit', (exitCode) => resolve(exitCode ?? 1)))
await listening.close()
console.info(
  `workerd test ${relative(repository('.'), out)}/config.capnp: exit ${code}, ${Math.round(performance.now() - started)} ms`,
)
process.exit(code)
