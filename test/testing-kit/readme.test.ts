/**
 * The README's "Testing your MCP client" example, run as written: the code between the markers below must be
 * the README's code block, imports aside (here they point at the sources, there at the package).
 */
import {readFileSync} from 'node:fs'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {setupServer} from 'msw/node'
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {createMockMcpServer} from '../../src/testing/index.ts'

describe('README: Testing your MCP client', () => {
  it('the msw example works: the dropped stream is resumed, the tool ran once', async () => {
    // readme:start
    const {server, handlers} = createMockMcpServer({url: 'https://mcp.example/mcp'})
    const network = setupServer(...handlers)
    network.listen()

    const client = new Client({name: 'app', version: '1.0.0'})
    await client.connect(new ResumableHTTPClientTransport(new URL('https://mcp.example/mcp')))
    server.faults.cutNext({after: 3, how: 'error', on: 'POST'}) // the tool's stream drops mid-call
    const result = await client.callTool({name: 'slow', arguments: {steps: 5}}, undefined, {onprogress: () => {}})
    expect(result.content).toEqual([{type: 'text', text: 'done after 5 steps'}])
    expect(server.executions).toEqual({slow: 1}) // resumed, never run twice
    await client.close()
    network.close()
    // readme:end
  })

  it('the README shows that code, word for word', () => {
    const source = readFileSync(new URL(import.meta.url), 'utf8')
    const example = source.slice(source.indexOf('// readme:start\n') + 16, source.indexOf('    // readme:end'))
    const body = example.replace(/^ {4}/gm, '')
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('## Testing your MCP client'))
    const block = /```ts\n([\s\S]*?)```/.exec(section)![1]!
    const code = block.replace(/^import .*\n/gm, '').replace(/^\n/, '')
    expect(code).toBe(body)
  })
})
