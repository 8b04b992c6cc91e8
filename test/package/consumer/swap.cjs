// The one-line swap from CommonJS: require() of the ES module (Node 20.19 and later).
const {Client} = require('@modelcontextprotocol/sdk/client/index.js')
const {ResumableHTTPClientTransport} = require('mcp-resumable-http')
const {createReferenceServer, listen} = require('mcp-resumable-http/testing/node')

async function main() {
  const listening = await listen(createReferenceServer())
  const transport = new ResumableHTTPClientTransport(new URL(listening.url))
  const client = new Client({name: 'consumer', version: '1.0.0'})
  await client.connect(transport)
  const result = await client.callTool({name: 'echo', arguments: {from: 'cjs'}})
  console.log(JSON.stringify(result.content))
  await client.close()
  await listening.close()
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
