/**
 * The client program for the official MCP conformance suite (`@modelcontextprotocol/conformance`): the SDK
 * `Client` (1.32) on this package's transport. The suite starts a mock server, runs
 * `node client.js <server URL>` with `MCP_CONFORMANCE_SCENARIO` set, and grades what reaches the server.
 * test/interop-conformance.test.ts builds it and runs the scenarios `initialize`, `tools_call`,
 * `elicitation-sep1034-client-defaults` and `sse-retry`.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ElicitRequestSchema} from '@modelcontextprotocol/sdk/types.js'
import {ResumableHTTPClientTransport, type FetchLike} from '../src/index.ts'

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

const transport = new ResumableHTTPClientTransport(new URL(url), {fetch: watchingFetch})
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

try {
  await client.connect(transport)
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
