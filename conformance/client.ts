/**
 * The client program for the official MCP conformance suite (`@modelcontextprotocol/conformance`): the SDK
 * `Client` (1.32) on this package's transport, or with the argument `sdk` before the URL on the SDK's own
 * `StreamableHTTPClientTransport` (the baseline). The suite starts a mock server, runs
 * `node client.js [sdk] <server URL>` with `MCP_CONFORMANCE_SCENARIO` set (and `MCP_CONFORMANCE_CONTEXT` for
 * pre-registered credentials), and grades what reaches the server. test/interop/conformance.test.ts runs the
 * scenarios `initialize`, `tools_call`, `elicitation-sep1034-client-defaults` and `sse-retry` (suite 0.1.13, Node
 * 20); test/interop/conformance-auth.test.ts the `auth/*` scenarios (suite 0.2.0, Node 22), on both transports.
 */
import {UnauthorizedError} from '@modelcontextprotocol/sdk/client/auth.js'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {OAuthClientInformationMixed} from '@modelcontextprotocol/sdk/shared/auth.js'
import {ElicitRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {ResumableHTTPClientTransport, type FetchLike} from '../src/index.ts'
import {HeadlessOAuthClient} from '../test/fixtures/oauth-client.ts'

const url = process.argv.at(-1)
const scenario = process.env['MCP_CONFORMANCE_SCENARIO']
if (url === undefined || scenario === undefined) {
  console.error('usage: MCP_CONFORMANCE_SCENARIO=<name> node client.js <server URL>')
  process.exit(2)
}

/** Resolves once the standalone GET stream has been answered 200: server requests can reach the client. */
let standaloneOpen: () => void = () => {}
const standalone = new Promise<void>((resolve) => (standaloneOpen = resolve))
const watchingFetch: FetchLike = async (input, init) => {
  const response = await fetch(input, init)
  if (init?.method === 'GET' && response.status === 200) standaloneOpen()
  return response
}

const baseline = process.argv.at(-2) === 'sdk'
// Pre-registered credentials (auth/pre-registration): the client ID, its secret and the issuer they belong to.
const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as {
  client_id?: string
  client_secret?: string
  issuer?: string
}
const authProvider = new HeadlessOAuthClient({
  // SEP-991: a URL-based client ID, used where the authorization server supports it (auth/basic-cimd).
  clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  clientInformation: context.client_id === undefined ? undefined : (context as OAuthClientInformationMixed),
})
const newTransport = (): ResumableHTTPClientTransport | StreamableHTTPClientTransport =>
  baseline
    ? new StreamableHTTPClientTransport(new URL(url), {fetch: watchingFetch, authProvider})
    : new ResumableHTTPClientTransport(new URL(url), {fetch: watchingFetch, authProvider})
let transport = newTransport()
const client = new Client(
  {name: 'mcp-resumable-http-conformance', version: '1.0.0'},
  // SEP-1034: the SDK Client fills in the schema's defaults when the capability says so.
  {capabilities: {elicitation: {form: {applyDefaults: true}}}},
)
client.setRequestHandler(ElicitRequestSchema, () => ({action: 'accept', content: {}}))

const firstText = (result: Awaited<ReturnType<Client['callTool']>>): string => {
  const content = (result.content as {type: string; text?: string}[] | undefined)?.[0]
  return content?.type === 'text' ? (content.text ?? '') : JSON.stringify(result)
}

/** Runs `operation`; when the user must authorize first, completes it with the redirect's code and runs it again. */
async function withLogin<T>(operation: () => Promise<T>, reconnect = false): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || authProvider.codes.length === 0) throw error
    await transport.finishAuth(authProvider.codes.at(-1)!)
    // The SDK transport cannot start twice: a refused connect is retried on a new one, as the SDK's examples do.
    if (reconnect) transport = newTransport()
    return operation()
  }
}

try {
  await withLogin(() => client.connect(transport), true)
  if (scenario.startsWith('auth/')) {
    // Listing needs one scope, calling may need another (auth/scope-step-up).
    const {tools} = await withLogin(() => client.listTools())
    await withLogin(() => client.callTool({name: tools[0]?.name ?? 'test-tool', arguments: {}}))
  } else
    switch (scenario) {
      case 'initialize':
        break
      case 'tools_call': {
        await client.listTools()
        console.log(firstText(await client.callTool({name: 'add_numbers', arguments: {a: 5, b: 3}})))
        break
      }
      case 'elicitation-sep1034-client-defaults': {
        // The server sends elicitation/create on the standalone GET stream: it must be open first.
        await standalone
        console.log(firstText(await client.callTool({name: 'test_client_elicitation_defaults'})))
        break
      }
      case 'sse-retry': {
        // The server closes the call's stream after its priming event (retry: 500): the answer comes on the resume.
        console.log(firstText(await client.callTool({name: 'test_reconnection'})))
        break
      }
      default:
        throw new Error(`Unknown scenario ${scenario}`)
    }
  await client.close()
  process.exit(0)
} catch (error) {
  console.error(error)
  await client.close().catch(() => {})
  process.exit(1)
}
