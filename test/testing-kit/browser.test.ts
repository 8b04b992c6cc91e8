/**
 * `./testing` in real browsers: the kit bundled by Vite for the browser (no Node built-in may be left in the
 * bundle) and run in headless Chromium and Firefox (Debian's, driven by puppeteer-core: test/fixtures/browsers.ts),
 * where a fault proxy cuts a custom tool's stream on the reference server. Without a browser its test is skipped,
 * except under `CI`, where it fails.
 */
import {fileURLToPath} from 'node:url'
import {build, type Rolldown} from 'vite'
import {expect, it} from 'vitest'
import type {KitPageResult} from '../browser/kit-page.ts'
import {browserNames, launchBrowser, requireBrowser} from '../fixtures/browsers.ts'

it.for(browserNames)(
  'the kit runs in %s: its stream cut by the fault proxy, the custom tool ran once, its elicitation answered once',
  {timeout: 30_000},
  async (name, context) => {
    requireBrowser(name, context)
    const [built, launched] = await Promise.all([
      build({
        configFile: false,
        logLevel: 'error',
        // Library mode leaves process.env.NODE_ENV alone: a page has no process.
        define: {'process.env.NODE_ENV': '"production"'},
        build: {
          lib: {
            entry: fileURLToPath(new URL('../browser/kit-page.ts', import.meta.url)),
            formats: ['iife'],
            name: 'kitPage',
          },
          write: false,
          minify: false,
          reportCompressedSize: false,
        },
      }),
      launchBrowser(name),
    ])
    try {
      const code = (built as Rolldown.RolldownOutput[])[0]!.output[0].code
      // Vite swaps a Node built-in for a stub that throws when used: none may have been imported.
      expect(code).not.toMatch(/__vite[-_]browser[-_]external/)
      const page = await launched.browser.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(String(error)))
      await page.addScriptTag({content: code})
      await page.waitForFunction(() => window.__kit !== undefined, {timeout: 10_000})
      const result = await page.evaluate(() => window.__kit!)
      expect(result).toEqual({
        text: 'deployed',
        progress: [1, 2],
        asked: 1,
        executions: {deploy: 1},
        resumptions: 1,
      } satisfies KitPageResult)
      expect(errors).toEqual([])
      if (name === 'firefox') expect(launched.outside).toEqual([])
    } finally {
      await launched.close()
    }
  },
)
