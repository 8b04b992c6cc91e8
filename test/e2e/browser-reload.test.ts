/**
 * Issue 3, in real browsers: `IdbStore` in headless Chromium and Firefox (Debian's `chromium` and `firefox-esr`,
 * driven by puppeteer-core: test/fixtures/browsers.ts; no browser is ever downloaded). The page
 * (test/browser/reload-page.ts, bundled by Vite with the SDK `Client` and the library's sources) and the reference
 * server share one origin, so there is no CORS. The page starts a slow tool, the test reloads it mid-call, and the
 * reloaded page resumes from IndexedDB.
 *
 * Without a browser its test is skipped, except under `CI`, where it fails: .ci/run installs both.
 */
import {describe, expect, it} from 'vitest'
import {createReferenceServer} from '../../src/testing/node.ts'
import type {PageState} from '../browser/reload-page.ts'
import {browserNames, hasBrowser, launchBrowser, requireBrowser} from '../fixtures/browsers.ts'
import {usePageServer} from '../fixtures/page-server.ts'

/** The slow tool's steps, as the page asks for them. */
const steps = 8

describe.each(browserNames)('IdbStore in headless %s', (name) => {
  const server = createReferenceServer()
  /** The JSON-RPC requests POSTed to /mcp, both loads: their IDs must never repeat within the session. */
  const posted: {id: unknown; method: unknown}[] = []

  /** One origin: `/mcp` is the reference server, every other path the page. */
  const pages = usePageServer(
    `browser-reload-${name}`,
    undefined,
    async (request) => {
      if (request.method === 'POST') {
        try {
          const body = JSON.parse(await request.clone().text()) as {id?: unknown; method?: unknown}
          if (body.id !== undefined && body.method !== undefined) posted.push({id: body.id, method: body.method})
        } catch {
          // Not JSON: the server answers it.
        }
      }
      return server.handle(request)
    },
    {available: hasBrowser(name), launch: () => launchBrowser(name)},
  )

  it('a page reloaded mid-call resumes its session from IndexedDB: the tool stream continues after Last-Event-ID, the tool ran once, its result arrives once', async (context) => {
    requireBrowser(name, context)
    const {origin} = pages
    const page = await pages.browser.browser.newPage()
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(`pageerror: ${String(error)}`))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`console.error: ${message.text()}`)
    })
    const state = (): Promise<PageState> => page.evaluate(() => window.__state)

    await page.goto(`${origin}/`)
    await page.waitForFunction(() => window.__state.progress.length >= 2 || window.__state.phase === 'failed', {
      timeout: 10_000,
    })
    const first = await state()
    expect(first.errors).toEqual([])
    expect(first.load).toBe(1)
    expect(first.storedBefore).toEqual({}) // a fresh profile: nothing to resume
    expect(first.sessionId).toMatch(/^session-/)

    await page.reload()
    await page.waitForFunction(() => window.__state.phase === 'done' || window.__state.phase === 'failed', {
      timeout: 10_000,
    })
    const after = await state()
    expect(after.errors).toEqual([])
    expect(after.load).toBe(2)

    // The session came back from IndexedDB: the page read it there itself, before the transport started.
    const sessionKey = `mcp-resumable-http:${origin}/mcp#session`
    expect(after.storedBefore[sessionKey]).toMatchObject({sessionId: first.sessionId})
    expect(after.sessionId).toBe(first.sessionId)
    // ...so the reloaded Client did not initialize, and the tool did not run again.
    expect(server.requests('POST', 'initialize')).toHaveLength(1)
    expect(server.executions).toEqual({slow: 1, echo: 1})

    // Stream resumption of the tool's stream: one GET with the session and a cursor of that stream.
    const toolStream = server
      .session(first.sessionId)
      .streams.find((stream) => stream.events.some((event) => event.data.includes('done after')))!
    const resumes = server.log.filter((entry) => entry.lastEventId !== undefined)
    expect(resumes).toEqual([expect.objectContaining({method: 'GET', sessionId: first.sessionId, status: 200})])
    const cursor = resumes[0]!.lastEventId!
    // That cursor is the one the first load had stored in IndexedDB.
    const storedCursors = Object.entries(after.storedBefore).filter(([key]) =>
      key.startsWith(`mcp-resumable-http:${origin}/mcp#stream:`),
    )
    expect(storedCursors.map(([, record]) => (record as {lastEventId: string}).lastEventId)).toEqual([cursor])
    const cursorIndex = toolStream.events.findIndex((event) => event.id === cursor)
    expect(cursorIndex).toBeGreaterThan(0)
    const request = after.reconnects.filter((event) => event.stream === 'request')
    expect(request).toEqual([
      expect.objectContaining({
        branch: 'stream-resumption',
        headers: {'mcp-session-id': first.sessionId, 'last-event-id': cursor},
      }),
    ])
    // The standalone stream had no event, so no cursor: it is re-attached with the session alone.
    expect(after.reconnects.filter((event) => event.stream === 'standalone')).toEqual([
      expect.objectContaining({
        branch: 'session-resumption',
        headers: {'mcp-session-id': first.sessionId, 'last-event-id': undefined},
      }),
    ])

    // The tool's result arrived once, reported as the answer to a call of the previous load.
    expect(after.unmatched).toHaveLength(1)
    expect(after.unmatched[0]!.message).toMatchObject({
      result: {content: [{type: 'text', text: `done after ${steps} steps`}]},
    })
    expect(after.metrics).toMatchObject({
      unmatchedResponses: 1,
      streamResumptions: 1,
      newSessions: 0,
      duplicatesDropped: 0,
    })

    // Nothing twice: the first load got progress 1..k (each once); the replay held exactly the rest and the
    // result, as orphaned notifications, since the reloaded Client never asked for them.
    const delivered = after.earlierProgress
    const k = delivered.length
    expect(delivered).toEqual(Array.from({length: k}, (_, index) => index + 1))
    expect(k).toBeGreaterThanOrEqual(2)
    expect(k).toBeLessThan(steps)
    expect(after.progress).toEqual([])
    expect(after.orphaned).toEqual(Array.from({length: steps - k}, () => 'notifications/progress'))
    const missed = toolStream.events.slice(cursorIndex + 1)
    expect(missed).toHaveLength(steps - k + 1)
    expect(after.metrics?.replayedEvents).toBe(missed.length)
    expect(after.duplicatesDropped).toBe(0)

    // The resumed session serves the reloaded page's own calls, on request IDs never used before in it.
    expect(after.echo).toBe('echo: {"load":2}')
    const ids = posted.map((body) => JSON.stringify(body.id))
    expect(posted.map((body) => body.method)).toEqual(['initialize', 'tools/call', 'tools/call'])
    expect(new Set(ids).size).toBe(ids.length)

    expect(pageErrors).toEqual([])
    if (name === 'firefox') expect(pages.browser.outside).toEqual([])
    await page.close()
  }, 20_000)
})
