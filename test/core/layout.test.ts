/**
 * The layout the architecture promises (docs/design.md#layout): no import cycle anywhere in the library, type-only
 * imports included (the lint's import-x/no-cycle sees value imports only), and files small enough to read.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {cycleIn, importGraph, linesOf} from '../fixtures/imports.ts'

describe('the layout of src/', () => {
  it('has no import cycle, type-only imports included', () => {
    const graph = importGraph('src')
    expect(graph.get('transport.ts')).toContain('session.ts')
    expect(graph.get('streams/lifecycle.ts')).toContain('decision.ts')
    expect(cycleIn(graph)).toBeUndefined()
  })

  it('keeps the decision a leaf that imports nothing', () => {
    expect(importGraph('src').get('decision.ts')).toEqual([])
  })

  it('keeps transport.ts, the SDK adapter, within 300 lines and every other file within 400', () => {
    expect(linesOf('src/transport.ts')).toBeLessThanOrEqual(300)
    const long = [...importGraph('src').keys()].filter((file) => linesOf(`src/${file}`) > 400)
    expect(long).toEqual([])
  })
})

describe('the tests', () => {
  it('are titled with sentences of behaviour, never with a label that points at a document outside the repository', () => {
    const folder = new URL('../', import.meta.url)
    const files = (readdirSync(folder, {recursive: true}) as string[]).filter((file) => file.endsWith('.test.ts'))
    const titles = files.flatMap((file) => [...readFileSync(new URL(file, folder), 'utf8').matchAll(/\b(?:it|test|describe)(?:\.each\(.*?\))?\(\s*['"`]([^'"`]*)/g)].map(([, title]) => `${file}: ${title}`))
    expect(titles.length).toBeGreaterThan(1000)
    // Labels such as `B12:`, `F35:`, `3.g:`, `3.g/3.k:` or `3.g property` named the sections of notes kept elsewhere.
    expect(titles.filter((title) => /: (?:[A-Z]{1,2}\d+[a-z]?:|\d+\.[a-z]\b)/.test(title))).toEqual([])
  })
})
