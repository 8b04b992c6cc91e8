/**
 * The reference server serving a test's own tools, resources and prompts, under msw, with the SDK Client on this
 * transport: the faults and the instrumentation work for them as for the built-in tools.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import {setupServer} from 'msw/node'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {
  builtinTools,
  ClientAnswerError,
  createMockMcpServer,
  createReferenceServer,
  type JsonObject,
  type MockMcpServerOptions,
  type ToolDefinition,
} from '../../src/testing/index.ts'

const url = 'https://custom.test/mcp'
const network = setupServer()
beforeAll(() => network.listen({onUnhandledFrame: 'error'}))
afterEach(() => network.resetHandlers())
afterAll(() => network.close())

/** Builds, uploads, asks for confirmation, releases: 4 progress notifications around one elicitation. */
const deploy: ToolDefinition = {
  name: 'deploy',
  description: 'Deploys a service once the user confirms.',
  inputSchema: {type: 'object', properties: {service: {type: 'string'}}, required: ['service']},
  handler: async (args, context) => {
    const service = String(args['service'])
    context.progress(1, 4, 'built')
    context.progress(2, 4, 'uploaded')
    context.log('info', `waiting for confirmation of ${service}`)
    const answer = await context.elicit({
      message: `Deploy ${service}?`,
      requestedSchema: {type: 'object', properties: {confirm: {type: 'boolean'}}, required: ['confirm']},
    })
    context.progress(3, 4, 'switched')
    context.progress(4, 4, 'released')
    const confirmed =
      answer['action'] === 'accept' && (answer['content'] as {confirm?: unknown} | undefined)?.confirm === true
    return {content: [{type: 'text', text: confirmed ? `deployed ${service}` : 'not deployed'}]}
  },
}

interface Agent {
  client: Client
  /** The messages of every elicitation the Client's handler answered. */
  elicited: string[]
  logged: unknown[]
}

async function connect(
  options: MockMcpServerOptions,
): Promise<Agent & {server: ReturnType<typeof createMockMcpServer>['server']}> {
  const {server, handlers} = createMockMcpServer({...options, url})
  network.use(...handlers)
  const elicited: string[] = []
  const logged: unknown[] = []
  const client = new Client({name: 'agent', version: '1.0.0'}, {capabilities: {elicitation: {}}})
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    elicited.push(request.params.message)
    return {action: 'accept', content: {confirm: true}}
  })
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logged.push(notification.params.data)
  })
  await client.connect(new ResumableHTTPClientTransport(new URL(url), {reconnect: {minDelayMs: 1, maxDelayMs: 5}}))
  return {server, client, elicited, logged}
}

describe('a custom tool on the reference server', () => {
  it.each([
    ['before the elicitation reached the client', 3],
    ['right after the elicitation reached the client', 4],
  ])(
    'its stream cut %s: resumed, the tool ran once, the elicitation answered once, each progress once',
    async (_, after) => {
      const {server, client, elicited, logged} = await connect({tools: [deploy]})
      // Events of the POST stream: priming, progress 1, progress 2, the log message, the elicitation, ...
      server.faults.cutNext({after: after + 1, how: 'error', on: 'POST'})
      const progress: number[] = []
      const result = await client.callTool({name: 'deploy', arguments: {service: 'api'}}, undefined, {
        onprogress: ({progress: step}) => progress.push(step),
      })
      expect(result.content).toEqual([{type: 'text', text: 'deployed api'}])
      expect(progress).toEqual([1, 2, 3, 4])
      expect(logged).toEqual(['waiting for confirmation of api'])
      expect(server.executions).toEqual({deploy: 1})
      expect(elicited).toEqual(['Deploy api?'])
      // One answer POSTed for the one elicitation the tool sent.
      expect([...server.answers.values()].map((answers) => answers.length)).toEqual([1])
      // The request log shows the resumption with both headers, for a tool the test declared.
      const resumptions = server.requests('GET').filter((entry) => entry.lastEventId !== undefined)
      expect(resumptions).toEqual([
        expect.objectContaining({
          sessionId: 'session-1',
          lastEventId: expect.stringMatching(/^p\d+_\d+$/),
          status: 200,
        }),
      ])
      expect(server.requests('POST', 'tools/call')).toHaveLength(1)
      await client.close()
    },
  )

  it('lists the declared tools only, with their schemas; the built-in tools can be kept beside them', async () => {
    const alone = await connect({tools: [deploy]})
    expect((await alone.client.listTools()).tools).toEqual([
      {name: 'deploy', description: 'Deploys a service once the user confirms.', inputSchema: deploy.inputSchema},
    ])
    await alone.client.close()
    const both = await connect({tools: [...builtinTools(), deploy]})
    expect((await both.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'echo',
      'increment',
      'slow',
      'ask',
      'deploy',
    ])
    expect((await both.client.callTool({name: 'echo', arguments: {a: 1}})).content).toEqual([
      {type: 'text', text: 'echo: {"a":1}'},
    ])
    await both.client.close()
  })

  it('a call without a required argument is refused (-32602) and the tool does not run', async () => {
    const {server, client} = await connect({tools: [deploy]})
    const error = await client.callTool({name: 'deploy', arguments: {}}).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).code).toBe(-32602)
    expect(server.executions).toEqual({})
    await client.close()
  })

  it('a server request answered with an error rejects with ClientAnswerError; a handler that throws gives a result with isError', async () => {
    const failing: ToolDefinition = {
      name: 'fail',
      handler: async (_, context) => {
        try {
          await context.sample({messages: [], maxTokens: 1})
        } catch (error) {
          // The Client has no sampling handler: it answers with a JSON-RPC error.
          expect(error).toBeInstanceOf(ClientAnswerError)
          throw error
        }
        return {content: []}
      },
    }
    const {server, client} = await connect({tools: [failing]})
    const result = await client.callTool({name: 'fail'})
    expect(result.isError).toBe(true)
    expect((result.content as {text: string}[])[0]!.text).toMatch(
      /^sampling\/createMessage was answered with an error: /,
    )
    expect(server.executions).toEqual({fail: 1})
    await client.close()
  })

  it("a tool samples through the client: the result is the Client handler's, and the request was answered once", async () => {
    const summarize: ToolDefinition = {
      name: 'summarize',
      handler: async (_, context) => {
        const answer = await context.sample({
          messages: [{role: 'user', content: {type: 'text', text: 'Summarize'}}],
          maxTokens: 20,
        })
        return {content: [answer['content'] as JsonObject]}
      },
    }
    const {server, handlers} = createMockMcpServer({tools: [summarize], url})
    network.use(...handlers)
    const client = new Client({name: 'agent', version: '1.0.0'}, {capabilities: {sampling: {}}})
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      model: 'm',
      role: 'assistant',
      content: {type: 'text', text: 'in short'},
    }))
    await client.connect(new ResumableHTTPClientTransport(new URL(url)))
    expect((await client.callTool({name: 'summarize'})).content).toEqual([{type: 'text', text: 'in short'}])
    expect(server.pendingRequests()).toEqual([])
    expect([...server.answers.keys()]).toEqual(['srv-1'])
    await client.close()
  })

  it('malformed or repeated definitions are refused with a TypeError naming them', () => {
    expect(() => createReferenceServer({tools: [deploy, deploy]})).toThrow(
      new TypeError('options.tools: deploy is declared twice'),
    )
    expect(() => createReferenceServer({tools: [{name: '', handler: () => ({content: []})}]})).toThrow(
      new TypeError('options.tools[0].name must be a non-empty string'),
    )
    expect(() => createReferenceServer({resources: [{uri: 'a://b', name: 'b'} as never]})).toThrow(
      new TypeError('options.resources[0].read must be a function'),
    )
  })
})

describe('resources and prompts on the reference server', () => {
  const options: MockMcpServerOptions = {
    tools: [],
    resources: [
      {uri: 'file:///notes.md', name: 'notes', mimeType: 'text/markdown', read: () => '# Notes'},
      {
        uri: 'data://config',
        name: 'config',
        read: () => [{uri: 'data://config', mimeType: 'application/json', text: '{"on":true}'}],
      },
    ],
    prompts: [
      {
        name: 'review',
        description: 'Reviews a change.',
        arguments: [{name: 'change', required: true}, {name: 'tone'}],
        get: (args) => [
          {role: 'user', content: {type: 'text', text: `Review ${args['change']!} (${args['tone'] ?? 'neutral'})`}},
        ],
      },
    ],
  }

  it('declares the capabilities, lists and reads resources, lists and gets prompts', async () => {
    const {client} = await connect(options)
    expect(client.getServerCapabilities()).toEqual({tools: {}, logging: {}, resources: {}, prompts: {}})
    expect((await client.listResources()).resources).toEqual([
      {uri: 'file:///notes.md', name: 'notes', mimeType: 'text/markdown'},
      {uri: 'data://config', name: 'config'},
    ])
    expect((await client.readResource({uri: 'file:///notes.md'})).contents).toEqual([
      {uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes'},
    ])
    expect((await client.readResource({uri: 'data://config'})).contents).toEqual([
      {uri: 'data://config', mimeType: 'application/json', text: '{"on":true}'},
    ])
    expect((await client.listPrompts()).prompts).toEqual([
      {name: 'review', description: 'Reviews a change.', arguments: [{name: 'change', required: true}, {name: 'tone'}]},
    ])
    expect(await client.getPrompt({name: 'review', arguments: {change: '#12'}})).toEqual({
      description: 'Reviews a change.',
      messages: [{role: 'user', content: {type: 'text', text: 'Review #12 (neutral)'}}],
    })
    await client.close()
  })

  it('an unknown resource is -32002, a prompt without its required argument -32602', async () => {
    const {client} = await connect(options)
    const code = (promise: Promise<unknown>): Promise<unknown> =>
      promise.then(
        () => 'resolved',
        (error: unknown) => (error as McpError).code,
      )
    expect(await code(client.readResource({uri: 'file:///nope'}))).toBe(-32002)
    expect(await code(client.getPrompt({name: 'review', arguments: {}}))).toBe(-32602)
    expect(await code(client.getPrompt({name: 'nope'}))).toBe(-32602)
    await client.close()
  })

  it('a server that declares none answers resources and prompts methods -32601', async () => {
    const {client} = await connect({})
    expect(client.getServerCapabilities()).toEqual({tools: {}, logging: {}})
    expect(await client.listPrompts().catch((error: unknown) => (error as McpError).code)).toBe(-32601)
    expect(await client.listResources().catch((error: unknown) => (error as McpError).code)).toBe(-32601)
    await client.close()
  })
})
