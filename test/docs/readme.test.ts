/**
 * Every code block of the README, as written: each is marked with its language; the TypeScript ones type-check
 * together and then run one by one, with `mcp-resumable-http` imports pointed at the sources the package is built
 * from (the same entry points as package.json's `exports`). The test provides what a block assumes around it: a
 * reference server (msw) answering every `…/mcp` URL unless the block serves its own (it imports msw, or is a
 * server: it imports `mcp-resumable-http/server`), a page's `location` and
 * IndexedDB (fake-indexeddb) for browser code, a scratch working directory for files, and vitest's `expect` for
 * test code. A block marked `ts excerpt=PATH` is code that runs elsewhere (an extension's service worker): it is not
 * run, but each of its lines must be a line of that file of the repository, in order (`// …` skips lines). Shell
 * blocks may only run npm scripts that exist; links and images must work on the npm registry's page, which
 * resolves no relative URL.
 */
import 'fake-indexeddb/auto'
import {execFile} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'
import {setupServer} from 'msw/node'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {createMockMcpServer, type ReferenceServer} from '../../src/testing/index.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const blocksDir = join(root, '.test-build/readme')
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string
  exports: Record<string, string | {default: string}>
  scripts: Record<string, string>
}

interface Block {
  language: string
  /** The file of the repository the block quotes (`excerpt=PATH` after the language), if it is an excerpt. */
  excerptOf: string | undefined
  code: string
  /** The line of the opening fence, 1-based. */
  line: number
}

const blocks: Block[] = [...readme.matchAll(/^```(\S*)(?: excerpt=(\S+))?\n([\s\S]*?)^```$/gm)].map((match) => ({
  language: match[1]!,
  excerptOf: match[2],
  code: match[3]!,
  line: readme.slice(0, match.index).split('\n').length,
}))
const typescript = blocks.filter((block) => block.language === 'ts' && block.excerptOf === undefined)

/** `mcp-resumable-http` and its subpaths, as `exports` maps them, to the sources of those files (relative to `blocksDir`). */
const entryPoints = new Map(
  Object.entries(packageJson.exports)
    .filter((entry): entry is [string, {default: string}] => typeof entry[1] === 'object')
    .map(([subpath, target]) => [subpath.replace(/^\./, packageJson.name), target.default.replace(/^\.\/dist\//, '../../src/').replace(/\.js$/, '.ts')]),
)

function pointAtSources(code: string): string {
  return code.replace(/from '(mcp-resumable-http[^']*)'/g, (_whole, specifier: string) => {
    const source = entryPoints.get(specifier)
    if (source === undefined) throw new Error(`README imports ${specifier}, which package.json does not export`)
    return `from '${source}'`
  })
}

const fileOf = (block: Block): string => join(blocksDir, `line-${block.line}.ts`)

beforeAll(async () => {
  await rm(blocksDir, {recursive: true, force: true})
  await mkdir(blocksDir, {recursive: true})
  await Promise.all(typescript.map((block) => writeFile(fileOf(block), pointAtSources(block.code))))
  // Snippets may leave a name unused (a destructured `close`, say); everything else is the project's strictness.
  const tsconfig = {
    extends: '../../tsconfig.test.json',
    compilerOptions: {types: ['node', 'vitest/globals'], noUnusedLocals: false},
    include: ['*.ts'],
  }
  await writeFile(join(blocksDir, 'tsconfig.json'), JSON.stringify(tsconfig))
})

afterAll(async () => {
  await rm(blocksDir, {recursive: true, force: true})
})

describe('README', () => {
  it('marks every code block with its language: ts (compiled and run), sh or text', () => {
    expect(blocks.filter((block) => !['ts', 'sh', 'text'].includes(block.language)).map((block) => `line ${block.line}: "${block.language}"`)).toEqual([])
    expect(typescript.length).toBeGreaterThanOrEqual(5)
  })

  it('quotes in each excerpt block lines of the file it names, in their order', () => {
    const excerpts = blocks.filter((block) => block.excerptOf !== undefined)
    expect(excerpts.length).toBeGreaterThanOrEqual(1)
    const strays = excerpts.flatMap((block) => {
      const source = readFileSync(join(root, block.excerptOf!), 'utf8').split('\n')
      let next = 0
      return block.code.split('\n').flatMap((line) => {
        if (line.trim() === '' || line.trim() === '// …') return []
        const found = source.indexOf(line, next)
        if (found === -1) return [`line ${block.line}: ${JSON.stringify(line)} is not in ${block.excerptOf!} after its line ${next}`]
        next = found + 1
        return []
      })
    })
    expect(strays).toEqual([])
  })

  it('keeps the Quick start to two commands on a fresh clone: the demo, and the tests', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'))
    const commands = /```sh\n([\s\S]*?)```/.exec(quickStart)![1]!.trim().split('\n').map((line) => line.replace(/\s+#.*$/, ''))
    expect(commands).toEqual(['npm ci && npm run demo', 'npm test'])
  })

  it('runs only npm scripts that exist in its shell blocks', () => {
    const scripts = Object.keys(packageJson.scripts)
    const used = blocks.filter((block) => block.language === 'sh').flatMap((block) => [...block.code.matchAll(/npm (?:run )?([\w:-]+)/g)].map((match) => match[1]!))
    const builtIn = ['ci', 'install']
    expect(used.filter((name) => !builtIn.includes(name) && !scripts.includes(name))).toEqual([])
  })

  it('links and shows images by absolute URL only, so that they work on the npm registry page', () => {
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!)
    expect(targets.length).toBeGreaterThan(0)
    expect(targets.filter((target) => !/^https:\/\//.test(target) && !target.startsWith('#'))).toEqual([])
  })

  it('has a row in its Options table for every option the transport accepts, or in the migration table for an SDK name', () => {
    let message = ''
    try {
      new ResumableHTTPClientTransport(new URL('https://mcp.example/mcp'), {'not an option': true} as never)
    } catch (error) {
      message = (error as Error).message
    }
    const accepted = /the options are (.*) \(/.exec(message)![1]!.split(', ')
    const options = firstColumn('## Options')
    const migration = firstColumn('## Migrating from')
    const missing = accepted.filter((key) => !options.some((cell) => new RegExp(`^\`${key}[\`.]`).test(cell)) && !migration.includes(`\`opts.${key}\``))
    expect(accepted).toContain('store')
    expect(missing).toEqual([])
  })

  it("gives in its Options table each option's default as the TSDoc's @defaultValue says it", () => {
    const sources = readdirSync(join(root, 'src'), {recursive: true, encoding: 'utf8'}).filter((file) => file.endsWith('.ts'))
    const interfaceText = (name: string): string => {
      for (const file of sources) {
        const text = readFileSync(join(root, 'src', file), 'utf8')
        const start = text.search(new RegExp(`export interface ${name} (extends \\w+ )?\\{`))
        if (start !== -1) return text.slice(start, text.indexOf('\n}', start))
      }
      throw new Error(`no interface ${name} in src/`)
    }
    // Each TSDoc comment with the property it documents, then the comment's @defaultValue line.
    const defaults = (name: string, prefix: string): [string, string][] =>
      [...interfaceText(name).matchAll(/\/\*\*([\s\S]*?)\*\/\s*(\w+)\?:/g)].flatMap(([, doc, property]) => {
        const value = /@defaultValue (.*)$/m.exec(doc!)?.[1]
        return value === undefined ? [] : [[`${prefix}${property!}`, value]]
      })
    const documented = new Map([...defaults('ResumableHTTPClientTransportOptions', ''), ...defaults('OwnershipOptions', ''), ...defaults('ReconnectOptions', 'reconnect.'), ...defaults('LimitOptions', 'limits.')])
    const plain = (text: string): string => text.replaceAll('`', '').trim()
    const section = readme.slice(readme.indexOf('## Options'))
    const rows = /^\|.*\|\n\|[-|]+\|\n((?:\|.*\|\n)+)/m.exec(section)![1]!.trim().split('\n').map((row) => row.split('|').slice(1, 3).map(plain))
    expect(documented.size).toBeGreaterThanOrEqual(12)
    const disagreeing = rows.filter(([option, shown]) => {
      const tsdoc = plain(documented.get(option!) ?? '(none documented)')
      return !tsdoc.startsWith(shown!) && !shown!.startsWith(tsdoc)
    })
    expect(disagreeing).toEqual([])
  })

  it('names every option and public member of the SDK transport in its migration table', () => {
    const declarations = readFileSync(join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts'), 'utf8')
    const between = (start: string, end: RegExp): string => {
      const from = declarations.indexOf(start)
      return declarations.slice(from, from + end.exec(declarations.slice(from))!.index)
    }
    const options = [...between('export type StreamableHTTPClientTransportOptions = {', /^\};/m).matchAll(/^ {4}(\w+)\?:/gm)].map((match) => `opts.${match[1]!}`)
    const members = [...between('export declare class StreamableHTTPClientTransport ', /^\}/m).matchAll(/^ {4}(?!private )(?:get |set )?(\w+)\??[(:]/gm)]
      .map((match) => match[1]!)
      .filter((name) => name !== 'constructor')
    expect(options).toContain('opts.reconnectionOptions')
    expect(members).toContain('resumeStream')
    const migration = firstColumn('## Migrating from').join(' ')
    expect([...options, ...members].filter((name) => !new RegExp(`\`${name.replace('.', '\\.')}[\`(]`).test(migration))).toEqual([])
  })

  it('has TypeScript blocks that all type-check under the project strict settings', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc')
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', join(blocksDir, 'tsconfig.json')]).catch((error: unknown) => error as {stdout: string})
    expect('stdout' in result ? result.stdout : '').toBe('')
  }, 60_000)

  describe.each(typescript.map((block) => [block.line, block] as const))('the TypeScript block at line %i', (_line, block) => {
    it('runs as written', async () => {
      const servesItself = /from '(?:msw\/|mcp-resumable-http\/server)/.test(block.code)
      const {server, handlers} = createMockMcpServer()
      // A block that starts msw itself is served by its own; msw 3 refuses to close a network never started.
      const network = servesItself ? undefined : setupServer(...handlers)
      network?.listen({onUnhandledFrame: 'bypass'})
      // The session-expiry example: its call meets a 404, and the catch branch initializes a new session.
      const expires = block.code.includes("'session-expired'")
      if (expires) server.faults.failNext({method: 'POST', status: 404, rpcMethod: 'tools/call'})
      vi.stubGlobal('location', new URL('https://app.example/'))
      vi.stubGlobal('expect', expect)
      const cwd = process.cwd()
      const scratch = await mkdtemp(join(tmpdir(), 'readme-'))
      process.chdir(scratch)
      vi.spyOn(console, 'log').mockImplementation(() => {})
      try {
        await import(fileOf(block))
        if (expires) expect(initializations(server)).toBe(2)
        else if (!servesItself && /\.connect\(/.test(block.code)) expect(initializations(server)).toBeGreaterThanOrEqual(1)
      } finally {
        process.chdir(cwd)
        vi.unstubAllGlobals()
        network?.close()
        await rm(scratch, {recursive: true, force: true})
      }
    })
  })
})

/** The first cell of every row of the first table after `heading`. */
function firstColumn(heading: string): string[] {
  const section = readme.slice(readme.indexOf(heading))
  const table = /^\|.*\|\n\|[-|]+\|\n((?:\|.*\|\n)+)/m.exec(section)![1]!
  return table.trim().split('\n').map((row) => row.split('|')[1]!.trim())
}

function initializations(server: ReferenceServer): number {
  return server.requests('POST', 'initialize').length
}
