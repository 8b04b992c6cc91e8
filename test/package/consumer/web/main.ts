// The one-line swap in a page bundled by Vite; the reference server answers /mcp on the page's origin.
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport} from 'mcp-resumable-http'

const transport = new ResumableHTTPClientTransport(new URL('/mcp', location.href))
const client = new Client({name: 'consumer', version: '1.0.0'})
try {
  await client.connect(transport)
  const result = await client.callTool({name: 'echo', arguments: {from: 'browser'}})
  document.title = JSON.stringify(result.content)
  await client.close()
} catch (error) {
  document.title = `failed: ${String(error)}`
}
