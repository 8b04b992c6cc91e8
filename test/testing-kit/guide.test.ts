/**
 * docs/testing.md, run as written: each of its `ts` code blocks is a complete vitest file. Each is written next to
 * this file with the package's own specifiers pointed at the sources (nothing else changes), imported inside a
 * `describe` of its own so that its tests and hooks run here, then deleted.
 */
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

const guide = readFileSync(new URL('../../docs/testing.md', import.meta.url), 'utf8')
const blocks = [...guide.matchAll(/^## (.+)\n[\s\S]*?^```ts\n([\s\S]*?)^```/gm)].map(([, title, code]) => ({title: title!, code: code!}))

/** The package's entry points, as the sources a test of this repository imports. */
const entryPoints: Record<string, string> = {
  'mcp-resumable-http': '../../../src/index.ts',
  'mcp-resumable-http/testing': '../../../src/testing/index.ts',
  'mcp-resumable-http/testing/node': '../../../src/testing/node.ts',
}

const folder = new URL('./.guide/', import.meta.url)

it('the guide has its six examples, each importing the package only by its published names', () => {
  expect(blocks.map((block) => block.title)).toEqual([
    'A stream drops in the middle of your tool',
    'The session expires during a call',
    'The server restarts',
    'A server that gets resumption wrong',
    'Your own server behind the faults',
    'Over real sockets',
  ])
  for (const {code} of blocks) {
    const specifiers = [...code.matchAll(/from '(mcp-resumable-http[^']*)'/g)].map(([, specifier]) => specifier!)
    expect(specifiers.length).toBeGreaterThan(0)
    for (const specifier of specifiers) expect(Object.keys(entryPoints)).toContain(specifier)
  }
})

for (const [index, {title, code}] of blocks.entries()) {
  describe(`docs/testing.md: ${title}`, async () => {
    const source = code.replace(/from '(mcp-resumable-http[^']*)'/g, (_, specifier: string) => `from '${entryPoints[specifier]!}'`)
    mkdirSync(folder, {recursive: true})
    const file = new URL(`example-${index + 1}.ts`, folder)
    writeFileSync(file, source)
    try {
      await import(/* @vite-ignore */ file.href)
    } finally {
      rmSync(file)
    }
  })
}
