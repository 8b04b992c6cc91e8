// The one-line swap, as an adopter writes it, against the reference server of the package's ./testing/node.
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport} from 'mcp-resumable-http'
import {createReferenceServer, listen} from 'mcp-resumable-http/testing/node'

const listening = await listen(createReferenceServer())
const transport = new ResumableHTTPClientTransport(new URL(listening.url))
const client = new Client({name: 'consumer', version: '1.0.0'})
await client.connect(transport)
const result = await client.callTool({name: 'echo', arguments: {from: 'esm'}})
console.log(JSON.stringify(result.content))
await client.close()
await listening.close()
