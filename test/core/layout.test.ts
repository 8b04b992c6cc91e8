/**
 * The layout the architecture promises (docs/design.md#layout): no import cycle anywhere in the library, type-only
 * imports included (the lint's import-x/no-cycle sees value imports only), and one formatter for the code's width.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {ESLint, Linter} from 'eslint'
import {importX} from 'eslint-plugin-import-x'
import * as prettier from 'prettier'
import tseslint from 'typescript-eslint'
import {describe, expect, it} from 'vitest'
import {cycleIn, importGraph} from '../fixtures/imports.ts'

describe('the layout of src/', () => {
  it('has no import cycle, type-only imports included', () => {
    const graph = importGraph('src')
    expect(graph.get('transport.ts')).toContain('session/session.ts')
    expect(graph.get('streams/lifecycle.ts')).toContain('policy/decision.ts')
    expect(cycleIn(graph)).toBeUndefined()
  })

  it('keeps the server half (server.ts, server/) and the client core apart, type-only imports included', () => {
    const graph = importGraph('src')
    const isServer = (file: string): boolean => file === 'server.ts' || file.startsWith('server/')
    const isOtel = (file: string): boolean => file === 'otel.ts' || file.startsWith('otel/')
    const crossings = [...graph]
      .filter(([file]) => !isOtel(file))
      .flatMap(([file, targets]) =>
        targets.filter((target) => isServer(file) !== isServer(target)).map((target) => `${file} -> ${target}`),
      )
    expect(graph.get('server.ts')).toContain('server/event-store.ts')
    expect(crossings).toEqual([])
  })

  it('lets ./otel reach the client through index.ts and the server half through server.ts only, and nothing import it', () => {
    const graph = importGraph('src')
    const isOtel = (file: string): boolean => file === 'otel.ts' || file.startsWith('otel/')
    const reached = new Set(
      [...graph].filter(([file]) => isOtel(file)).flatMap(([, targets]) => targets.filter((target) => !isOtel(target))),
    )
    expect([...reached].sort()).toEqual(['index.ts', 'server.ts'])
    const importers = [...graph].filter(([file, targets]) => !isOtel(file) && targets.some(isOtel))
    expect(importers).toEqual([])
  })

  it('keeps the decision a leaf that imports nothing', () => {
    expect(importGraph('src').get('policy/decision.ts')).toEqual([])
  })

  it('holds at its root only the entry points and the transport with its options, errors and events; the rest in a folder per concern', () => {
    const root = readdirSync('src', {withFileTypes: true})
    expect(
      root
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name)
        .sort(),
    ).toEqual([
      'cloudflare.ts',
      'errors.ts',
      'events.ts',
      'idb.ts',
      'index.ts',
      'journal.ts',
      'node.ts',
      'options.ts',
      'otel.ts',
      'redis.ts',
      'server.ts',
      'transport.ts',
    ])
    expect(
      root
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort(),
    ).toEqual([
      'calls',
      'delivery',
      'modern',
      'otel',
      'persistence',
      'policy',
      'server',
      'session',
      'streams',
      'testing',
      'wire',
    ])
  })

  it('is formatted by Prettier at a width of 120, and npm run lint checks it', async () => {
    const options = {...(await prettier.resolveConfig('src/transport.ts')), filepath: 'src/packed.ts'}
    expect(options).toMatchObject({printWidth: 120})
    const packed = `export const wiring = {${'abcdefghijklmnopqrstuvwxyz'
      .split('')
      .map((key) => `${key}: '${key}'`)
      .join(', ')}}\n`
    expect(await prettier.check(packed, options)).toBe(false)
    expect(await prettier.check(await prettier.format(packed, options), options)).toBe(true)
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {scripts: Record<string, string>}
    expect(manifest.scripts['lint']).toContain('prettier --check .')
  })
})

describe('the lint', () => {
  const cwd = fileURLToPath(new URL('../..', import.meta.url))
  const eslint = new ESLint({cwd})
  /**
   * What the layer rule, as eslint.config.js configures it for `file`, says of `code` written there (it checks
   * imports, not re-exports). The rule alone, without type information: linting a text with types takes seconds.
   */
  async function layerRefusals(file: string, code: string): Promise<string[]> {
    const config = (await eslint.calculateConfigForFile(file)) as Linter.Config
    const rule = config.rules?.['import-x/no-restricted-paths']
    const linter = new Linter({cwd})
    const only = {
      files: ['**/*.ts'],
      plugins: {'import-x': importX},
      settings: config.settings ?? {},
      languageOptions: {parser: tseslint.parser},
      rules: {'import-x/no-restricted-paths': rule ?? 'off'},
    }
    return linter.verify(code, [only], file).map((message) => message.message)
  }

  it('refuses an import of a layer above, or of the transport or an entry point, and takes one from below', async () => {
    expect(
      await layerRefusals(
        'src/policy/limits.ts',
        "import type {Stream} from '../streams/stream.ts'\nexport type Used = Stream\n",
      ),
    ).toHaveLength(1)
    expect(
      await layerRefusals(
        'src/wire/http.ts',
        "import type {Inbox} from '../delivery/inbox.ts'\nexport type Used = Inbox\n",
      ),
    ).toHaveLength(1)
    expect(
      await layerRefusals(
        'src/streams/stream.ts',
        "import type {CallJournal} from '../calls/call-journal.ts'\nexport type Used = CallJournal\n",
      ),
    ).toHaveLength(1)
    expect(
      await layerRefusals(
        'src/session/post.ts',
        "import type {ResumableHTTPClientTransport} from '../transport.ts'\nexport type Used = ResumableHTTPClientTransport\n",
      ),
    ).toHaveLength(1)
    expect(
      await layerRefusals(
        'src/delivery/inbox.ts',
        "import {MemoryStore} from '../index.ts'\nexport const used = [MemoryStore]\n",
      ),
    ).toHaveLength(1)
    expect(
      await layerRefusals(
        'src/session/post.ts',
        "import type {Stream} from '../streams/stream.ts'\nexport type Used = Stream\n",
      ),
    ).toEqual([])
    expect(
      await layerRefusals(
        'src/streams/stream.ts',
        "import type {TransportEvent} from '../events.ts'\nexport type Used = TransportEvent\n",
      ),
    ).toEqual([])
  }, 30_000)

  it('keeps the server half and the client core apart: neither imports the other', async () => {
    expect(
      await layerRefusals('src/server/event-store.ts', "export type {TransportError} from '../errors.ts'\n"),
    ).toHaveLength(1)
    expect(
      await layerRefusals('src/server/pending-requests.ts', "export type {JsonRpcId} from '../wire/jsonrpc.ts'\n"),
    ).toHaveLength(1)
    expect(await layerRefusals('src/server/redis.ts', "export {MemoryStore} from '../index.ts'\n")).toHaveLength(1)
    expect(await layerRefusals('src/server.ts', "export {Inbox} from './delivery/inbox.ts'\n")).toHaveLength(1)
    expect(
      await layerRefusals('src/wire/jsonrpc.ts', "export type {JsonRpcMessage} from '../server/event-store.ts'\n"),
    ).toHaveLength(1)
    expect(await layerRefusals('src/transport.ts', "export {ResumableEventStore} from './server.ts'\n")).toHaveLength(1)
    expect(await layerRefusals('src/server/event-store.ts', "export type {EventLog} from './event-log.ts'\n")).toEqual(
      [],
    )
  }, 30_000)
})

describe('the tests', () => {
  it('are titled with sentences of behaviour, never with a label that points at a document outside the repository', () => {
    const folder = new URL('../', import.meta.url)
    const files = (readdirSync(folder, {recursive: true}) as string[]).filter((file) => file.endsWith('.test.ts'))
    const titles = files.flatMap((file) =>
      [
        ...readFileSync(new URL(file, folder), 'utf8').matchAll(
          /\b(?:it|test|describe)(?:\.each\(.*?\))?\(\s*['"`]([^'"`]*)/g,
        ),
      ].map(([, title]) => `${file}: ${title}`),
    )
    expect(titles.length).toBeGreaterThan(1000)
    // Labels such as `B12:`, `F35:`, `3.g:`, `3.g/3.k:` or `3.g property` named the sections of notes kept elsewhere.
    expect(titles.filter((title) => /: (?:[A-Z]{1,2}\d+[a-z]?:|\d+\.[a-z]\b)/.test(title))).toEqual([])
  })
})
