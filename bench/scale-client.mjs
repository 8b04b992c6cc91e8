// One measured client in a process of its own (forked by bench/scale.mjs with --expose-gc), so that its CPU
// and heap are its own. The SDK Client, unchanged, over real sockets to the reference server.
//
//   {mode: 'sweep', client: 'ours'|'ours+file'|'sdk'|'floor', url, streams, steps, delayMs, bytes?, profile?}
//     `streams` concurrent tools/call of the `slow` tool, each sending `steps` progress notifications
//     `delayMs` apart: client CPU per delivered message, heap per open stream, store writes per message; then
//     for ours (unless `bytes` is false) the same again, counting the bytes handed to the store. With `profile`
//     (a file), a CPU profile of the measured calls is written there.
//   {mode: 'roundtrip', url, calls, rounds}
//     Sequential tools/call `echo` (answered in the first batch, no server request) on MemoryStore and on
//     FileStore (strict), interleaved: milliseconds and store writes per call.
// The result goes back to the parent over IPC.
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {Session} from 'node:inspector/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {MemoryStore, ResumableHTTPClientTransport} from '../dist/index.js'
import {FileStore} from '../dist/node.js'
import {CountingStore} from './counting-store.mjs'
import {FloorTransport} from './floor-transport.mjs'
import {median} from './stats.mjs'

const config = JSON.parse(process.argv[2])
const directory = await mkdtemp(join(tmpdir(), 'mcp-bench-scale-'))
try {
  const result = config.mode === 'roundtrip' ? await roundTrip(config) : await sweep(config)
  process.send(result)
} finally {
  await rm(directory, {recursive: true, force: true})
}
process.disconnect()

/** An SDK Client on `kind`'s transport, connected; ours store through a counting wrapper. */
async function connect(kind, url) {
  let store
  let transport
  if (kind === 'sdk') {
    transport = new StreamableHTTPClientTransport(new URL(url))
  } else if (kind === 'floor') {
    transport = new FloorTransport(new URL(url))
  } else {
    const file = join(directory, `${kind}.json`)
    store = kind === 'ours+file' ? new CountingStore(new FileStore(file), file) : new CountingStore(new MemoryStore())
    transport = new ResumableHTTPClientTransport(new URL(url), {store})
  }
  const client = new Client({name: `bench-${kind}`, version: '1'})
  await client.connect(transport)
  return {client, store}
}

/** gc() twice and the heap in use; also the CPU the collections took, to leave it out of the measure. */
function collect() {
  const before = process.cpuUsage()
  globalThis.gc()
  globalThis.gc()
  const heap = process.memoryUsage().heapUsed
  const cpu = process.cpuUsage(before)
  return {heap, cpuUs: cpu.user + cpu.system}
}

/**
 * `count` concurrent slow calls; `onOpen(open)` runs once every call has delivered its first progress, with
 * the number of calls then still unanswered (all of them, unless the first ones ended before the last began).
 */
async function slowCalls(client, count, steps, delayMs, onOpen = () => {}) {
  let messages = 0
  let waiting = count
  let answered = 0
  let opened
  const allOpen = new Promise((resolve) => (opened = resolve))
  const calls = Array.from({length: count}, async () => {
    let first = true
    const result = await client.callTool({name: 'slow', arguments: {steps, delayMs}}, undefined, {
      timeout: 300_000,
      onprogress: () => {
        messages++
        if (first) {
          first = false
          if (--waiting === 0) opened()
        }
      },
    })
    messages++
    answered++
    return result
  })
  const measured = allOpen.then(() => onOpen(count - answered))
  const results = await Promise.all(calls)
  const open = await measured
  const expected = `done after ${steps} steps`
  if (results.some((r) => r.content?.[0]?.text !== expected)) throw new Error('a slow call answered wrongly')
  return {messages, open}
}

/** Starts the CPU profiler; the function returned stops it and writes the profile to `file`. */
async function startProfiler(file) {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return async () => {
    const {profile} = await session.post('Profiler.stop')
    session.disconnect()
    await writeFile(file, JSON.stringify(profile))
  }
}

async function sweep({client: kind, url, streams, steps, delayMs, bytes = true, profile}) {
  const {client, store} = await connect(kind, url)
  // Warm-up: the code and pools of the measured path are allocated before the baseline.
  await slowCalls(client, Math.min(streams, 20), 3, 1)
  if (store !== undefined) store.countBytes = false
  const baseline = collect()
  const stored = store?.snapshot()
  const stopProfiler = profile === undefined ? undefined : await startProfiler(profile)
  const cpuBefore = process.cpuUsage()
  const began = performance.now()
  // The heap is not sampled while profiling: its forced collections would show in the profile.
  const sample = (unanswered) =>
    profile === undefined ? {...collect(), unanswered} : {heap: NaN, cpuUs: 0, unanswered}
  const {messages, open} = await slowCalls(client, streams, steps, delayMs, sample)
  const ms = performance.now() - began
  const cpu = process.cpuUsage(cpuBefore)
  await stopProfiler?.()
  const writes = store?.since(stored)
  const expected = streams * (steps + 1)
  if (messages !== expected) throw new Error(`${kind} delivered ${messages} of ${expected} messages`)
  let storeBytesPerMessage
  let storeBytesPerWrite
  let diskBytesPerMessage
  let diskBytesPerWrite
  if (store !== undefined && bytes) {
    // A second pass for the bytes, so that serializing what is stored is not counted as the client's CPU.
    store.countBytes = true
    const before = store.snapshot()
    const again = await slowCalls(client, streams, steps, delayMs)
    const written = store.since(before)
    storeBytesPerMessage = written.bytes / again.messages
    storeBytesPerWrite = written.bytes / Math.max(1, written.sets + written.deletes)
    if (kind === 'ours+file') {
      diskBytesPerMessage = written.diskBytes / again.messages
      diskBytesPerWrite = written.diskBytes / Math.max(1, written.sets + written.deletes)
    }
  }
  await client.close()
  return {
    client: kind,
    streams,
    steps,
    delayMs,
    messages,
    ms,
    cpuUsPerMessage: (cpu.user + cpu.system - open.cpuUs) / messages,
    // Per stream open when the heap was measured: calls already answered are garbage, collected by then.
    openAtSample: open.unanswered,
    heapPerStreamKiB: (open.heap - baseline.heap) / open.unanswered / 1024,
    storeWritesPerMessage: writes === undefined ? undefined : (writes.sets + writes.deletes) / messages,
    storeBytesPerMessage,
    storeBytesPerWrite,
    diskBytesPerMessage,
    diskBytesPerWrite,
  }
}

async function roundTrip({url, calls, rounds}) {
  const clients = {memory: await connect('ours', url), file: await connect('ours+file', url)}
  const perRound = {memory: [], file: []}
  const writes = {memory: [], file: []}
  for (let round = 0; round <= rounds; round++) {
    // Alternate which store goes first, so that neither always runs on a warmer machine.
    const order = round % 2 === 0 ? ['memory', 'file'] : ['file', 'memory']
    for (const name of order) {
      const {client, store} = clients[name]
      const stored = store.snapshot()
      const began = performance.now()
      for (let i = 0; i < calls; i++) await client.callTool({name: 'echo', arguments: {text: 'hi'}})
      const ms = (performance.now() - began) / calls
      // The store's last writes may land after the answer: let them finish, and count them with this round.
      await new Promise((resolve) => setTimeout(resolve, 20))
      const written = store.since(stored)
      if (round === 0) continue
      perRound[name].push(ms)
      writes[name].push({perCall: (written.sets + written.deletes) / calls, bytesPerCall: written.bytes / calls})
    }
  }
  for (const {client} of Object.values(clients)) await client.close()
  const summary = (name) => ({
    msPerCall: median(perRound[name]),
    writesPerCall: median(writes[name].map((w) => w.perCall)),
    bytesPerCall: median(writes[name].map((w) => w.bytesPerCall)),
  })
  const fileOverMemory = perRound.file.map((ms, i) => ms / perRound.memory[i])
  return {calls, rounds, memory: summary('memory'), file: summary('file'), fileOverMemory: median(fileOverMemory)}
}
