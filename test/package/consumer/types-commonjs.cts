// A CommonJS TypeScript module (`.cts`): with `module: nodenext`, TypeScript types the require() of the package.
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport} from 'mcp-resumable-http'

export async function connect(url: URL): Promise<Client> {
  const client = new Client({name: 'consumer', version: '1.0.0'})
  await client.connect(new ResumableHTTPClientTransport(url, {reconnect: {maxAttempts: 3}}))
  return client
}
