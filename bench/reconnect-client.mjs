// The client of the reconnects section (bench/reconnects.mjs), in a process of its own: our transport driven by hand,
// its standalone stream reconnected `count` times after a warm-up; sends its heap and listener figures to the parent.
import {getEventListeners} from 'node:events'
import {ResumableHTTPClientTransport} from '../dist/index.js'

const [url, countText] = process.argv.slice(2)
const count = Number(countText)
/** Reconnects before the baseline: code compiled and pools filled on first use are in it. */
const warmUp = 2000

let maxListenersWarnings = 0
process.on('warning', (warning) => {
  if (warning.name === 'MaxListenersExceededWarning') maxListenersWarnings++
})

let reconnects = 0
let waiting
/** Every signal handed to fetch that may still be alive, pruned as they go (holding them all would be the growth). */
let handed = []
/** The length at which `handed` is pruned next: twice what the last pruning left, so that pruning stays O(1) a reconnect
 * however long the signals live between major GCs. */
let pruneAt = 1000
let mostAtFetch = 0
const transport = new ResumableHTTPClientTransport(new URL(url), {
  reconnect: {minDelayMs: 0, maxDelayMs: 10},
  fetch: (input, init) => {
    const {signal} = init
    mostAtFetch = Math.max(mostAtFetch, getEventListeners(signal, 'abort').length)
    handed.push(new WeakRef(signal))
    if (handed.length > pruneAt) {
      handed = handed.filter((ref) => ref.deref() !== undefined)
      pruneAt = Math.max(1000, 2 * handed.length)
    }
    return fetch(input, init)
  },
  onEvent: (event) => {
    if (event.type !== 'reconnect') return
    reconnects++
    if (waiting !== undefined && reconnects >= waiting.at) waiting.resolve()
  },
})
transport.onmessage = () => {}
transport.onerror = (error) => console.error('reconnect client:', error.message)
const reached = (at) => new Promise((resolve) => (waiting = {at, resolve}))
const settle = async () => {
  for (let n = 0; n < 4; n++) {
    globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
const heap = async () => {
  await settle()
  handed = handed.filter((ref) => ref.deref() !== undefined)
  return process.memoryUsage().heapUsed
}
const liveListeners = () =>
  handed.reduce((sum, ref) => sum + (ref.deref() === undefined ? 0 : getEventListeners(ref.deref(), 'abort').length), 0)

await transport.start()
await transport.send({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'reconnects-bench', version: '1'}},
})
transport.setProtocolVersion('2025-11-25')
await transport.send({jsonrpc: '2.0', method: 'notifications/initialized'})
await reached(warmUp)
const start = await heap()
mostAtFetch = 0
const began = performance.now()
await reached(warmUp + count)
const ms = performance.now() - began
const end = await heap()
const live = liveListeners()
await transport.close()
const closed = await heap()
process.send({
  reconnects: reconnects - warmUp,
  ms,
  start,
  end,
  closed,
  listeners: {mostAtFetch, live, liveAfterClose: liveListeners()},
  maxListenersWarnings,
})
process.disconnect()
