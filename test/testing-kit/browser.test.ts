/**
 * `./testing` in a real browser: the kit bundled by Vite for the browser (no Node built-in may be left in the
 * bundle) and run in headless Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core), where a fault
 * proxy cuts a custom tool's stream on the reference server. Without Chromium the test is skipped, except under
 * `CI`, where it fails.
 */
import {fileURLToPath} from 'node:url'
import {build, type Rolldown} from 'vite'
import {expect, it} from 'vitest'
import type {KitPageResult} from '../browser/kit-page.ts'
import {launchChromium, requireChromium} from '../fixtures/chromium.ts'

it('the kit runs in a browser: its stream cut by the fault proxy, the custom tool ran once, its elicitation answered once', async (context) => {
  requireChromium(context)
  const [built, browser] = await Promise.all([
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
    launchChromium(),
  ])
  try {
    const code = (built as Rolldown.RolldownOutput[])[0]!.output[0].code
    // Vite swaps a Node built-in for a stub that throws when used: none may have been imported.
    expect(code).not.toMatch(/__vite[-_]browser[-_]external/)
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.addScriptTag({content: code})
    await page.waitForFunction(() => window.__kit !== undefined, undefined, {timeout: 10_000})
    const result = await page.evaluate(() => window.__kit!)
    expect(result).toEqual({
      text: 'deployed',
      progress: [1, 2],
      asked: 1,
      executions: {deploy: 1},
      resumptions: 1,
    } satisfies KitPageResult)
    expect(errors).toEqual([])
  } finally {
    await browser.close()
  }
}, 30_000)
