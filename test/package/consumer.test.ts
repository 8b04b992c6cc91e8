/**
 * The package as an adopter meets it: built and packed (`npm pack`) from a copy of the manifest, checked by
 * publint and arethetypeswrong, installed with the SDK into one fresh consumer project (test/package/consumer),
 * then the one-line swap run in Node from ES modules and from CommonJS, type-checked with TypeScript's `node16`,
 * `bundler` and `node10` resolution and by Deno, and bundled by Vite for headless Chromium, each time against the
 * reference server of the installed `mcp-resumable-http/testing/node`.
 */
import {execFile} from 'node:child_process'
import {cp, mkdtemp, readdir, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {promisify} from 'node:util'
import type {Browser} from 'playwright-core'
import {build} from 'vite'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type * as TestingNode from '../../src/testing/node.ts'
import {hasChromium, launchChromium, requireChromium} from '../fixtures/chromium.ts'
import {serveStatic} from '../fixtures/static.ts'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = (path: string): string => join(root, 'node_modules', path)

/** Runs Node; a failure's message carries the command's output (tsc reports its errors on stdout). */
async function node(args: string[], cwd: string): Promise<{stdout: string; stderr: string}> {
  try {
    return await run(process.execPath, args, {cwd})
  } catch (error) {
    const {stdout = '', stderr = ''} = error as {stdout?: string; stderr?: string}
    throw new Error(`node ${args.join(' ')} failed:\n${stdout}${stderr}`, {cause: error})
  }
}

let staging = ''
let consumer = ''
/** A project with the tarball alone: no SDK, no msw. */
let bare = ''
let tarball = ''
let packed: {path: string; size: number}[] = []
let browser: Browser | undefined

interface PackResult {
  filename: string
  size: number
  unpackedSize: number
  files: {path: string; size: number}[]
}
let pack: PackResult

beforeAll(async () => {
  staging = await mkdtemp(join(tmpdir(), 'package-'))
  consumer = await mkdtemp(join(tmpdir(), 'consumer-'))
  bare = await mkdtemp(join(tmpdir(), 'bare-'))
  const launching = hasChromium ? launchChromium() : undefined
  // The manifest and docs as published, and a build of src/ of its own: the repo's dist/ is never touched.
  await Promise.all(
    ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].map((file) => cp(join(root, file), join(staging, file))),
  )
  await node(
    [bin('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(staging, 'dist')],
    root,
  )
  const {stdout} = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', staging], {
    cwd: staging,
  })
  pack = (JSON.parse(stdout) as PackResult[])[0]!
  packed = pack.files
  tarball = join(staging, pack.filename)
  await cp(join(root, 'test/package/consumer'), consumer, {recursive: true})
  const {devDependencies} = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>
  }
  // The optional peers this example uses (the SDK's Client, msw for the testing kit) and Node's
  // types (./testing/node is for Node).
  const peers = ['@modelcontextprotocol/sdk', 'msw', '@types/node'].map((name) => `${name}@${devDependencies[name]!}`)
  const install = (cwd: string, packages: string[]): Promise<unknown> =>
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', ...packages], {cwd})
  await writeFile(join(bare, 'package.json'), JSON.stringify({name: 'bare', private: true, type: 'module'}))
  await Promise.all([install(consumer, [tarball, ...peers]), install(bare, [tarball])])
  browser = await launching
}, 120_000)

afterAll(async () => {
  await browser?.close()
  for (const directory of [staging, consumer, bare])
    if (directory !== '') await rm(directory, {recursive: true, force: true})
})

/** The installed package's `./testing/node`, as the consumer's own code would import it. */
function installedTestingNode(): Promise<typeof TestingNode> {
  const entry = join(consumer, 'node_modules/mcp-resumable-http/dist/testing/node.js')
  return import(pathToFileURL(entry).href) as Promise<typeof TestingNode>
}

const echoed = (from: string): string => JSON.stringify([{type: 'text', text: `echo: ${JSON.stringify({from})}`}])

describe('the packed package', () => {
  it('holds the build, the README, the CHANGELOG and the LICENSE, and no source map pointing at unshipped sources', () => {
    const paths = packed.map((file) => file.path)
    expect(paths).toEqual(
      expect.arrayContaining([
        'CHANGELOG.md',
        'LICENSE',
        'README.md',
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/testing/node.js',
      ]),
    )
    expect(paths.filter((path) => path.endsWith('.map') || path.startsWith('src/'))).toEqual([])
    // Measured for the report: the tarball and what it unpacks to.
    console.info(
      `packed ${pack.filename}: ${pack.size} bytes, unpacked ${pack.unpackedSize} bytes, ${paths.length} files`,
    )
  })

  it('publint finds nothing to report, even in strict mode', async () => {
    const {stdout} = await node([bin('publint/src/cli.js'), '--strict', staging], staging)
    expect(stdout).toContain('All good!')
  }, 60_000)

  it('arethetypeswrong resolves the types of every entry point under node10, node16 (ESM) and bundler', async () => {
    // require() of this ES module is what Node 20.19 and later do (the package's engines floor): the one
    // rule ignored is the one that says CommonJS would need a dynamic import.
    const {stdout} = await node(
      [
        bin('@arethetypeswrong/cli/dist/index.js'),
        tarball,
        '--ignore-rules',
        'cjs-resolves-to-esm',
        '--format',
        'table-flipped',
      ],
      staging,
    )
    expect(stdout).not.toMatch(/❌|💀|🐛|🥴|❗️/)
  }, 60_000)
})

describe('a project that installs the tarball alone', () => {
  it('gets neither the SDK nor msw (optional peers), and loads every entry point but ./testing without them', async () => {
    expect((await readdir(join(bare, 'node_modules'))).sort()).toEqual([
      '.package-lock.json',
      '@noble',
      'eventsource-parser',
      'idb-keyval',
      'is-network-error',
      'mcp-resumable-http',
      'p-retry',
    ])
    const entries = [
      'mcp-resumable-http',
      'mcp-resumable-http/cloudflare',
      'mcp-resumable-http/idb',
      'mcp-resumable-http/journal',
      'mcp-resumable-http/node',
      'mcp-resumable-http/redis',
      'mcp-resumable-http/server',
      'mcp-resumable-http/server/redis',
      'mcp-resumable-http/testing/node',
    ]
    const script = `for (const entry of ${JSON.stringify(entries)}) await import(entry)`
    await node(['--input-type=module', '-e', script], bare)
  }, 30_000)
})

describe('a fresh consumer project with the tarball, the SDK and msw installed', () => {
  it('Node runs the one-line swap as an ES module compiled by tsc with node16 resolution', async () => {
    await node([bin('typescript/bin/tsc'), '-p', 'tsconfig.node16.json'], consumer)
    const {stdout, stderr} = await node(['build/swap.js'], consumer)
    expect(stdout.trim()).toBe(echoed('esm'))
    expect(stderr).toBe('')
  }, 60_000)

  it('the testing kit serves the swap through msw, the peer at the version of devDependencies (3)', async () => {
    const installed = JSON.parse(await readFile(join(consumer, 'node_modules/msw/package.json'), 'utf8')) as {
      version: string
    }
    expect(installed.version).toMatch(/^3\./)
    const {stdout, stderr} = await node(['msw.mjs'], consumer)
    expect(stdout.trim().split('\n')).toEqual([echoed('msw'), JSON.stringify({echo: 1})])
    expect(stderr).toBe('')
  }, 30_000)

  it('Node runs the one-line swap from CommonJS with require()', async () => {
    const {stdout, stderr} = await node(['swap.cjs'], consumer)
    expect(stdout.trim()).toBe(echoed('cjs'))
    // Not even an ExperimentalWarning about require() of an ES module.
    expect(stderr).toBe('')
  }, 30_000)

  it('TypeScript type-checks the example with bundler resolution, a CommonJS module with nodenext, and every entry point with node10', async () => {
    // They skip checking declaration files inside: the node16 compile above checks them all, the package's too.
    await Promise.all(
      ['tsconfig.bundler.json', 'tsconfig.commonjs.json', 'tsconfig.node10.json'].map((config) =>
        node([bin('typescript/bin/tsc'), '-p', config], consumer),
      ),
    )
  }, 60_000)

  it('Deno type-checks a module that uses the types of the entry points it serves against the installed package (deno check)', async () => {
    // The installed copy, not dist/ by the package's own name: Deno reads that as local modules, whose .js it does
    // not pair with their .d.ts (docs/runtimes.md).
    try {
      await run(bin('.bin/deno'), ['check', '--quiet', 'deno-types.ts'], {
        cwd: consumer,
        env: {...process.env, NO_COLOR: '1'},
      })
    } catch (error) {
      const {stdout = '', stderr = ''} = error as {stdout?: string; stderr?: string}
      throw new Error(`deno check failed:\n${stdout}${stderr}`, {cause: error})
    }
  }, 60_000)

  it('Vite bundles the swap for the browser, and headless Chromium runs it against the reference server', async (context) => {
    requireChromium(context)
    const outDir = join(consumer, 'web-build')
    await build({
      root: join(consumer, 'web'),
      configFile: false,
      logLevel: 'error',
      build: {outDir, emptyOutDir: true, reportCompressedSize: false, chunkSizeWarningLimit: 2000},
    })
    const {createReferenceServer, listen} = await installedTestingNode()
    const server = createReferenceServer()
    // One origin: /mcp is the reference server, every other path the built page.
    const listening = await listen({
      handle: (request) =>
        new URL(request.url).pathname === '/mcp' ? server.handle(request) : serveStatic(outDir, new URL(request.url)),
    })
    try {
      const page = await browser!.newPage()
      await page.goto(new URL('/', listening.url).href)
      await page.waitForFunction(
        () => document.title.startsWith('[') || document.title.startsWith('failed'),
        undefined,
        {timeout: 15_000},
      )
      expect(await page.title()).toBe(echoed('browser'))
      expect(server.executions).toEqual({echo: 1})
    } finally {
      await listening.close()
    }
  }, 60_000)
})
