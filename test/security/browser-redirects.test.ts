/**
 * Redirects in headless Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core). A browser's fetch
 * answers a `redirect: 'manual'` request with an opaque redirect that hides its target, so the transport cannot
 * tell another origin from its own: it follows no redirect there, and the request fails with a TransportError of
 * code `http`. The page (test/security/browser/redirect-page.ts, bundled by Vite) and the MCP endpoints share one
 * origin; another origin, on another port, answers CORS preflights permissively and records what reaches it.
 *
 * Without Chromium the test is skipped, except under `CI`, where it fails: .ci/run installs Chromium.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import type {Browser} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createReferenceServer, listen, type Listening} from '../../src/testing/node.ts'
import {buildPageAndLaunch, hasChromium, requireChromium} from '../fixtures/chromium.ts'
import {serveStatic} from '../fixtures/static.ts'
import type {ConnectOutcome} from './browser/redirect-page.ts'
import {recordingOrigin, type Received, type RecordingOrigin} from './origins.ts'

const pageRoot = fileURLToPath(new URL('./browser/', import.meta.url))

let outDir = ''
let browser: Browser | undefined
let site: Listening | undefined
let other: RecordingOrigin | undefined
/** Requests that reached the page's own origin, beside the page's files. */
const received: Received[] = []

/** Another origin that lets any page send it anything: what a browser would send there, it would receive. */
function permissive(request: Request, body: string): Response {
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': '*',
    'access-control-allow-methods': '*',
    'access-control-expose-headers': '*',
  }
  if (request.method !== 'POST') return new Response(null, {status: 204, headers: cors})
  const {id} = JSON.parse(body) as {id?: unknown}
  return Response.json(
    {
      jsonrpc: '2.0',
      id,
      result: {protocolVersion: '2025-06-18', capabilities: {}, serverInfo: {name: 'other', version: '1'}},
    },
    {headers: cors},
  )
}

const html =
  '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module" src="/redirect-page.js"></script>'

/** The page: its HTML at `/`, its built script beside it. */
function servePage(url: URL): Promise<Response> {
  if (url.pathname === '/')
    return Promise.resolve(new Response(html, {headers: {'content-type': 'text/html; charset=utf-8'}}))
  return serveStatic(outDir, url)
}

beforeAll(async () => {
  if (!hasChromium) return
  outDir = await mkdtemp(join(tmpdir(), 'browser-redirects-'))
  // The page is a script alone: the HTML that loads it is served below.
  browser = await buildPageAndLaunch(outDir, 'redirect-page.ts', pageRoot)
  other = await recordingOrigin(permissive)
  const server = createReferenceServer()
  site = await listen({
    handle: async (request) => {
      const url = new URL(request.url)
      if (!url.pathname.startsWith('/mcp')) return servePage(url)
      received.push({
        method: request.method,
        target: url.pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.clone().text(),
      })
      if (url.pathname === '/mcp-elsewhere')
        return new Response(null, {status: 307, headers: {location: `${other!.origin}/mcp`}})
      if (url.pathname === '/mcp-moved') return new Response(null, {status: 308, headers: {location: '/mcp'}})
      return server.handle(request)
    },
  })
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await site?.close()
  await other?.close()
  if (outDir !== '') await rm(outDir, {recursive: true, force: true})
})

async function connectFromPage(path: string): Promise<ConnectOutcome> {
  const page = await browser!.newPage()
  try {
    await page.goto(new URL('/', site!.url).href)
    await page.waitForFunction(() => typeof window.connectTo === 'function')
    return await page.evaluate((target) => window.connectTo(target), path)
  } finally {
    await page.close()
  }
}

describe('redirects in headless Chromium', () => {
  it('the page connects to its endpoint when nothing redirects', async (context) => {
    requireChromium(context)
    expect(await connectFromPage('/mcp')).toEqual({connected: true, code: undefined, message: undefined})
  }, 20_000)

  it('a 307 to another origin fails the connect with a TransportError, and that origin receives nothing, not even a preflight', async (context) => {
    requireChromium(context)
    const outcome = await connectFromPage('/mcp-elsewhere')
    expect(outcome).toMatchObject({connected: false, code: 'http'})
    expect(outcome.message).toContain('the browser hides where to')
    expect(other!.received).toEqual([])
  }, 20_000)

  it('a redirect within the origin fails too, since the browser hides its target: the request goes nowhere else', async (context) => {
    requireChromium(context)
    const before = received.filter((request) => request.target === '/mcp').length
    const outcome = await connectFromPage('/mcp-moved')
    expect(outcome).toMatchObject({connected: false, code: 'http'})
    expect(received.filter((request) => request.target === '/mcp')).toHaveLength(before)
  }, 20_000)
})
