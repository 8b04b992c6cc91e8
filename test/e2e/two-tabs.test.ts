/**
 * Issue 16, in a real browser: tabs of one origin share IndexedDB, and so an IdbStore; its leases are Web Locks,
 * which the browser releases when a tab closes. Debian's `/usr/bin/chromium` through playwright-core; the page is
 * test/browser/tabs-page.ts. Without Chromium the test is skipped, except under `CI`, where it fails.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import type {Browser, Page} from 'playwright-core'
import {build} from 'vite'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createReferenceServer, listen, type Listening, type ReferenceServer} from '../../src/testing/node.ts'
import type {TabState} from '../browser/tabs-page.ts'
import {hasChromium, launchChromium, requireChromium} from '../fixtures/chromium.ts'
import {serveStatic} from '../fixtures/static.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
let outDir = ''
let browser: Browser | undefined
let listening: Listening | undefined
let server: ReferenceServer
/** Each JSON-RPC request POSTed: its session and ID. */
const posted: {sessionId: string | null; id: unknown}[] = []

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url)
  if (url.pathname !== '/mcp') return serveStatic(outDir, url)
  if (request.method === 'POST') {
    const body = JSON.parse(await request.clone().text()) as {id?: unknown; method?: unknown}
    if (body.id !== undefined && body.method !== undefined) posted.push({sessionId: request.headers.get('mcp-session-id'), id: body.id})
  }
  return server.handle(request)
}

beforeAll(async () => {
  if (!hasChromium) return
  outDir = await mkdtemp(join(tmpdir(), 'two-tabs-'))
  server = createReferenceServer()
  const [built, launched] = await Promise.allSettled([
    build({
      root: join(root, 'test/browser'),
      configFile: false,
      logLevel: 'error',
      build: {outDir, emptyOutDir: true, minify: false, reportCompressedSize: false, chunkSizeWarningLimit: 2000, rolldownOptions: {input: join(root, 'test/browser/tabs.html')}},
    }),
    launchChromium(),
  ])
  if (launched.status === 'fulfilled') browser = launched.value
  if (built.status === 'rejected') throw built.reason
  if (launched.status === 'rejected') throw launched.reason
  listening = await listen({handle})
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await listening?.close()
  if (outDir !== '') await rm(outDir, {recursive: true, force: true})
})

const state = (page: Page): Promise<TabState> => page.evaluate(() => window.__tab)

describe('IdbStore in two Chromium tabs', () => {
  it('the second tab gets a session of its own; once the first closes mid-call, a new tab adopts its session and resumes the stream: the tool ran once', async (context) => {
    requireChromium(context)
    const origin = new URL(listening!.url).origin
    const tabs = await browser!.newContext()
    const open = async (): Promise<Page> => {
      const page = await tabs.newPage()
      await page.goto(`${origin}/tabs.html`)
      await page.waitForFunction(() => window.__tab.phase !== 'connecting', undefined, {timeout: 10_000})
      return page
    }

    const first = await open()
    const firstState = await state(first)
    expect(firstState).toMatchObject({phase: 'connected', webLocks: true, errors: []})
    await first.evaluate(() => window.__startSlow())
    await first.waitForFunction(() => window.__tab.progress.length >= 2, undefined, {timeout: 10_000})

    // The first tab lives: the second starts its own session and never touches the first's.
    const second = await open()
    const secondState = await state(second)
    expect(secondState.sessionId).toBeDefined()
    expect(secondState.sessionId).not.toBe(firstState.sessionId)

    const progressBefore = (await state(first)).progress.length
    await first.close()
    // The browser releases the closed tab's Web Lock: only the second tab's is held.
    await second.waitForFunction(async () => (await navigator.locks.query()).held?.length === 1, undefined, {timeout: 10_000})

    const third = await open()
    await third.waitForFunction(() => window.__tab.unmatched.length === 1 || window.__tab.errors.length > 0, undefined, {timeout: 10_000})
    const thirdState = await state(third)
    expect(thirdState.errors).toEqual([])
    expect(thirdState.sessionId).toBe(firstState.sessionId)
    expect(thirdState.unmatched[0]).toMatchObject({result: {content: [{type: 'text', text: 'done after 8 steps'}]}})
    expect(thirdState.metrics).toMatchObject({streamResumptions: 1, newSessions: 0})
    expect(progressBefore).toBeLessThan(8)

    // The adopted session serves the new tab's own calls, on request IDs the first tab never used.
    expect(await third.evaluate(() => window.__echo())).toContain('adopter')
    expect(server.executions).toEqual({slow: 1, echo: 1})
    expect(server.requests('POST', 'initialize')).toHaveLength(2)
    // Within each session (initialize carries none), no request ID twice.
    const keys = posted.filter(({sessionId}) => sessionId !== null).map(({sessionId, id}) => `${String(sessionId)} ${JSON.stringify(id)}`)
    expect(keys.length).toBeGreaterThanOrEqual(2)
    expect(new Set(keys).size).toBe(keys.length)
    expect((await state(second)).sessionId).toBe(secondState.sessionId)
    expect((await state(second)).errors).toEqual([])
    await tabs.close()
  }, 30_000)
})
