/**
 * The kit checks the transport, so it must not share its code: the lint configuration (eslint.config.js, as
 * ESLint resolves it for each file) refuses a core internal in src/testing, and a Node built-in outside the
 * Node adapter. Its modules import one another without a cycle.
 */
import {fileURLToPath} from 'node:url'
import {ESLint, Linter} from 'eslint'
import {describe, expect, it} from 'vitest'
import {cycleIn, importGraph} from '../fixtures/imports.ts'

const cwd = fileURLToPath(new URL('../../', import.meta.url))
const eslint = new ESLint({cwd})

/** The messages of the `no-restricted-imports` rule configured for `file`, on `code`. */
async function refusals(file: string, code: string): Promise<string[]> {
  const config = (await eslint.calculateConfigForFile(file)) as Linter.Config
  const rule = config.rules?.['no-restricted-imports']
  const linter = new Linter({cwd})
  const messages = linter.verify(code, [{files: ['**/*.ts'], rules: {'no-restricted-imports': rule ?? 'off'}}], file)
  return messages.map((message) => message.message)
}

describe('the lint keeps the testing kit an independent oracle', () => {
  it('a kit file may import the core only through ../index.ts', async () => {
    expect(await refusals('src/testing/calls.ts', "import {ResumableHTTPClientTransport} from '../index.ts'")).toEqual(
      [],
    )
    expect(await refusals('src/testing/calls.ts', "import {isJsonRpcId} from '../wire/jsonrpc.ts'")).toEqual([
      "'../wire/jsonrpc.ts' import is restricted from being used by a pattern. src/testing imports the core only through ../index.ts.",
    ])
    expect(await refusals('src/testing/proxy.ts', "import {Stream} from '../streams/stream.ts'")).toHaveLength(1)
  })

  it('the Node adapter may use Node built-ins but no core internal; the rest of the kit may use neither', async () => {
    expect(await refusals('src/testing/node.ts', "import {createServer} from 'node:http'")).toEqual([])
    expect(await refusals('src/testing/node.ts', "import {decideReconnect} from '../policy/decision.ts'")).toHaveLength(
      1,
    )
    expect(await refusals('src/testing/server.ts', "import {createServer} from 'node:http'")).toHaveLength(1)
  })
})

it('the kit modules import one another without a cycle', () => {
  const graph = importGraph('src/testing')
  expect(graph.get('server.ts')).toContain('session.ts')
  expect(cycleIn(graph)).toBeUndefined()
  // The check finds a cycle when there is one.
  expect(
    cycleIn(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', ['a.ts']],
      ]),
    ),
  ).toEqual(['a.ts', 'b.ts', 'a.ts'])
})
