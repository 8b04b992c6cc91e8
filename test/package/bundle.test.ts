/**
 * What a browser app pays for the transport, bundled as a bundler ships an app (scripts/size.mjs, `npm run size`:
 * esbuild, minified, code splitting): with default options, nothing those options never use is in the chunks it
 * loads before it runs; an app that uses the journal statically has it there.
 */
import {describe, expect, it} from 'vitest'

interface Measured {
  eagerGzip: number
  totalGzip: number
  modules: Map<string, number>
  allModules: Set<string>
}
interface SizeScript {
  apps: Record<'ours' | 'otel' | 'sdk', string>
  eagerBudget: number
  measure: (app: string) => Promise<Measured>
  eagerLazyModules: (modules: Map<string, number>) => string[]
  otelModulesIn: (modules: Iterable<string>) => string[]
}
const script = '../../scripts/size.mjs'
const {apps, eagerBudget, measure, eagerLazyModules, otelModulesIn} = (await import(script)) as SizeScript

describe('the browser bundle of the transport and IdbStore', () => {
  it('loads, with default options, neither the call journal (its task polling, its records) nor SHA-256 before the app runs, and stays within its budget', async () => {
    const {eagerGzip, totalGzip, modules} = await measure(apps.ours)
    expect(eagerLazyModules(modules)).toEqual([])
    expect([...modules.keys()]).toEqual(
      expect.arrayContaining([
        'src/transport.ts',
        'src/calls/lazy-journal.ts',
        'src/wire/namespace.ts',
        'src/persistence/idb-store.ts',
      ]),
    )
    expect(eagerGzip).toBeLessThanOrEqual(eagerBudget)
    // The lazy chunks exist all the same: the journal, SHA-256 and the SDK's OAuth client.
    expect(totalGzip).toBeGreaterThan(eagerGzip)
  }, 30_000)

  it('holds no OpenTelemetry code in any chunk, eager or lazy, unless the app imports mcp-resumable-http/otel', async () => {
    expect(otelModulesIn((await measure(apps.ours)).allModules)).toEqual([])
    // The check sees it where it is: an instrumented client has it, without the server half's telemetry.
    const instrumented = otelModulesIn((await measure(apps.otel)).modules.keys())
    expect(instrumented).toContain('src/otel/client-telemetry.ts')
    expect(instrumented).not.toContain('src/otel/server.ts')
    expect(instrumented.some((input) => input.startsWith('node_modules/@opentelemetry/api/'))).toBe(true)
  }, 30_000)

  it('holds the journal and SHA-256 before the app runs when the app gives the journal itself, as a service worker does', async () => {
    const app = apps.ours
      .replace(
        "import {IdbStore} from './src/idb.ts'",
        "import {IdbStore} from './src/idb.ts'\nimport {callJournal} from './src/journal.ts'",
      )
      .replace('{store: new IdbStore()}', '{store: new IdbStore(), callJournal}')
    expect(app).toContain('callJournal}')
    const {modules} = await measure(app)
    expect(eagerLazyModules(modules)).toEqual(
      expect.arrayContaining([
        'src/calls/call-journal.ts',
        'src/calls/tasks.ts',
        'src/calls/call.ts',
        'src/wire/sha256.ts',
        'node_modules/@noble/hashes/sha2.js',
      ]),
    )
  }, 30_000)
})
