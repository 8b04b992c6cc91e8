// `npm run size`: what a browser app pays for this transport, bundled as a bundler ships an app (esbuild: minified,
// ESM, code splitting on, gzip level 9), against the SDK's StreamableHTTPClientTransport bundled the same way.
//
//   eager   the entry chunk and every chunk it imports statically: what loads before the app runs
//   total   every chunk, the lazy ones (imported on first use) included
//
// The app: `new ResumableHTTPClientTransport(url, {store: new IdbStore()})`, default options otherwise, from the
// sources (what `dist/` holds, before tsc strips the types). Fails when the eager bundle exceeds its budget, or
// when a module that default options never use is in it (README, Benchmark), or when any chunk of it holds
// OpenTelemetry code (./otel and @opentelemetry/api belong to apps that import ./otel).
//
//   node scripts/size.mjs [--modules]      --modules: minified bytes of the eager bundle per source module
import {gzipSync} from 'node:zlib'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {build} from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/**
 * The most the eager bundle may weigh, gzip bytes: what default options run today and a little room. The target
 * is 20 kB, missed: the README's Benchmark says why.
 */
export const eagerBudget = 30_000

/** What the apps measured do: import, construct with defaults, start. */
export const apps = {
  ours: `
    import {ResumableHTTPClientTransport} from './src/index.ts'
    import {IdbStore} from './src/idb.ts'
    const transport = new ResumableHTTPClientTransport(new URL('https://example.com/mcp'), {store: new IdbStore()})
    await transport.start()
    globalThis.transport = transport
  `,
  otel: `
    import {InstrumentedHTTPClientTransport} from './src/otel.ts'
    import {IdbStore} from './src/idb.ts'
    const transport = new InstrumentedHTTPClientTransport(new URL('https://example.com/mcp'), {store: new IdbStore()})
    await transport.start()
    globalThis.transport = transport
  `,
  sdk: `
    import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
    const transport = new StreamableHTTPClientTransport(new URL('https://example.com/mcp'))
    await transport.start()
    globalThis.transport = transport
  `,
}

/**
 * Modules a transport with default options never runs, none of which may be in the eager bundle: the call journal
 * (`callJournal: false`) with its task polling and call records, and the SHA-256 of `digestArguments` and of a
 * query in a page without Web Crypto (@noble/hashes).
 */
export const lazyModules = [
  'src/calls/call-journal.ts',
  'src/calls/tasks.ts',
  'src/calls/call.ts',
  'src/wire/sha256.ts',
  'node_modules/@noble/hashes/',
]

/** What `mcp-resumable-http/otel` brings, none of which may be in any chunk of an app that does not import it. */
export const otelModules = ['src/otel.ts', 'src/otel/', 'node_modules/@opentelemetry/']

/** Bundles `app` and measures it: gzip of the eager chunks and of all, and the eager bytes of each source module. */
export async function measure(app) {
  const result = await build({
    stdin: {contents: app, resolveDir: root, sourcefile: 'app.mjs', loader: 'ts'},
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: join(root, '.size'),
    metafile: true,
    logLevel: 'silent',
  })
  const texts = new Map(result.outputFiles.map((file) => [relative(root, file.path), file.contents]))
  const outputs = result.metafile.outputs
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint !== undefined)
  // The entry and what it imports statically, transitively: a dynamic import() loads later, on first use.
  const eager = new Set()
  const visit = (path) => {
    if (eager.has(path)) return
    eager.add(path)
    for (const imported of outputs[path].imports)
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path)
  }
  visit(entry)
  const gzip = (paths) => paths.reduce((sum, path) => sum + gzipSync(texts.get(path), {level: 9}).length, 0)
  const modules = new Map()
  for (const path of eager) {
    for (const [input, {bytesInOutput}] of Object.entries(outputs[path].inputs))
      modules.set(input, (modules.get(input) ?? 0) + bytesInOutput)
  }
  const chunks = Object.keys(outputs).filter((path) => path.endsWith('.js'))
  const allModules = new Set(chunks.flatMap((path) => Object.keys(outputs[path].inputs)))
  return {
    allModules,
    eagerGzip: gzip([...eager]),
    totalGzip: gzip(chunks),
    eagerMinified: [...eager].reduce((sum, path) => sum + texts.get(path).length, 0),
    chunks: chunks.length,
    modules: new Map([...modules].sort((a, b) => b[1] - a[1])),
  }
}

/** The modules of `otelModules` among `modules`. */
export function otelModulesIn(modules) {
  return [...modules].filter((input) => otelModules.some((otel) => input.startsWith(otel)))
}

/** The modules of `lazyModules` found in an eager bundle's `modules`. */
export function eagerLazyModules(modules) {
  return [...modules.keys()].filter((input) => lazyModules.some((lazy) => input.startsWith(lazy)))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`
  const [ours, otel, sdk] = [await measure(apps.ours), await measure(apps.otel), await measure(apps.sdk)]
  console.log(
    `ResumableHTTPClientTransport + IdbStore, default options: ${kB(ours.eagerGzip)} eager, ${kB(ours.totalGzip)} in all ${ours.chunks} chunks (gzip -9; budget ${kB(eagerBudget)} eager)`,
  )
  console.log(
    `InstrumentedHTTPClientTransport (./otel) + IdbStore:      ${kB(otel.eagerGzip)} eager, ${kB(otel.totalGzip)} in all ${otel.chunks} chunks (@opentelemetry/api included)`,
  )
  console.log(
    `SDK StreamableHTTPClientTransport:                       ${kB(sdk.eagerGzip)} eager, ${kB(sdk.totalGzip)} in all ${sdk.chunks} chunks`,
  )
  if (process.argv.includes('--modules')) {
    console.log(`\neager bundle, minified bytes per module (${ours.eagerMinified} in all):`)
    for (const [input, bytes] of ours.modules) if (bytes > 0) console.log(`  ${String(bytes).padStart(6)}  ${input}`)
  }
  const misplaced = eagerLazyModules(ours.modules)
  if (misplaced.length > 0) {
    console.error(`FAIL: the eager bundle holds what default options never use: ${misplaced.join(', ')}`)
    process.exitCode = 1
  }
  const otelInDefault = otelModulesIn(ours.allModules)
  if (otelInDefault.length > 0) {
    console.error(`FAIL: the default bundle holds OpenTelemetry code: ${otelInDefault.join(', ')}`)
    process.exitCode = 1
  }
  if (ours.eagerGzip > eagerBudget) {
    console.error(`FAIL: the eager bundle is ${kB(ours.eagerGzip)}, over the ${kB(eagerBudget)} budget`)
    process.exitCode = 1
  }
}
