/**
 * The layout the architecture promises (docs/design.md#layout): no import cycle anywhere in the library, type-only
 * imports included (the lint's import-x/no-cycle sees value imports only), and files small enough to read.
 */
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
