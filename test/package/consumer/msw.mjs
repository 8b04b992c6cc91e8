// The testing kit as an adopter's test uses it, with msw 3 (the peer) intercepting fetch: no socket, no server.
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {setupServer} from 'msw/node'
import {ResumableHTTPClientTransport} from 'mcp-resumable-http'
import {createMockMcpServer} from 'mcp-resumable-http/testing'

const {server, handlers} = createMockMcpServer()
const network = setupServer(...handlers)
network.listen({onUnhandledRequest: 'error'})
const client = new Client({name: 'consumer', version: '1.0.0'})
await client.connect(new ResumableHTTPClientTransport(new URL('https://agent.test/mcp')))
const result = await client.callTool({name: 'echo', arguments: {from: 'msw'}})
console.log(JSON.stringify(result.content))
console.log(JSON.stringify(server.executions))
await client.close()
network.close()
