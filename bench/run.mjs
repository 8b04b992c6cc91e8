// `npm run bench`: ResumableHTTPClientTransport against the SDK's StreamableHTTPClientTransport and a raw
// fetch + eventsource-parser baseline, over real sockets to a server in a child process.
//
// Options (all optional):
//   --stream-events=N   events per throughput stream            (default 200000)
//   --rounds=N          measured rounds, after one warm-up       (default 7)
//   --echo-requests=N   sequential requests per round-trip round (default 2000)
//   --heap-events=N     events of the heap test stream           (default 1000000)
//   --reconnects=N      reconnects of the standalone stream      (default 100000)
//   --only=LIST         sections: stream,echo,heap,memory,reconnects,roundtrip,sweep,fleet (default all), and profile
//   --clients=LIST      clients of stream and echo: ours,ours+file,ours+otel,sdk,raw,wire (default all)
//   --quick             fewer events, requests and rounds everywhere: about a minute
//   --profile           also profile ours with 1,000 open streams (the measured calls): top self-time functions
//   --sweep-repeat=N    run the sweep's largest size N times per client, its figures from the median (default 1)
//
// stream, echo, heap: the transports driven by hand against bench/server.mjs (a minimal server, so that the client is
// the limit). memory: what a hostile server can make the client hold (bench/memory.mjs). reconnects: the heap and abort
// listeners over many reconnects of the standalone stream (bench/reconnects.mjs). roundtrip, sweep, profile: the SDK
// Client against the library's reference server, each measured client in a process of its own (bench/scale.mjs).
//
// Profiling our hot path:  node --cpu-prof --cpu-prof-dir=/tmp/bench-prof bench/run.mjs --only=stream --clients=ours
import {fork, spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import os from 'node:os'
import {fileURLToPath} from 'node:url'
import {fmt, mapValues, median, percentile, round, verdict} from './stats.mjs'
import {memoryBoundMb, memorySection} from './memory.mjs'
import {printReconnects, reconnectsSection} from './reconnects.mjs'
import {
  printScaleSummary,
  profileSection,
  roundTripSection,
  startReferenceServer,
  sweepPlans,
  sweepSection,
} from './scale.mjs'

const self = fileURLToPath(import.meta.url)
const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [key, value = 'true'] = arg.replace(/^--/, '').split('=')
    return [key, value]
  }),
)
const quick = args['quick'] === 'true'
const sections = new Set((args['only'] ?? 'stream,echo,heap,memory,reconnects,roundtrip,sweep,fleet').split(','))
if (args['profile'] === 'true') sections.add('profile')

if (typeof globalThis.gc !== 'function' && sections.has('heap')) {
  // The heap test needs global.gc(): run again with --expose-gc.
  const child = spawn(process.execPath, ['--expose-gc', ...process.execArgv, self, ...process.argv.slice(2)], {
    stdio: 'inherit',
  })
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
} else {
  await main()
}

async function main() {
  const config = {
    quick,
    streamEvents: Number(args['stream-events'] ?? (quick ? 50_000 : 200_000)),
    rounds: Number(args['rounds'] ?? (quick ? 3 : 7)),
    echoRequests: Number(args['echo-requests'] ?? (quick ? 500 : 2000)),
    heapEvents: Number(args['heap-events'] ?? (quick ? 250_000 : 1_000_000)),
    reconnects: Number(args['reconnects'] ?? (quick ? 20_000 : 100_000)),
    roundTrip: {calls: quick ? 100 : 200, rounds: quick ? 3 : 5},
    sweep: quick ? sweepPlans.quick : sweepPlans.full,
    sweepRepeat: Number(args['sweep-repeat'] ?? 1),
    clients: (args['clients'] ?? 'ours,ours+file,ours+otel,sdk,raw,wire').split(','),
    sections: [...sections],
  }
  // Loaded here, after the re-spawn decision, so that a missing build fails in the process that reports it.
  const {createOurs, createOursFile, createOursOtel, createSdk, createRaw, createWire} = await import('./clients.mjs')
  const factories = {
    ours: createOurs,
    'ours+file': createOursFile,
    'ours+otel': createOursOtel,
    sdk: createSdk,
    raw: createRaw,
    wire: createWire,
  }
  for (const name of config.clients) {
    if (!(name in factories)) throw new Error(`unknown client ${name}: use ${Object.keys(factories).join(', ')}`)
  }

  const server = await startServer()
  const cleanup = () => server.child.kill()
  process.on('exit', cleanup)
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      cleanup()
      process.exit(130)
    })
  }

  const results = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    config,
  }
  const missed = []
  const began = performance.now()
  try {
    console.log(`bench server pid ${server.child.pid} on ${server.url}`)
    console.log(`node ${process.version}, ${results.cpus} cpus (${results.cpuModel})\n`)
    const clients = []
    for (const name of config.clients) clients.push(await factories[name](server.url))

    if (sections.has('stream')) results.stream = await streamSection(clients, config, missed)
    if (sections.has('echo'))
      results.echo = await echoSection(
        clients.filter((c) => c.echo),
        config,
        missed,
      )
    for (const client of clients) await client.close()
    for (const client of clients) {
      if (client.errors.length > 0) console.log(`${client.name} reported errors:`, client.errors.slice(0, 3))
    }
    if (sections.has('heap')) results.heap = await heapSection(factories.ours, server.url, config, missed)
    if (sections.has('memory')) results.memory = await memorySection(quick, missed)
    if (sections.has('reconnects')) results.reconnects = await reconnectsSection(config.reconnects, missed)
    if (sections.has('fleet'))
      results.fleet = await (await import('./fleet.mjs')).fleetSection(server.url, config, missed)
    if (['roundtrip', 'sweep', 'profile'].some((name) => sections.has(name))) {
      const reference = await startReferenceServer()
      try {
        if (sections.has('roundtrip'))
          results.roundTrip = await roundTripSection(reference.url, config.roundTrip, missed)
        if (sections.has('sweep'))
          results.sweep = await sweepSection(reference.url, config.sweep, missed, config.sweepRepeat)
        if (sections.has('profile')) results.profile = await profileSection(reference.url, config.sweep.at(-1))
      } finally {
        reference.stop()
      }
    }

    results.seconds = round((performance.now() - began) / 1000, 1)
    results.targetsMissed = missed
    printSummary(results, missed)
    const file = fileURLToPath(new URL('./results.json', import.meta.url))
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
    console.log(`\nwrote ${file} (${results.seconds} s in all)`)
  } finally {
    server.child.send({type: 'stop'})
    server.child.disconnect()
  }
}

function startServer() {
  const child = fork(fileURLToPath(new URL('./server.mjs', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`bench server exited early (${code})`)))
    child.once('message', (message) => {
      if (message?.type !== 'listening') return reject(new Error(`unexpected message ${JSON.stringify(message)}`))
      resolve({child, url: `http://127.0.0.1:${message.port}/mcp`})
    })
  })
}

/** Runs `fn(client, round)` for every client, every round; the order rotates so no client always goes first. */
async function interleaved(clients, rounds, fn) {
  const perClient = Object.fromEntries(clients.map((c) => [c.name, []]))
  for (let round = 0; round <= rounds; round++) {
    const order = clients.map((_, i) => clients[(i + round) % clients.length])
    for (const client of order) {
      const value = await fn(client, round)
      if (round > 0) perClient[client.name].push(value)
    }
  }
  return perClient
}

async function streamSection(clients, config, missed) {
  const count = config.streamEvents
  let bytesPerStream
  console.log(`stream throughput: ${count} events per stream, 1 warm-up + ${config.rounds} rounds`)
  const perClient = await interleaved(clients, config.rounds, async (client, round) => {
    const cpuBefore = process.cpuUsage()
    const {events, ms, bytes} = await client.stream(count)
    const cpu = process.cpuUsage(cpuBefore)
    if (events !== count) throw new Error(`${client.name} received ${events} of ${count} notifications`)
    const rate = (events / ms) * 1000
    const cpuUsPerEvent = (cpu.user + cpu.system) / events
    if (bytes !== undefined) bytesPerStream = bytes
    console.log(
      `  ${round === 0 ? 'warm-up' : `round ${round}`}  ${client.name.padEnd(9)} ${fmt(rate).padStart(10)} events/s  (${ms.toFixed(0)} ms, client CPU ${cpuUsPerEvent.toFixed(2)} µs/event)`,
    )
    return {rate, cpuUsPerEvent}
  })
  const cpuPerEvent = mapValues(perClient, (rounds) => round(median(rounds.map((r) => r.cpuUsPerEvent)), 3))
  // What telemetry costs each event when it is used: the client's CPU per event, instrumented over plain.
  const cpuRatios = {}
  if (cpuPerEvent.ours && cpuPerEvent['ours+otel'])
    cpuRatios['ours+otel/ours'] = round(cpuPerEvent['ours+otel'] / cpuPerEvent.ours, 3)
  for (const name of Object.keys(perClient)) perClient[name] = perClient[name].map((r) => r.rate)
  const medians = Object.fromEntries(Object.entries(perClient).map(([name, rates]) => [name, median(rates)]))
  const ratios = {}
  // Paired: the ratio within each round, then its median (less sensitive to a slow round).
  const paired = {}
  for (const [a, b] of [
    ['ours', 'raw'],
    ['sdk', 'raw'],
    ['ours', 'sdk'],
    ['ours+file', 'ours'],
    ['ours+otel', 'ours'],
  ]) {
    if (!perClient[a] || !perClient[b]) continue
    ratios[`${a}/${b}`] = medians[a] / medians[b]
    paired[`${a}/${b}`] = median(perClient[a].map((r, i) => r / perClient[b][i]))
  }
  // Persistence (a FileStore, cursors stored before delivery) may cost at most 20% of throughput.
  const target = {'ours/raw': 0.9, 'ours+file/ours': 0.8}
  for (const [ratio, floor] of Object.entries(target)) {
    if (ratios[ratio] !== undefined && ratios[ratio] < floor)
      missed.push(`stream throughput ${ratio} ${ratios[ratio].toFixed(3)} < ${floor}`)
  }
  console.log()
  return {
    events: count,
    bytesPerStream,
    unit: 'events/s',
    rounds: mapValues(perClient, (rates) => rates.map((r) => Math.round(r))),
    median: mapValues(medians, Math.round),
    clientCpuUsPerEvent: cpuPerEvent,
    clientCpuRatios: cpuRatios,
    ratios: mapValues(ratios, (r) => round(r, 3)),
    pairedRatios: mapValues(paired, (r) => round(r, 3)),
    target,
  }
}

async function echoSection(clients, config, missed) {
  const n = config.echoRequests
  console.log(`request round trip: ${n} sequential tools/call echo per client, 1 warm-up + ${config.rounds} rounds`)
  const perClient = await interleaved(clients, config.rounds, async (client, round) => {
    const latencies = new Array(n)
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < n; i++) latencies[i] = await client.echo()
    const total = performance.now() - start
    const cpu = process.cpuUsage(cpuBefore)
    const result = {
      medianMs: median(latencies),
      meanMs: total / n,
      p99Ms: percentile(latencies, 0.99),
      cpuMs: (cpu.user + cpu.system) / 1000 / n,
    }
    console.log(
      `  ${round === 0 ? 'warm-up' : `round ${round}`}  ${client.name.padEnd(9)} median ${us(result.medianMs)}  mean ${us(result.meanMs)}  p99 ${us(result.p99Ms)}  client CPU ${us(result.cpuMs)}/req`,
    )
    return result
  })
  const summary = mapValues(perClient, (rounds) =>
    Object.fromEntries(
      ['medianMs', 'meanMs', 'p99Ms', 'cpuMs'].map((key) => [key, round(median(rounds.map((r) => r[key])), 4)]),
    ),
  )
  const ratios = {}
  if (summary.ours && summary.sdk) {
    ratios['ours/sdk median'] = round(summary.ours.medianMs / summary.sdk.medianMs, 3)
    ratios['ours/sdk mean'] = round(summary.ours.meanMs / summary.sdk.meanMs, 3)
    ratios['ours/sdk cpu'] = round(summary.ours.cpuMs / summary.sdk.cpuMs, 3)
  }
  let pairedRange
  if (perClient.ours && perClient.sdk) {
    // Within each round, then the spread over rounds: how much of the difference is noise.
    const perRound = perClient.ours.map((r, i) => r.medianMs / perClient.sdk[i].medianMs)
    pairedRange = {
      min: round(Math.min(...perRound), 3),
      median: round(median(perRound), 3),
      max: round(Math.max(...perRound), 3),
    }
  }
  if (summary.ours && summary['ours+otel']) {
    // What telemetry costs a call when it is used: the whole round trip, and the client's CPU.
    ratios['ours+otel/ours median'] = round(summary['ours+otel'].medianMs / summary.ours.medianMs, 3)
    ratios['ours+otel/ours cpu'] = round(summary['ours+otel'].cpuMs / summary.ours.cpuMs, 3)
  }
  if (summary.ours && summary.raw) ratios['ours/raw median'] = round(summary.ours.medianMs / summary.raw.medianMs, 3)
  if (summary.sdk && summary.raw) ratios['sdk/raw median'] = round(summary.sdk.medianMs / summary.raw.medianMs, 3)
  const target = {'ours/sdk median': 1.0}
  if (ratios['ours/sdk median'] !== undefined && ratios['ours/sdk median'] > target['ours/sdk median']) {
    missed.push(
      `request round trip ours/sdk ${ratios['ours/sdk median'].toFixed(2)} > ${target['ours/sdk median']} (ours slower)`,
    )
  }
  const sdk = clients.find((c) => c.name === 'sdk')
  const sdkAbortListeners = sdk?.abortListeners?.()
  if (sdkAbortListeners !== undefined)
    console.log(
      `  sdk: ${sdkAbortListeners} abort listeners on its long-lived AbortSignal now (undici frees them only at GC)`,
    )
  console.log()
  return {
    requests: n,
    sdkAbortListeners,
    rounds: mapValues(perClient, (rounds) => rounds.map((r) => mapValues(r, (v) => round(v, 4)))),
    median: summary,
    ratios,
    pairedOursSdkMedian: pairedRange,
    target,
  }
}

async function heapSection(createOurs, url, config, missed) {
  const total = config.heapEvents
  console.log(`heap: ours, one stream of ${total} events, heapUsed after gc()`)
  const client = await createOurs(url)
  const samples = []
  const sample = (label, events) => {
    globalThis.gc()
    globalThis.gc()
    const {heapUsed} = process.memoryUsage()
    samples.push({label, events, heapUsedMiB: round(heapUsed / 2 ** 20, 2)})
    console.log(
      `  ${label.padEnd(8)} ${String(events).padStart(8)} events  heapUsed ${(heapUsed / 2 ** 20).toFixed(2)} MiB`,
    )
  }
  // Sample from inside onmessage at each quarter of the stream: the stream is live, its state is in the heap.
  const marks = new Map([0.25, 0.5, 0.75].map((f) => [Math.round(total * f), `${f * 100}%`]))
  const inner = client.transport.onmessage
  let seen = 0
  client.transport.onmessage = (message, extra) => {
    inner(message, extra)
    const mark = marks.get(++seen)
    if (mark !== undefined) sample(mark, seen)
  }
  // One short stream first, so that code and pools allocated on first use are in the baseline.
  await client.stream(1000)
  seen = 0
  sample('start', 0)
  const {events, ms} = await client.stream(total)
  if (events !== total) throw new Error(`ours received ${events} of ${total} notifications`)
  sample('end', events)
  await client.close()
  sample('closed', events)
  const start = samples.find((s) => s.label === 'start').heapUsedMiB
  const end = samples.find((s) => s.label === 'end').heapUsedMiB
  const half = samples.find((s) => s.label === '50%')?.heapUsedMiB
  const growthMiB = round(end - start, 2)
  const limitMiB = 10
  if (growthMiB > limitMiB) missed.push(`heap grew ${growthMiB} MiB over ${total} events (> ${limitMiB} MiB)`)
  if (client.errors.length > 0) console.log('  ours reported errors:', client.errors.slice(0, 3))
  console.log()
  return {
    events: total,
    eventsPerSecond: Math.round((events / ms) * 1000),
    samples,
    growthMiB,
    growthToHalfMiB: half === undefined ? undefined : round(half - start, 2),
    limitMiB,
  }
}

function printSummary(results, missed) {
  const line = '─'.repeat(78)
  console.log(line)
  console.log('SUMMARY')
  console.log(line)
  const {stream, echo, heap} = results
  if (stream) {
    console.log(
      `stream throughput (${stream.events} events/stream, ~${Math.round((stream.bytesPerStream ?? 0) / stream.events)} B/event, median of ${results.config.rounds})`,
    )
    for (const [name, rate] of Object.entries(stream.median)) {
      console.log(
        `  ${name.padEnd(9)} ${fmt(rate).padStart(12)} events/s   client CPU ${stream.clientCpuUsPerEvent[name].toFixed(2)} µs/event`,
      )
    }
    for (const [name, ratio] of Object.entries(stream.ratios)) {
      const target = stream.target[name]
      const met = target === undefined ? '' : `  target ≥ ${target}  ${verdict((v) => v >= target, ratio)}`
      console.log(
        `  ${name.padEnd(14)} ${ratio.toFixed(3)}   (paired ${stream.pairedRatios[name]?.toFixed(3) ?? '-'})${met}`,
      )
    }
    for (const [name, ratio] of Object.entries(stream.clientCpuRatios ?? {}))
      console.log(`  ${name.padEnd(14)} ${ratio.toFixed(3)}   (client CPU per event)`)
  }
  if (echo) {
    console.log(`request round trip (${echo.requests} sequential requests/round, median of ${results.config.rounds})`)
    for (const [name, s] of Object.entries(echo.median)) {
      console.log(
        `  ${name.padEnd(6)} median ${us(s.medianMs)}  mean ${us(s.meanMs)}  p99 ${us(s.p99Ms)}  client CPU ${us(s.cpuMs)}/req`,
      )
    }
    for (const [name, ratio] of Object.entries(echo.ratios)) {
      const target = echo.target[name]
      const met = target === undefined ? '' : `  target ≤ ${target}  ${verdict((v) => v <= target, ratio)}`
      console.log(`  ${name.padEnd(16)} ${ratio.toFixed(3)}${met}`)
    }
    const range = echo.pairedOursSdkMedian
    if (range)
      console.log(
        `  ours/sdk median per round: ${range.min.toFixed(3)} … ${range.max.toFixed(3)} (median ${range.median.toFixed(3)})`,
      )
  }
  if (heap) {
    console.log(`heap (ours, ${heap.events} events in one stream, ${fmt(heap.eventsPerSecond)} events/s)`)
    console.log(`  ${heap.samples.map((s) => `${s.label} ${s.heapUsedMiB}`).join(' · ')} MiB`)
    console.log(
      `  growth start→end ${heap.growthMiB} MiB  limit ${heap.limitMiB} MiB  ${verdict((v) => v <= heap.limitMiB, heap.growthMiB)}`,
    )
  }
  if (results.memory) {
    console.log('memory (RSS above baseline right after a full GC, at its highest while the server pushes)')
    for (const {what, retainedMb} of Object.values(results.memory)) {
      console.log(
        `  ${what.padEnd(36)} ${fmt(retainedMb).padStart(4)} MB  bound ${memoryBoundMb} MB  ${verdict((v) => v <= memoryBoundMb, retainedMb)}`,
      )
    }
  }
  if (results.reconnects) printReconnects(results.reconnects)
  printScaleSummary(results)
  console.log(line)
  if (missed.length === 0) console.log('all targets met: PASS')
  for (const m of missed) console.log(`FAIL: ${m}`)
}

function us(ms) {
  return `${(ms * 1000).toFixed(0).padStart(5)} µs`
}
