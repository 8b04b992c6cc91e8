/**
 * The README as an adopter reads it, on GitHub and on the npm page: short, in the order that gets them through
 * (what it is, install, the swap, the quick start, recipes, then the reference), the quick start within its first
 * screens. Its code blocks and links are checked with the rest of the docs (test/docs/blocks.test.ts).
 */
import {describe, expect, it} from 'vitest'
import {blocksOf, headingsOf, read} from '../fixtures/markdown.ts'

const readme = read('README.md')
const lines = readme.split('\n')
const sections = headingsOf(readme).filter((heading) => heading.level === 2)
const sectionAt = (title: string) => sections.find((heading) => heading.title === title)

describe('the README', () => {
  it('is a README: at most 400 lines', () => {
    expect(lines.length).toBeLessThanOrEqual(400)
  })

  it('goes from what it is to the reference in the order an adopter needs them', () => {
    const order = [
      'Install',
      'The one-line swap',
      'Quick start',
      'Recipes',
      'Interoperability',
      'Runtimes',
      'Benchmark',
      'Soak',
      'Reference',
    ]
    const titles = sections.map((heading) => heading.title)
    // Other sections may come between these, never before them or out of their order.
    expect(titles.filter((title) => order.includes(title))).toEqual(order)
    expect(titles[0]).toBe('Install')
  })

  it('says what it prevents before anything else: the two field failures, in one table', () => {
    const intro = readme.slice(0, readme.indexOf('## Install'))
    expect(intro.split('\n').filter((line) => line.startsWith('|')).length).toBe(4)
    expect(intro).toContain('outcome-unknown')
  })

  it('keeps its quick start to two commands on a fresh clone, within its first 80 lines, and says they work below the Node floor', () => {
    const quickStart = sectionAt('Quick start')!
    const [block] = blocksOf('README.md').filter(
      (candidate) => candidate.line > quickStart.line && candidate.language === 'sh',
    )
    expect(block!.line).toBeLessThanOrEqual(80)
    expect(
      block!.code
        .trim()
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '')),
    ).toEqual(['npm ci && npm run demo', 'npm test'])
    const floor = (JSON.parse(read('package.json')) as {engines: {node: string}}).engines.node
    expect(readme.slice(0, readme.indexOf('## Quick start'))).toContain(`Node \`${floor}\``)
    expect(lines.slice(block!.line, block!.line + 10).join(' ')).toContain(
      '`scripts/node.mjs` fetches a supported Node',
    )
  })

  it('has a recipe for each thing an adopter does, each with its code', () => {
    const recipes = headingsOf(readme).filter(
      (heading) =>
        heading.level === 3 &&
        heading.line > sectionAt('Recipes')!.line &&
        heading.line < sectionAt('Interoperability')!.line,
    )
    expect(recipes.map((heading) => heading.title)).toEqual([
      'Resume after a restart',
      'In the browser',
      'Testing your client',
      'Fleets: `RedisStore`',
      'Authorization',
      'Browser extensions (Manifest V3)',
      'Both protocol eras',
    ])
    const withCode = new Set(
      blocksOf('README.md')
        .filter((block) => block.language === 'ts')
        .map((block) => block.heading),
    )
    expect(recipes.filter((heading) => !withCode.has(heading.title)).map((heading) => heading.title)).toEqual([])
  })
})
