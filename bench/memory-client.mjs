// One scenario of the memory section (bench/memory.mjs), in a process of its own: the SDK Client on our
// transport, RSS sampled from after connecting; sends {peak, retained, after, extra} to the parent.
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {ResumableHTTPClientTransport} from '../dist/index.js'

const [scenario, url, countText] = process.argv.slice(2)
const count = Number(countText)
const limits = {}
const transport = new ResumableHTTPClientTransport(new URL(url), {
  reconnect: {minDelayMs: 10, maxDelayMs: 100},
  ...(process.env.MEMORY_LIMITS === undefined ? {} : {limits: JSON.parse(process.env.MEMORY_LIMITS)}),
  onEvent: (event) => {
    if (event.type === 'limit-exceeded') limits[event.limit] = (limits[event.limit] ?? 0) + 1
  },
})
// The answers to the server's pings that went through: the Client answers each one itself.
let answered = 0
const send = transport.send.bind(transport)
transport.send = async (message, options) => {
  await send(message, options)
  if (typeof message.id === 'string' && message.id.startsWith('ping-') && 'result' in message) answered++
}
const client = new Client({name: 'memory-bench', version: '1'})
await client.connect(transport)

const rss = () => process.memoryUsage.rss()
const settle = async () => {
  for (let n = 0; n < 3; n++) {
    globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
await settle()
const baseline = rss()
// `peak`: the highest RSS seen, garbage included (V8 collects lazily, so it says more of the heap's growth
// policy than of what the transport holds); `retained`: the highest RSS right after a full GC, sampled
// every 250 ms: what the transport keeps alive, the figure with a bound.
let peak = 0
let retained = 0
const sampler = setInterval(() => (peak = Math.max(peak, rss() - baseline)), 10)
const collector = setInterval(() => {
  globalThis.gc()
  retained = Math.max(retained, rss() - baseline)
}, 250)

const started = performance.now()
if (scenario === 'pings') {
  while (answered < count) await new Promise((resolve) => setTimeout(resolve, 20))
} else {
  await client.callTool({name: 'flood'}, undefined, {onprogress: () => {}, timeout: 600_000})
}
const seconds = (performance.now() - started) / 1000
peak = Math.max(peak, rss() - baseline)
clearInterval(sampler)
clearInterval(collector)
await settle()
const after = rss() - baseline
await client.close()
process.send({peak, retained, after, extra: {seconds, limitsExceeded: limits}}, () => process.exit(0))
