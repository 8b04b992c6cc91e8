/**
 * The page of test/testing-kit/browser.test.ts, bundled by Vite for the browser and run in headless Chromium: the
 * testing kit (`./testing`) in a page, with no network. The SDK Client's transport fetches through a fault proxy
 * in front of a reference server that serves a custom tool; the proxy cuts the tool's stream mid-call. What the
 * test checks is on `window.__kit`.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ElicitRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {createFaultProxy, createReferenceServer, type ToolDefinition} from '../../src/testing/index.ts'

export interface KitPageResult {
  text?: string | undefined
  progress?: number[]
  asked?: number
  executions?: Record<string, number>
  /** GETs with `Last-Event-ID`, as the proxy logged them. */
  resumptions?: number
  error?: string
}

declare global {
  interface Window {
    __kit?: KitPageResult
  }
}

const deploy: ToolDefinition = {
  name: 'deploy',
  handler: async (_, context) => {
    context.progress(1, 2)
    const answer = await context.elicit({
      message: 'Deploy?',
      requestedSchema: {type: 'object', properties: {confirm: {type: 'boolean'}}},
    })
    context.progress(2, 2)
    return {content: [{type: 'text', text: answer['action'] === 'accept' ? 'deployed' : 'not deployed'}]}
  },
}

async function run(): Promise<KitPageResult> {
  const server = createReferenceServer({tools: [deploy]})
  const proxy = createFaultProxy((request) => server.handle(request))
  let asked = 0
  const client = new Client({name: 'page', version: '1.0.0'}, {capabilities: {elicitation: {}}})
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked++
    return {action: 'accept', content: {confirm: true}}
  })
  const transport = new ResumableHTTPClientTransport(new URL('https://kit.test/mcp'), {
    fetch: (url, init) => proxy.handle(new Request(url, init)),
    reconnect: {minDelayMs: 1, maxDelayMs: 5},
  })
  await client.connect(transport)
  proxy.faults.cutNext({after: 2, how: 'error', on: 'POST'}) // the priming event, progress 1, then the drop
  const progress: number[] = []
  const result = await client.callTool({name: 'deploy'}, undefined, {
    onprogress: (update) => progress.push(update.progress),
  })
  await client.close()
  return {
    text: (result.content as {text: string}[])[0]?.text,
    progress,
    asked,
    executions: {...server.executions},
    resumptions: proxy.requests('GET').filter((entry) => entry.lastEventId !== undefined).length,
  }
}

run().then(
  (result) => (window.__kit = result),
  (error: unknown) => (window.__kit = {error: String(error)}),
)
