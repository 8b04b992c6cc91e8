/**
 * `npm run sim:floor`: what the simulation's real parts cost on their own, the bound under any schedule rate. Each
 * round builds an SDK server (v1 `WebStandardStreamableHTTPServerTransport`) and an SDK 1.x Client, connects them by
 * an in-process `fetch` (real `Request` and `Response` objects), makes nine calls and closes: no fault, no virtual
 * clock, no trace, no invariant. It runs once on this transport and once on the SDK's own.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import {WebStandardStreamableHTTPServerTransport} from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import {parseArgs} from 'node:util'
import {z} from 'zod'
import {ResumableHTTPClientTransport, type FetchLike} from '../src/index.ts'
import {noSchemas, text} from './servers.ts'

const {values} = parseArgs({options: {rounds: {type: 'string', default: '2000'}}})
const rounds = Number(values.rounds)
if (!Number.isSafeInteger(rounds) || rounds < 1)
  throw new TypeError(`--rounds must be a whole number, got ${values.rounds}`)
const url = new URL('http://sim.test/mcp')

/** One round: a server and a Client on `transport`, nine calls (three with two progress events), both closed. */
async function round(transport: (fetch: FetchLike) => Transport): Promise<void> {
  const server = new McpServer({name: 'floor', version: '1'}, {jsonSchemaValidator: noSchemas})
  server.registerTool('increment', {inputSchema: {count: z.number()}}, ({count}) => text(String(count + 1)))
  server.registerTool('slow', {inputSchema: {steps: z.number()}}, async ({steps}, extra) => {
    const progressToken = extra._meta?.progressToken ?? 0
    for (let progress = 1; progress <= steps; progress++)
      await extra.sendNotification({method: 'notifications/progress', params: {progressToken, progress}})
    return text('done')
  })
  const http = new WebStandardStreamableHTTPServerTransport({sessionIdGenerator: () => crypto.randomUUID()})
  await server.connect(http)
  const client = new Client({name: 'floor', version: '1'}, {jsonSchemaValidator: noSchemas})
  await client.connect(transport((input, init) => http.handleRequest(new Request(input, init))))
  await Promise.all(
    Array.from({length: 9}, (_, n) =>
      n % 3 === 0
        ? client.callTool({name: 'slow', arguments: {steps: 2}}, undefined, {onprogress: () => {}})
        : client.callTool({name: 'increment', arguments: {count: n}}),
    ),
  )
  await client.close()
  await server.close()
}

/** Runs `rounds` rounds after a warm-up, and prints their rate per wall and per CPU second. */
async function measure(name: string, transport: (fetch: FetchLike) => Transport): Promise<void> {
  for (let warm = 0; warm < Math.min(200, rounds); warm++) await round(transport)
  const started = performance.now()
  const cpu = process.cpuUsage()
  for (let done = 0; done < rounds; done++) await round(transport)
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const cpuSeconds = (used.user + used.system) / 1e6
  console.log(
    `${name}: ${rounds} rounds of 9 calls, ${Math.round(rounds / seconds)}/s, ${Math.round(rounds / cpuSeconds)} per CPU second`,
  )
}

await measure('this transport', (fetch) => new ResumableHTTPClientTransport(url, {fetch}))
await measure("the SDK's transport", (fetch) => new StreamableHTTPClientTransport(url, {fetch}))
