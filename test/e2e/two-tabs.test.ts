/**
 * Issue 16, in a real browser: tabs of one origin share IndexedDB, and so an IdbStore; its leases are Web Locks,
 * which the browser releases when a tab closes. Debian's `/usr/bin/chromium` through playwright-core; the page is
 * test/browser/tabs-page.ts. Without Chromium the test is skipped, except under `CI`, where it fails.
 */
import type {Page} from 'playwright-core'
import {describe, expect, it} from 'vitest'
import {createReferenceServer} from '../../src/testing/node.ts'
import type {TabState} from '../browser/tabs-page.ts'
import {requireChromium} from '../fixtures/chromium.ts'
import {usePageServer} from '../fixtures/page-server.ts'

const server = createReferenceServer()
/** Each JSON-RPC request POSTed: its session and ID. */
const posted: {sessionId: string | null; id: unknown}[] = []
const page = usePageServer('two-tabs', 'tabs.html', async (request) => {
  if (request.method === 'POST') {
    const body = JSON.parse(await request.clone().text()) as {id?: unknown; method?: unknown}
    if (body.id !== undefined && body.method !== undefined)
      posted.push({sessionId: request.headers.get('mcp-session-id'), id: body.id})
  }
  return server.handle(request)
})

const state = (tab: Page): Promise<TabState> => tab.evaluate(() => window.__tab)

describe('IdbStore in two Chromium tabs', () => {
  it('the second tab gets a session of its own; once the first closes mid-call, a new tab adopts its session and resumes the stream: the tool ran once', async (context) => {
    requireChromium(context)
    const {origin} = page
    const tabs = await page.browser.newContext()
    const open = async (): Promise<Page> => {
      const tab = await tabs.newPage()
      await tab.goto(`${origin}/tabs.html`)
      await tab.waitForFunction(() => window.__tab.phase !== 'connecting', undefined, {timeout: 10_000})
      return tab
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
    await second.waitForFunction(async () => (await navigator.locks.query()).held?.length === 1, undefined, {
      timeout: 10_000,
    })

    const third = await open()
    await third.waitForFunction(
      () => window.__tab.unmatched.length === 1 || window.__tab.errors.length > 0,
      undefined,
      {timeout: 10_000},
    )
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
    const keys = posted
      .filter(({sessionId}) => sessionId !== null)
      .map(({sessionId, id}) => `${String(sessionId)} ${JSON.stringify(id)}`)
    expect(keys.length).toBeGreaterThanOrEqual(2)
    expect(new Set(keys).size).toBe(keys.length)
    expect((await state(second)).sessionId).toBe(secondState.sessionId)
    expect((await state(second)).errors).toEqual([])
    await tabs.close()
  }, 30_000)
})
