/**
 * The client program for the official MCP conformance suite's 2026-07-28 client scenarios: the v2 SDK `Client`
 * (`@modelcontextprotocol/client`) pinned to the revision the suite names in `MCP_CONFORMANCE_PROTOCOL_VERSION`, on
 * this package's transport, or with the argument `sdk` before the URL on the v2 SDK's own
 * `StreamableHTTPClientTransport` (the baseline). test/interop/conformance-eras.test.ts runs it on both.
 */
import {
  auth,
  Client,
  extractWWWAuthenticateParams,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type Transport,
} from '@modelcontextprotocol/client'
import {ResumableHTTPClientTransport} from '../src/index.ts'
import {HeadlessOAuthClient} from '../test/fixtures/oauth-client.ts'

const url = process.argv.at(-1)
const scenario = process.env['MCP_CONFORMANCE_SCENARIO']
const version = process.env['MCP_CONFORMANCE_PROTOCOL_VERSION'] ?? '2026-07-28'
if (url === undefined || scenario === undefined) {
  console.error('usage: MCP_CONFORMANCE_SCENARIO=<name> node client-v2.js [sdk] <server URL>')
  process.exit(2)
}
const baseline = process.argv.at(-2) === 'sdk'
/** What the scenario asks of the client: pre-registered credentials, or the tool calls to make. */
const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as {
  client_id?: string
  client_secret?: string
  toolCalls?: {name: string; arguments?: Record<string, unknown>}[]
}
const authProvider = scenario.startsWith('auth/')
  ? new HeadlessOAuthClient({
      clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
      clientInformation:
        context.client_id === undefined
          ? undefined
          : {
              client_id: context.client_id,
              ...(context.client_secret === undefined ? {} : {client_secret: context.client_secret}),
            },
    })
  : undefined

type Connection = {transport: Transport; finishAuth: (code: string) => Promise<void>}
function connection(): Connection {
  // The v2 SDK checks the redirect's `iss` (RFC 9207): both transports get the redirect's parameters.
  const iss = (): string | undefined => authProvider?.issuers.at(-1)
  if (baseline) {
    const transport = new StreamableHTTPClientTransport(new URL(url!), authProvider === undefined ? {} : {authProvider})
    return {transport, finishAuth: (code) => transport.finishAuth(code, iss())}
  }
  // The v2 SDK's OAuth client, the one the v2 transport runs.
  const oauthClient = {auth, extractWWWAuthenticateParams, UnauthorizedError}
  const transport = new ResumableHTTPClientTransport(
    new URL(url!),
    authProvider === undefined ? {} : {authProvider, oauthClient},
  )
  return {transport, finishAuth: (code) => transport.finishAuth(code, iss())}
}

const client = new Client(
  {name: 'mcp-resumable-http-conformance-v2', version: '1.0.0'},
  {versionNegotiation: {mode: {pin: version}}, capabilities: {elicitation: {form: {}}}},
)
// sep-2322-client-request-state: a tool answers input_required with an elicitation; the user confirms.
client.setRequestHandler('elicitation/create', () => ({action: 'accept', content: {confirmed: true}}))
let current = connection()

/** Runs `step`; when the user must authorize first, finishes the login with the redirect's code and runs it again. */
async function authorized<T>(step: () => Promise<T>, connecting = false): Promise<T> {
  try {
    return await step()
  } catch (error) {
    const code = authProvider?.codes.at(-1)
    if (code === undefined || !(error instanceof UnauthorizedError)) throw error
    await current.finishAuth(code)
    if (connecting) current = connection()
    return step()
  }
}

async function callEveryTool(): Promise<void> {
  const {tools} = await authorized(() => client.listTools())
  for (const tool of tools)
    await authorized(() => client.callTool({name: tool.name, arguments: {}})).catch((error: unknown) =>
      console.error(error),
    )
}

try {
  await authorized(() => client.connect(current.transport), true)
  switch (scenario) {
    case 'tools_call':
      await client.listTools()
      console.log(JSON.stringify(await client.callTool({name: 'add_numbers', arguments: {a: 5, b: 3}})))
      break
    case 'http-standard-headers': {
      const {tools} = await client.listTools()
      if (tools[0] !== undefined) await client.callTool({name: tools[0].name, arguments: {}})
      const {resources} = await client.listResources()
      if (resources[0] !== undefined) await client.readResource({uri: resources[0].uri})
      const {prompts} = await client.listPrompts()
      if (prompts[0] !== undefined) await client.getPrompt({name: prompts[0].name})
      break
    }
    case 'http-custom-headers':
      await client.listTools()
      for (const call of context.toolCalls ?? [])
        await client.callTool({name: call.name, arguments: call.arguments ?? {}})
      break
    default:
      // The auth scenarios, request-metadata, http-invalid-tool-headers, sep-2322-client-request-state: every tool
      // the Client keeps (it drops those with an invalid x-mcp-header), called once.
      await callEveryTool()
  }
  await client.close()
  process.exit(0)
} catch (error) {
  console.error(error)
  await client.close().catch(() => {})
  process.exit(1)
}
