/**
 * Every code block of the README and of docs/, as written. Each is marked with its language. The TypeScript ones
 * type-check together under the project's strict settings, with `mcp-resumable-http` imports pointed at the sources
 * the package is built from (the entry points of package.json's `exports`), then run:
 *
 * - a block that imports `vitest` is a complete test file: it is imported inside a `describe` of its own, so that its
 *   tests and hooks run here;
 * - any other is a program, run in a test. The test provides what the program assumes around it: a reference server
 *   (msw) answering every `…/mcp` URL unless the block serves its own, a page's `location` and IndexedDB
 *   (fake-indexeddb) for browser code, a scratch working directory for files, and what the block's `scene=` names
 *   (below), which the test also checks the outcome of.
 *
 * A block marked `ts excerpt=PATH` is code that runs elsewhere (an extension's service worker): each of its lines
 * must be a line of that file, in order (`// …` skips lines). Shell blocks may only run npm scripts that exist.
 * Links must lead somewhere: a relative link (docs/ only) or one to this repository on GitHub names a file that
 * exists and, in a Markdown file, a heading that exists; the README links by absolute URL only, since the npm page
 * resolves no relative one.
 */
import 'fake-indexeddb/auto'
import {execFile} from 'node:child_process'
import {existsSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {dirname, join, relative} from 'node:path'
import {promisify} from 'node:util'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {http, HttpResponse} from 'msw'
import {setupServer} from 'msw/node'
import {afterAll, describe, expect, it, vi, type TestContext} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {FileStore} from '../../src/node.ts'
import {createMockMcpServer, type ReferenceServer} from '../../src/testing/index.ts'
import {anchorsOf, blocksOf, documents, linksOf, read, root, type Block} from '../fixtures/markdown.ts'
import {requireRedis, startRedis} from '../fixtures/redis-server.ts'

const packageJson = JSON.parse(read('package.json')) as {
  name: string
  exports: Record<string, string | {default: string}>
  scripts: Record<string, string>
}
const blocks = documents.flatMap(blocksOf)
const typescript = blocks.filter((block) => block.language === 'ts' && block.info['excerpt'] === undefined)
const blocksDir = join(root, '.test-build/docs')
const fileOf = (block: Block): string => join(blocksDir, `${block.document.replace(/\W+/g, '-')}-line-${block.line}.ts`)
const isTestFile = (block: Block): boolean => /from 'vitest'/.test(block.code)

/** `mcp-resumable-http` and its subpaths, as `exports` maps them, to the sources of those files (from `blocksDir`). */
const entryPoints = new Map(
  Object.entries(packageJson.exports)
    .filter((entry): entry is [string, {default: string}] => typeof entry[1] === 'object')
    .map(([subpath, target]) => [
      subpath.replace(/^\./, packageJson.name),
      relative(blocksDir, join(root, target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'))),
    ]),
)

function pointAtSources(block: Block): string {
  return block.code.replace(/from '(mcp-resumable-http[^']*)'/g, (_whole, specifier: string) => {
    const source = entryPoints.get(specifier)
    if (source === undefined)
      throw new Error(`${block.document}:${block.line} imports ${specifier}, which package.json does not export`)
    return `from '${source}'`
  })
}

// Written while the tests are collected: a test file's block is imported then.
rmSync(blocksDir, {recursive: true, force: true})
mkdirSync(blocksDir, {recursive: true})
for (const block of typescript) writeFileSync(fileOf(block), pointAtSources(block))
// Snippets may leave a name unused (a destructured `close`, say); everything else is the project's strictness.
writeFileSync(
  join(blocksDir, 'tsconfig.json'),
  JSON.stringify({extends: '../../tsconfig.test.json', compilerOptions: {noUnusedLocals: false}, include: ['*.ts']}),
)

afterAll(() => {
  rmSync(blocksDir, {recursive: true, force: true})
})

describe('the code blocks of the README and docs/', () => {
  it('are each marked with their language: ts (compiled and run), sh or text', () => {
    expect(
      blocks
        .filter((block) => !['ts', 'sh', 'text'].includes(block.language))
        .map((block) => `${block.document}:${block.line} "${block.language}"`),
    ).toEqual([])
    expect(typescript.length).toBeGreaterThanOrEqual(20)
    expect(typescript.filter(isTestFile).length).toBeGreaterThanOrEqual(7)
  })

  it('import the package only by the names package.json exports', () => {
    const specifiers = typescript.flatMap((block) =>
      [...block.code.matchAll(/from '(mcp-resumable-http[^']*)'/g)].map(([, specifier]) => specifier!),
    )
    expect(specifiers.length).toBeGreaterThan(20)
    expect(specifiers.filter((specifier) => !entryPoints.has(specifier))).toEqual([])
  })

  it('quote in each excerpt lines of the file it names, in their order', () => {
    const excerpts = blocks.filter((block) => block.info['excerpt'] !== undefined)
    expect(excerpts.length).toBeGreaterThanOrEqual(2)
    const strays = excerpts.flatMap((block) => {
      const source = read(block.info['excerpt']!).split('\n')
      let next = 0
      return block.code.split('\n').flatMap((line) => {
        if (line.trim() === '' || line.trim() === '// …') return []
        const found = source.indexOf(line, next)
        if (found === -1)
          return [
            `${block.document}:${block.line}: ${JSON.stringify(line)} is not in ${block.info['excerpt']!} after its line ${next}`,
          ]
        next = found + 1
        return []
      })
    })
    expect(strays).toEqual([])
  })

  it('run only npm scripts that exist in their shell blocks', () => {
    const scripts = Object.keys(packageJson.scripts)
    const used = blocks
      .filter((block) => block.language === 'sh')
      .flatMap((block) => [...block.code.matchAll(/npm (?:run )?([\w:-]+)/g)].map((match) => match[1]!))
    expect(used.length).toBeGreaterThan(0)
    expect(used.filter((name) => !['ci', 'install'].includes(name) && !scripts.includes(name))).toEqual([])
  })

  it('type-check together under the project strict settings', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc')
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', join(blocksDir, 'tsconfig.json')]).catch(
      (error: unknown) => error as {stdout: string},
    )
    expect('stdout' in result ? result.stdout : '').toBe('')
  }, 60_000)
})

describe('the links of the README and docs/', () => {
  const repository = 'https://github.com/mcp-resumable-http/mcp-resumable-http'
  /** What is wrong with `target`, linked from `document`; undefined when it leads somewhere. */
  function brokenLink(document: string, target: string): string | undefined {
    const [path, anchor] = target.split('#') as [string, string | undefined]
    let file: string | undefined
    if (path === '') file = document
    else if (path === repository) file = 'README.md'
    else if (path.startsWith(`${repository}/blob/main/`) || path.startsWith(`${repository}/tree/main/`))
      file = path.slice(`${repository}/blob/main/`.length)
    else if (path.startsWith('https://raw.githubusercontent.com/mcp-resumable-http/mcp-resumable-http/main/'))
      file = path.split('/main/')[1]
    else if (/^https?:/.test(path)) return undefined
    else if (document === 'README.md') return 'a relative link, which the npm page cannot resolve'
    else file = relative(root, join(root, dirname(document), path))
    if (!existsSync(join(root, file!))) return `${file!} does not exist`
    if (anchor !== undefined && file!.endsWith('.md') && !anchorsOf(read(file!)).has(anchor))
      return `${file!} has no heading #${anchor}`
    return undefined
  }

  it('are checked: the README and the index of docs/ link every page', () => {
    const pages = documents.filter((document) => document.startsWith('docs/') && document !== 'docs/README.md')
    const fromReadme = linksOf(read('README.md'))
    const fromIndex = linksOf(read('docs/README.md'))
    expect(pages.filter((page) => !fromIndex.includes(page.slice('docs/'.length)))).toEqual([])
    expect(
      fromReadme.filter((target) => target.startsWith(`${repository}/blob/main/docs/`)).length,
    ).toBeGreaterThanOrEqual(10)
  })

  it.each(documents)('%s: every link leads to a file, and a heading, that exist', (document) => {
    const links = linksOf(read(document))
    expect(
      links.flatMap((target) => {
        const broken = brokenLink(document, target)
        return broken === undefined ? [] : [`${target}: ${broken}`]
      }),
    ).toEqual([])
  })
})

/** The URL a program connects to: the first `new URL('…')` it writes. */
const urlOf = (block: Block): string => /new URL\('([^']+)'/.exec(block.code)?.[1] ?? 'https://mcp.example/mcp'

/** What a block's `scene=` sets up before it runs, and checks after. */
interface Scene {
  before(server: ReferenceServer, block: Block, context: TestContext): Promise<void> | void
  after(server: ReferenceServer, logged: unknown[][]): void
}

const scenes: Record<string, Scene> = {
  // A first process on the same file and server died in the middle of a `slow` call, its call journaled: the block
  // is the next process, and tells the earlier call's result.
  'died-mid-call': {
    async before(_server, block) {
      const transport = new ResumableHTTPClientTransport(new URL(urlOf(block)), {
        store: new FileStore('.mcp-session.json'),
        callJournal: true,
      })
      const client = new Client({name: 'first', version: '1.0.0'})
      await client.connect(transport)
      // Its second progress, however long the store's flushes take on a loaded machine: the test's timeout bounds it.
      let secondProgress = (): void => {}
      const reached = new Promise<void>((resolve) => (secondProgress = resolve))
      const call = client
        .callTool({name: 'slow', arguments: {steps: 6, delayMs: 30}}, undefined, {
          onprogress: ({progress}) => progress === 2 && secondProgress(),
        })
        .catch(() => 'the process died')
      await reached
      await client.close()
      expect(await call).toBe('the process died')
    },
    after(server, logged) {
      expect(logged.map((line) => line.join(' ')).filter((line) => line.includes('done after 6 steps'))).toHaveLength(1)
      expect(server.executions).toEqual({slow: 1})
    },
  },
  // The block's call meets a 404: its session expired, and the catch branch initializes a new one.
  'session-expires': {
    before(server) {
      server.faults.failNext({method: 'POST', status: 404, rpcMethod: 'tools/call'})
    },
    after(server) {
      expect(server.requests('POST', 'initialize')).toHaveLength(2)
      expect(server.executions).toEqual({increment: 1})
    },
  },
  // A Redis server of its own: REDIS_URL names it.
  redis: {
    async before(_server, _block, context) {
      requireRedis(context)
      const redis = await startRedis()
      context.onTestFinished(() => redis.stop())
      vi.stubEnv('REDIS_URL', redis.url)
    },
    after() {},
  },
  // The MCP server wants a bearer token that only the authorization server's token endpoint gives.
  bearer: {
    before(_server, block) {
      network.use(
        http.post('https://auth.example/token', () =>
          HttpResponse.json({access_token: 'token-1', token_type: 'Bearer'}),
        ),
        http.all(urlOf(block), ({request}) => {
          if (request.headers.get('authorization') === 'Bearer token-1') return undefined
          unauthorized++
          return new HttpResponse(null, {status: 401, headers: {'www-authenticate': 'Bearer'}})
        }),
      )
    },
    after(server) {
      expect(unauthorized).toBe(1)
      expect(server.requests('POST', 'tools/list')).toHaveLength(1)
    },
  },
}

let network = setupServer()
let unauthorized = 0

for (const document of documents) {
  const own = typescript.filter((block) => block.document === document)
  if (own.length === 0) continue
  describe(document, () => {
    for (const block of own.filter((candidate) => !isTestFile(candidate))) {
      it(`runs the program at line ${block.line} (${block.heading}) as written`, async (context) => {
        const scene = block.info['scene'] === undefined ? undefined : scenes[block.info['scene']]
        if (block.info['scene'] !== undefined) expect(scene, `scene=${block.info['scene']}`).toBeDefined()
        // A block that starts msw itself, or a server of its own (`./server`), is served by that.
        const servesItself = /from '(?:msw\/|mcp-resumable-http\/server)/.test(block.code)
        const {server, handlers} = createMockMcpServer()
        network = setupServer(...handlers)
        unauthorized = 0
        // msw 3 refuses to close a network never started.
        if (!servesItself) network.listen({onUnhandledFrame: 'bypass'})
        vi.stubGlobal('location', new URL('https://app.example/'))
        const logged: unknown[][] = []
        vi.spyOn(console, 'log').mockImplementation((...line: unknown[]) => void logged.push(line))
        // A program may leave its transport running, as a page keeps its client; here the program ends, as its page
        // or process would. Left running, its standalone stream would attach to a later block's server, which numbers
        // its sessions from session-1 too, and answer that block's server requests.
        const started = vi.spyOn(ResumableHTTPClientTransport.prototype, 'start')
        const closed = vi.spyOn(ResumableHTTPClientTransport.prototype, 'close')
        const cwd = process.cwd()
        const scratch = await mkdtemp(join(tmpdir(), 'docs-block-'))
        process.chdir(scratch)
        try {
          await scene?.before(server, block, context)
          await import(fileOf(block))
          scene?.after(server, logged)
          if (!servesItself && /\.connect\(/.test(block.code))
            expect(server.requests('POST', 'initialize').length).toBeGreaterThanOrEqual(1)
        } finally {
          const running = (started.mock.contexts as ResumableHTTPClientTransport[]).filter(
            (transport) => !closed.mock.contexts.includes(transport),
          )
          await Promise.all(running.map((transport) => transport.close()))
          process.chdir(cwd)
          vi.unstubAllGlobals()
          vi.unstubAllEnvs()
          if (!servesItself) network.close()
          await rm(scratch, {recursive: true, force: true})
        }
      })
    }
    for (const block of own.filter(isTestFile)) {
      describe(`the test file at line ${block.line} (${block.heading})`, async () => {
        await import(fileOf(block))
      })
    }
  })
}
