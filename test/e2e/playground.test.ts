/**
 * Issue 6: the playground in headless Chromium and Firefox (Debian's, driven by puppeteer-core:
 * test/fixtures/browsers.ts), clicked through as a person would. The playground server (playground/server.ts)
 * serves a production build of the page and the reference server on one origin; the page's client keeps its
 * session in IndexedDB. Start the slow tool, reload the page mid-stream with the page's own button: the reloaded
 * page resumes the tool's stream, shows its result once, and its counters and the server's say what happened.
 *
 * It ends with a 1200×800 screenshot: in .test-build/playground-<browser>.png, or Chromium's in docs/playground.png
 * (the README's) with UPDATE_SCREENSHOT=1, so that a test run never rewrites a committed file.
 */
import {mkdir} from 'node:fs/promises'
import type {Page} from 'puppeteer-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startPlayground, type Playground} from '../../playground/server.ts'
import {
  browserNames,
  hasBrowser,
  launchBrowser,
  requireBrowser,
  type BrowserName,
  type LaunchedBrowser,
} from '../fixtures/browsers.ts'

/** The page's slow tool (see playground/main.ts): 10 steps, 400 ms apart. */
const steps = 10
const screenshotOf = (name: BrowserName): `${string}.png` =>
  process.env['UPDATE_SCREENSHOT'] === '1' && name === 'chromium'
    ? 'docs/playground.png'
    : `.test-build/playground-${name}.png`

/** The text of the first element `selector` finds. */
const textOf = (page: Page, selector: string): Promise<string | null> =>
  page.$eval(selector, (element) => element.textContent)
/** The texts of every element `selector` finds. */
const textsOf = (page: Page, selector: string): Promise<(string | null)[]> =>
  page.$$eval(selector, (elements) => elements.map((element) => element.textContent))

/** The number a counter cell shows (`data-counter` in the Counters panel). */
async function counter(page: Page, key: string): Promise<number> {
  return Number(await textOf(page, `[data-counter="${key}"]`))
}

describe.each(browserNames)('the playground, clicked through in headless %s', (name) => {
  let launched: LaunchedBrowser | undefined
  let playground: Playground | undefined

  beforeAll(async () => {
    if (!hasBrowser(name)) return
    // Building the page and launching the browser overlap: each takes a second or more on 2 cores.
    const [started, browser] = await Promise.allSettled([
      startPlayground({serve: 'build', port: 0}),
      launchBrowser(name),
    ])
    if (started.status === 'fulfilled') playground = started.value
    if (browser.status === 'fulfilled') launched = browser.value
    if (started.status === 'rejected') throw started.reason
    if (browser.status === 'rejected') throw browser.reason
  }, 30_000)

  afterAll(async () => {
    await launched?.close()
    await playground?.close()
  })

  it('a slow tool, the page reloaded mid-stream: the stream resumes from IndexedDB, the call shows by name with its progress and its result once, the counters are right', async (context) => {
    requireBrowser(name, context)
    const {url, reference} = playground!
    const page = await launched!.browser.newPage()
    // Firefox ESR 140 lacks the orientation override setViewport sends: its window is sized at launch.
    if (name === 'chromium') await page.setViewport({width: 1200, height: 800})
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(`pageerror: ${String(error)}`))
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console.error: ${message.text()}`)
    })

    await page.goto(url)
    await page.waitForSelector('body[data-ready="true"]')
    await page.locator('button::-p-text(Start a slow tool)').click()
    await page.waitForFunction(
      () => Number(document.querySelector('.call[data-status="running"] .numbers')?.textContent.split('/')[0]) >= 2,
    )
    const sessionId = await textOf(page, '#session')

    // The page's own button: location.reload(), mid-stream.
    await Promise.all([page.waitForNavigation(), page.locator('button::-p-text(Reload the page)').click()])
    await page.waitForSelector('body[data-ready="true"]')
    expect(await textOf(page, '#load')).toBe('#2')
    expect(await textOf(page, '#session')).toBe(sessionId)

    // The call journal in IndexedDB held the first load's call, by name, with its progress at the reload...
    const journaled = /calls: slow (\d+)\/10/.exec((await textOf(page, '#stored')) ?? '')
    expect(Number(journaled?.[1])).toBeGreaterThanOrEqual(2)
    expect(Number(journaled?.[1])).toBeLessThan(steps)
    // ...and the call finishes on the stream this load resumed: shown by name, its progress whole, its result once.
    const earlier = '.call[data-status="earlier"]'
    await page.waitForSelector(`${earlier} .call-text`)
    await page.waitForFunction(
      () => document.querySelector('[data-counter="server.replayedEvents"]')?.textContent !== '0',
    )
    await new Promise((resolve) => setTimeout(resolve, 300)) // room for a duplicate, were one coming
    expect(await textsOf(page, `${earlier} .call-text`)).toEqual([`done after ${steps} steps`])
    expect(await textsOf(page, `${earlier} strong`)).toEqual(['slow'])
    expect(await textOf(page, `${earlier} .numbers`)).toBe(`${steps}/${steps}`)
    expect(await page.$$('.call[data-status="running"]')).toHaveLength(0)

    // Stream resumption of the tool's stream, from the cursor the first load stored in IndexedDB.
    const resumption = reference.log.find((entry) => entry.lastEventId !== undefined)!
    expect(resumption).toMatchObject({method: 'GET', sessionId, status: 200})
    const cursor = resumption.lastEventId!
    const rows = await page.$$eval('#decisions tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent)),
    )
    expect(rows).toContainEqual(['#2', 'req 1', 'stream-resumption', sessionId, cursor])
    expect(rows).toContainEqual(['#2', 'GET', 'session-resumption', sessionId, '—'])
    const toolStream = reference.session(sessionId!).streams.find((stream) => stream.kind === 'request')!
    const missed = toolStream.events.length - 1 - toolStream.events.findIndex((event) => event.id === cursor)

    // The counters: the client's (this load), then the server's.
    expect(await counter(page, 'client.streamResumptions')).toBe(1)
    expect(await counter(page, 'client.replayedEvents')).toBe(missed)
    expect(await counter(page, 'client.duplicatesDropped')).toBe(0)
    expect(await counter(page, 'client.newSessions')).toBe(0)
    expect(await counter(page, 'client.unmatchedResponses')).toBe(1)
    expect(await counter(page, 'server.executions.slow')).toBe(1)
    expect(await counter(page, 'server.posts.tools/call')).toBe(1)
    expect(await counter(page, 'server.posts.initialize')).toBe(1)
    expect(reference.executions).toEqual({slow: 1})

    expect(errors).toEqual([])
    if (name === 'firefox') expect(launched!.outside).toEqual([])
    const screenshot = screenshotOf(name)
    await mkdir(screenshot.slice(0, screenshot.lastIndexOf('/')), {recursive: true})
    await page.screenshot({path: screenshot})
    await page.close()
  }, 20_000)
})
