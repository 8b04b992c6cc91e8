/**
 * The MV3 example extension (examples/mv3-extension), built with its own Vite config and loaded unpacked into
 * headless Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core), against the reference server on
 * 127.0.0.1. The worker starts a tool call with progress and one that asks for sampling; the test stops the worker
 * mid-call with CDP `ServiceWorker.stopWorker` and wakes it, by a message or by the worker's own keep-alive alarm.
 *
 * Playwright attaches to every service worker, and an attached DevTools session disables idle termination: this
 * test never waits for the worker to stop on its own. It stops it explicitly, from a CDP session of the popup page
 * (none is opened on the worker), and checks that it is gone: its version `stopped`, its target closed, and the
 * instance that comes back is a new one.
 *
 * Without Chromium the test is skipped, except under `CI`, where it fails.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {chromium, type BrowserContext, type CDPSession, type Page} from 'playwright-core'
import {build} from 'vite'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import type {AppState, Reply, Request} from '../../examples/mv3-extension/src/messages.ts'
import {
  builtinTools,
  createReferenceServer,
  listen,
  type Listening,
  type ReferenceServer,
  type ReferenceServerOptions,
} from '../../src/testing/node.ts'
import {executablePath, hasChromium, requireChromium} from '../fixtures/chromium.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const steps = 6
const keepAliveAlarm = 'mcp-keep-alive'

/** What the extension pages see: the `chrome` global of an extension page (the test's tsconfig has no chrome types). */
interface Chrome {
  runtime: {sendMessage: (request: Request) => Promise<Reply>}
  storage: {local: {get: (defaults: object) => Promise<unknown>}}
  alarms: {get: (name: string) => Promise<unknown>; create: (name: string, info: object) => Promise<void>}
}
declare const chrome: Chrome

let outDir = ''
/** The example built with the SDK's default validator (Ajv) in place of the CSP-safe one. */
let ajvOutDir = ''
let profile = ''
let server: ReferenceServer
let listening: Listening | undefined
let browser: BrowserContext | undefined

beforeAll(async () => {
  if (!hasChromium) return
  listening = await listen({handle: (request) => server.handle(request)})
  const scratch = (prefix: string): Promise<string> => mkdtemp(join(tmpdir(), prefix))
  ;[outDir, ajvOutDir, profile] = await Promise.all([
    scratch('mv3-extension-'),
    scratch('mv3-extension-ajv-'),
    scratch('mv3-profile-'),
  ])
  const config = {
    configFile: join(root, 'examples/mv3-extension/vite.config.ts'),
    define: {MCP_SERVER_URL: JSON.stringify(listening.url)},
    logLevel: 'error' as const,
  }
  await build({...config, build: {outDir, emptyOutDir: true}})
  const ajv = {
    find: /^@modelcontextprotocol\/sdk\/validation\/cfworker$/,
    replacement: join(root, 'test/fixtures/ajv-validator.ts'),
  }
  await build({...config, resolve: {alias: [ajv]}, build: {outDir: ajvOutDir, emptyOutDir: true}})
}, 60_000)

afterEach(async () => {
  await browser?.close()
  browser = undefined
})

afterAll(async () => {
  await listening?.close()
  for (const dir of [outDir, ajvOutDir, profile]) if (dir !== '') await rm(dir, {recursive: true, force: true})
})

/** The browser with the built extension in a fresh profile, its popup page open, and a CDP session of that page. */
async function launch(
  extension = outDir,
  options?: ReferenceServerOptions,
): Promise<{page: Page; cdp: CDPSession; extensionId: string; versions: Map<string, string>}> {
  server = createReferenceServer(options)
  await rm(profile, {recursive: true, force: true})
  const context = (browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      `--disable-extensions-except=${extension}`,
      `--load-extension=${extension}`,
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  }))
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker', {timeout: 10_000}))
  const extensionId = new URL(worker.url()).host
  const page = await context.newPage()
  await page.goto(`chrome-extension://${extensionId}/popup.html`)
  const cdp = await context.newCDPSession(page)
  // The running status of each service worker version, as ServiceWorker.workerVersionUpdated reports it.
  const versions = new Map<string, string>()
  cdp.on('ServiceWorker.workerVersionUpdated', ({versions: updated}) => {
    for (const version of updated)
      if (version.scriptURL === worker.url()) versions.set(version.versionId, version.runningStatus)
  })
  await cdp.send('ServiceWorker.enable')
  return {page, cdp, extensionId, versions}
}

const send = (page: Page, request: Request): Promise<Reply> =>
  page.evaluate((message) => chrome.runtime.sendMessage(message), request)
/** The app state in chrome.storage.local, read by the popup page: reading it never wakes the worker. */
const state = (page: Page): Promise<AppState> =>
  page.evaluate(() =>
    chrome.storage.local.get({calls: {}, approvals: {}, unattributed: [], errors: []}),
  ) as Promise<AppState>
const alarmArmed = (page: Page): Promise<boolean> =>
  page.evaluate(async (name) => (await chrome.alarms.get(name)) !== undefined, keepAliveAlarm)

async function until<T>(
  probe: () => T | Promise<T>,
  holds: (value: T) => boolean,
  what: string,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (holds(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms; last: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Stops the running worker with CDP and waits until it is really gone: its version stopped, its target closed. */
async function stopWorker(cdp: CDPSession, versions: Map<string, string>, extensionId: string): Promise<void> {
  const running = [...versions].find(([, status]) => status === 'running')
  expect(running, 'a running worker').toBeDefined()
  await cdp.send('ServiceWorker.stopWorker', {versionId: running![0]})
  await until(
    () => versions.get(running![0]),
    (status) => status === 'stopped',
    'the worker version stopped',
  )
  const {targetInfos} = await cdp.send('Target.getTargets')
  expect(targetInfos.filter((target) => target.type === 'service_worker' && target.url.includes(extensionId))).toEqual(
    [],
  )
}

interface Started {
  page: Page
  cdp: CDPSession
  extensionId: string
  versions: Map<string, string>
  first: Extract<Reply, {instance: string}>
  slowId: string
  askId: string
}

/** Starts the slow tool and the sampling tool in the worker, and waits until both are mid-call. */
async function startCalls(): Promise<Started> {
  const {page, cdp, extensionId, versions} = await launch()
  const first = (await send(page, {type: 'status'})) as Extract<Reply, {instance: string}>
  expect(first.sessionId).toMatch(/^session-/)
  const slow = await send(page, {type: 'call', tool: 'slow', arguments: {steps, delayMs: 250}})
  const ask = await send(page, {type: 'call', tool: 'ask'})
  if (!('id' in slow) || !('id' in ask)) throw new Error(`calls not started: ${JSON.stringify([slow, ask])}`)
  // Mid-call: progress 2 of the slow tool recorded by the app, the sampling request waiting for the user.
  await until(
    () => state(page),
    (app) =>
      (app.calls[slow.id]?.progress.length ?? 0) >= 2 &&
      Object.values(app.approvals).some((approval) => approval.status === 'waiting'),
    'both calls mid-call',
  )
  // Requests are pending: the keep-alive alarm is armed.
  expect(await alarmArmed(page)).toBe(true)
  return {page, cdp, extensionId, versions, first, slowId: slow.id, askId: ask.id}
}

/** Approves the sampling request, then checks everything the worker's stop must not have lost. */
async function approveAndCheck(
  {page, first, slowId, askId}: Started,
  second: Extract<Reply, {instance: string}>,
): Promise<void> {
  // A new instance of the worker, on the same session: re-attached, not initialized.
  expect(second.instance).not.toBe(first.instance)
  expect(second.sessionId).toBe(first.sessionId)
  const [key] = Object.keys((await state(page)).approvals)
  expect(await send(page, {type: 'approve', key: key!})).toEqual({ok: true})
  const app = await until(
    () => state(page),
    (current) =>
      current.calls[slowId]?.status === 'done' &&
      current.unattributed.length + Number(current.calls[askId]?.status === 'done') === 1,
    'both results',
  )

  expect(server.requests('POST', 'initialize')).toHaveLength(1)
  expect(server.executions).toEqual({slow: 1, ask: 1})
  // The tool's stream was resumed with its cursor: a GET with Last-Event-ID, inside the session.
  const slowStream = server
    .session(first.sessionId)
    .streams.find((stream) => stream.events.some((event) => event.data.includes('done after')))!
  const resumed = server.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== undefined)
  const slowResume = resumed.find((entry) => slowStream.events.some((event) => event.id === entry.lastEventId))
  expect(slowResume).toMatchObject({sessionId: first.sessionId, status: 200})
  // The sampling request the stopped worker left unanswered was answered once, by the new instance.
  expect([...server.answers.values()]).toEqual([
    [
      expect.objectContaining({
        result: expect.objectContaining({content: {type: 'text', text: 'answer to question 1'}}),
      }),
    ],
  ])
  expect(app.approvals[key!]).toEqual({question: 'question 1', status: 'answered'})

  // The slow call's result reached the app attributed to that call, with all its progress once each, in order:
  // the first instance's through the Client, the rest through the transport's events, by the call they carry.
  expect(app.calls[slowId]).toMatchObject({
    tool: 'slow',
    instance: first.instance,
    status: 'done',
    result: `done after ${steps} steps`,
  })
  expect(app.calls[slowId]!.progress).toEqual(Array.from({length: steps}, (_, index) => index + 1))
  const cursorAt = slowStream.events.findIndex((event) => event.id === slowResume!.lastEventId)
  const replayedProgress = slowStream.events
    .slice(cursorAt + 1)
    .filter((event) => event.data.includes('notifications/progress'))
  expect(replayedProgress.length).toBeGreaterThanOrEqual(1)
  // Attributed by the call the replayed progress carried: its wire ID is the one the answer names.
  const answer = slowStream.events.find((event) => event.data.includes('done after'))!
  expect(app.calls[slowId]!.wireId).toBe((JSON.parse(answer.data) as {id: number}).id)
  // The ask call brings no progress to tell its wire ID: its result is matched by its text.
  const askResult = app.calls[askId]?.result ?? app.unattributed[0]?.text
  expect(askResult).toBe('answer to question 1')
  expect(app.errors).toEqual([])

  // Nothing is pending any more: the keep-alive alarm is cleared.
  const status = await send(page, {type: 'status'})
  expect(status).toMatchObject({instance: second.instance, pending: 0})
  await until(
    () => alarmArmed(page),
    (armed) => !armed,
    'the keep-alive alarm cleared',
  )
}

describe('the MV3 example extension in headless Chromium', () => {
  it('a worker stopped mid-call and woken by a message resumes the session: one initialize, the stream resumed from its cursor, the tool ran once, the sampling request answered once, the result and progress attributed to the call', async (context) => {
    requireChromium(context)
    const started = await startCalls()
    await stopWorker(started.cdp, started.versions, started.extensionId)
    // The tool finishes on the server while the worker is stopped.
    await until(
      () =>
        server
          .session(started.first.sessionId)
          .streams.some((stream) => stream.events.some((event) => event.data.includes('done after'))),
      Boolean,
      'the slow tool done on the server',
    )
    const second = (await send(started.page, {type: 'status'})) as Extract<Reply, {instance: string}>
    await approveAndCheck(started, second)
  }, 60_000)

  it('a stopped worker is woken by its keep-alive alarm alone and resumes, with no message', async (context) => {
    requireChromium(context)
    const started = await startCalls()
    const {page, cdp, versions, extensionId} = started
    // The alarm fires every 30 s; brought forward to 1 s (unpacked extensions allow it) so that the test is quick.
    await page.evaluate(
      (name) => chrome.alarms.create(name, {when: Date.now() + 1000, periodInMinutes: 0.5}),
      keepAliveAlarm,
    )
    await stopWorker(cdp, versions, extensionId)
    // Nothing but the alarm starts it again; the new instance resumes the call's stream on its own.
    await until(
      () => server.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== undefined).length,
      (count) => count >= 1,
      'a resuming GET',
    )
    expect([...versions.values()]).toContain('running')
    const second = (await send(page, {type: 'status'})) as Extract<Reply, {instance: string}>
    await approveAndCheck(started, second)
  }, 60_000)

  it('lists and calls a tool with an output schema under the extension CSP with the CSP-safe validator, where the SDK default (Ajv) fails', async (context) => {
    requireChromium(context)
    const forecast = {
      name: 'forecast',
      outputSchema: {type: 'object', properties: {celsius: {type: 'number'}}, required: ['celsius']},
      handler: () => ({content: [{type: 'text', text: '21 °C'}], structuredContent: {celsius: 21}}),
    }
    const tools = [...builtinTools(), forecast]
    const safe = await launch(outDir, {tools})
    expect(await send(safe.page, {type: 'tools'})).toEqual({tools: ['echo', 'increment', 'slow', 'ask', 'forecast']})
    const call = await send(safe.page, {type: 'call', tool: 'forecast'})
    if (!('id' in call)) throw new Error(JSON.stringify(call))
    const app = await until(
      () => state(safe.page),
      (current) => current.calls[call.id]?.status !== 'pending',
      'the forecast result',
    )
    expect(app.calls[call.id]).toMatchObject({status: 'done', result: '21 °C'})
    await browser?.close()
    browser = undefined

    const ajv = await launch(ajvOutDir, {tools})
    // Ajv compiles the output schema as the Client caches the listed tools: the CSP refuses it.
    expect(await send(ajv.page, {type: 'tools'})).toEqual({
      error: expect.stringMatching(/EvalError: .*Content Security Policy/),
    })
  }, 60_000)
})
