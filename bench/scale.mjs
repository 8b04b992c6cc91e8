// The persistence and concurrency sections of `npm run bench`: the SDK Client over real sockets to the
// library's reference server, each measured client in a child process of its own (bench/scale-client.mjs), so
// that client CPU and heap are attributable. Store writes are counted by a wrapper around the real store.
//
// Connections: Node's fetch (undici's global Agent) opens as many connections per origin as there are
// requests in flight (`connections` is unlimited by default), on our transport and the SDK's alike, so N open
// streams are N sockets on each side. The default file-descriptor limit (`ulimit -n`) must exceed the
// largest N plus a few dozen; the run checks it rather than raising it.
import {fork} from 'node:child_process'
import {mkdtemp, readFile, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {verdict} from './stats.mjs'

const here = (file) => fileURLToPath(new URL(file, import.meta.url))

/** Streams open at once, and how many progress notifications each sends how far apart. */
export const sweepPlans = {
  full: [
    {streams: 1, steps: 100, delayMs: 10},
    {streams: 10, steps: 50, delayMs: 20},
    {streams: 100, steps: 30, delayMs: 50},
    // Each call lasts 5 s, so that all 1,000 are open at once even when opening them takes seconds.
    {streams: 1000, steps: 10, delayMs: 500},
  ],
  quick: [
    {streams: 1, steps: 30, delayMs: 10},
    {streams: 10, steps: 20, delayMs: 20},
    {streams: 100, steps: 10, delayMs: 50},
    {streams: 1000, steps: 4, delayMs: 1000},
  ],
}
// `floor`: the least a transport must do (bench/floor-transport.mjs), to show what the ratios leave this one.
const sweepClients = ['ours', 'ours+file', 'sdk', 'floor']

export async function startReferenceServer() {
  const child = fork(here('./reference-server.mjs'), [], {stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: []})
  const url = await new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`reference server exited early (${code})`)))
    child.once('message', (message) => resolve(message.url))
  })
  return {child, url, stop: () => child.kill()}
}

/** Runs one measured client in its own process and resolves with what it reports. */
function runClient(config, execArgv = []) {
  const child = fork(here('./scale-client.mjs'), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: ['--expose-gc', ...execArgv],
  })
  return new Promise((resolve, reject) => {
    let result
    child.on('message', (message) => (result = message))
    child.once('error', reject)
    child.once('exit', (code) =>
      result !== undefined && code === 0
        ? resolve(result)
        : reject(new Error(`bench client ${JSON.stringify(config)} exited with ${code}`)),
    )
  })
}

export async function roundTripSection(url, {calls, rounds}, missed) {
  console.log(
    `tool-call round trip: ${calls} sequential tools/call echo per round, SDK Client, ours on MemoryStore and FileStore (strict), 1 warm-up + ${rounds} rounds`,
  )
  const result = await runClient({mode: 'roundtrip', url, calls, rounds})
  const figures = [
    {name: 'round trip, FileStore (strict) / MemoryStore', value: result.fileOverMemory, target: 1.3, unit: '×'},
    {name: 'store writes per plain tool call (FileStore)', value: result.file.writesPerCall, target: 1, unit: ''},
  ]
  printRoundTrip(result)
  printFigures(figures, missed)
  console.log()
  return {...result, figures}
}

function printRoundTrip(result) {
  for (const [name, label] of [
    ['memory', 'MemoryStore'],
    ['file', 'FileStore'],
  ]) {
    const s = result[name]
    console.log(
      `  ${label.padEnd(11)} ${(s.msPerCall * 1000).toFixed(0).padStart(5)} µs/call   store writes ${s.writesPerCall.toFixed(2)}/call (${s.bytesPerCall.toFixed(0)} B/call)`,
    )
  }
}

/** One line per figure, its target beside it and PASS or FAIL; the failures are added to `missed`. */
function printFigures(figures, missed) {
  for (const figure of figures) {
    const result = verdict((v) => v <= figure.target, figure.value)
    console.log(
      `  ${figure.name.padEnd(70)} ${figure.value.toFixed(2)}${figure.unit}  target ≤ ${figure.target}  ${result}`,
    )
    if (result === 'FAIL') missed?.push(`${figure.name}: ${figure.value.toFixed(2)} > ${figure.target}`)
  }
}

/**
 * The sweep; the largest size is run `repeat` times per client, interleaved, and its figures are taken from the run
 * of median CPU of each client: on a shared machine one run's ratio moves by a tenth.
 */
export async function sweepSection(url, plan, missed, repeat = 1) {
  console.log(`concurrency sweep: N concurrent tools/call of the slow tool, SDK Client, each client in its own process`)
  const runs = []
  const largest = Math.max(...plan.map((p) => p.streams))
  for (const [index, step] of plan.entries()) {
    for (let round = 0; round < (step.streams === largest ? repeat : 1); round++) {
      // Rotate the order, so that no client always runs first on a given size.
      const order = sweepClients.map((_, i) => sweepClients[(i + index + round) % sweepClients.length])
      for (const client of order) {
        const run = await runClient({mode: 'sweep', client, url, ...step})
        runs.push(run)
        console.log(
          `  ${String(step.streams).padStart(4)} streams × ${String(step.steps).padStart(3)} progress  ${client.padEnd(9)} ${describeRun(run)}   ${(run.ms / 1000).toFixed(1)} s`,
        )
      }
    }
  }
  const at = (streams, client) => {
    const mine = runs
      .filter((r) => r.streams === streams && r.client === client)
      .sort((a, b) => a.cpuUsPerMessage - b.cpuUsPerMessage)
    return mine[Math.floor(mine.length / 2)]
  }
  const heapPerOpenStream = (client) => {
    const heaps = runs
      .filter((r) => r.streams === largest && r.client === client && r.openAtSample >= 0.9 * largest)
      .map((r) => r.heapPerStreamKiB)
    return heaps.length === 0 ? NaN : heaps.sort((a, b) => a - b)[Math.floor(heaps.length / 2)]
  }
  if (repeat > 1) console.log(`  ${largest} streams: the run of median CPU of each client, of ${repeat}`)
  const smallOnes = plan.map((p) => p.streams).filter((n) => n > 1 && n < largest)
  const small = smallOnes[0] ?? largest
  const ours = at(largest, 'ours')
  const file = at(largest, 'ours+file')
  const sdk = at(largest, 'sdk')
  const figures = [
    {
      name: `CPU/message at ${largest} streams, ours(memory) / SDK`,
      value: ours.cpuUsPerMessage / sdk.cpuUsPerMessage,
      target: 0.8,
      unit: '×',
    },
    {
      name: `CPU/message at ${largest} streams, ours(file) / ours(memory)`,
      value: file.cpuUsPerMessage / ours.cpuUsPerMessage,
      target: 1.3,
      unit: '×',
    },
    // Comparable only when (nearly) every call was open when the heap was measured: the median of those runs (NaN
    // fails the target when there are none).
    {
      name: `heap per open stream at ${largest} streams, ours(memory) / SDK`,
      value: heapPerOpenStream('ours') / heapPerOpenStream('sdk'),
      target: 1,
      unit: '×',
    },
  ]
  // Bounded by a constant: a cursor write costs the same bytes however many other streams are open, and a message
  // costs one write at most (fewer when a stream's writes are coalesced, as at a higher rate of events).
  for (const client of ['ours', 'ours+file']) {
    const few = at(small, client).storeBytesPerWrite
    const many = at(largest, client).storeBytesPerWrite
    figures.push({
      name: `store bytes/write ${client}, ${small} → ${largest} streams (${few.toFixed(0)} → ${many.toFixed(0)} B)`,
      value: many / few,
      target: 1.5,
      unit: '×',
    })
  }
  // FileStore's journal: a write costs its line, and its folds into the file at most as much again, amortized.
  const disk = {few: at(small, 'ours+file').diskBytesPerWrite, many: at(largest, 'ours+file').diskBytesPerWrite}
  figures.push({
    name: `file bytes/write ours+file, ${small} → ${largest} streams (${disk.few.toFixed(0)} → ${disk.many.toFixed(0)} B)`,
    value: disk.many / disk.few,
    target: 2.5,
    unit: '×',
  })
  // No target: what the least possible transport costs, so that the SDK ratio can be read against it.
  const floor = at(largest, 'floor')
  const yardstick = `CPU/message at ${largest} streams, floor / SDK ${(floor.cpuUsPerMessage / sdk.cpuUsPerMessage).toFixed(2)}×, ours(memory) / floor ${(ours.cpuUsPerMessage / floor.cpuUsPerMessage).toFixed(2)}× (no target)`
  console.log()
  printFigures(figures, missed)
  console.log(`  ${yardstick}`)
  console.log()
  return {runs, figures, yardstick}
}

function describeRun(run) {
  const disk = run.diskBytesPerMessage === undefined ? '' : `, file ${run.diskBytesPerMessage.toFixed(0)} B`
  const store =
    run.storeBytesPerMessage === undefined
      ? ''
      : `   store ${run.storeWritesPerMessage.toFixed(2)} writes ${run.storeBytesPerMessage.toFixed(0)} B${disk} /message`
  const open = run.openAtSample < run.streams ? ` (${run.openAtSample} open)` : ''
  return `CPU ${(run.cpuUsPerMessage / 1000).toFixed(3)} ms/message   heap ${run.heapPerStreamKiB.toFixed(1).padStart(6)} KiB/stream${open}${store}`
}

/** The round trip and the sweep, for the summary at the end of the run. */
export function printScaleSummary({roundTrip, sweep, profile}) {
  if (roundTrip) {
    console.log(
      `tool-call round trip (SDK Client, reference server, ${roundTrip.calls} sequential echo calls, median of ${roundTrip.rounds} rounds)`,
    )
    printRoundTrip(roundTrip)
    printFigures(roundTrip.figures)
  }
  if (sweep) {
    console.log('concurrency sweep (SDK Client, slow tool; client CPU per delivered message, heap per open stream)')
    for (const run of sweep.runs)
      console.log(`  ${String(run.streams).padStart(4)} streams  ${run.client.padEnd(9)} ${describeRun(run)}`)
    printFigures(sweep.figures)
    console.log(`  ${sweep.yardstick}`)
  }
  if (profile) {
    console.log(
      `profile (ours, 1,000 streams, the measured calls), charged to: ${profile.areas.map((row) => `${row.name} ${row.percent.toFixed(0)}%`).join(' · ')}`,
    )
    console.log(
      `  most self time: ${profile.functions
        .slice(0, 4)
        .map((row) => `${row.name} ${row.percent.toFixed(0)}%`)
        .join(' · ')}`,
    )
    console.log(
      `  this library: ${profile.ours
        .slice(0, 4)
        .map((row) => `${row.name} ${row.percent.toFixed(0)}%`)
        .join(' · ')}`,
    )
  }
}

/**
 * A CPU profile of ours (MemoryStore) with `step.streams` open streams, over the measured calls only (start-up,
 * warm-up and the heap samples left out): self time by function, and each sample charged to the code that caused
 * it: the nearest frame of this library, the SDK, undici or a dependency up its stack (Node's internals, such as
 * web streams and timers, are charged to whoever called them).
 */
export async function profileSection(url, step, top = 15) {
  const directory = await mkdtemp(join(tmpdir(), 'mcp-bench-prof-'))
  try {
    const profiles = {}
    for (const client of ['ours', 'sdk']) {
      const file = join(directory, `${client}.cpuprofile`)
      const run = await runClient({mode: 'sweep', client, url, ...step, bytes: false, profile: file})
      profiles[client] = {...selfTimes(JSON.parse(await readFile(file, 'utf8'))), messages: run.messages}
    }
    const {functions, areas, ours} = profiles.ours
    console.log(
      `profile: ours (MemoryStore) and the SDK transport, ${step.streams} streams × ${step.steps} progress, the measured calls`,
    )
    // Both clients side by side in µs per message: where ours spends more or less than the SDK's.
    const names = [...new Set([...areas, ...profiles.sdk.areas].map((row) => row.name))]
    const perMessage = (client, name) =>
      ((profiles[client].areas.find((row) => row.name === name)?.ms ?? 0) * 1000) / profiles[client].messages
    console.log('  busy µs per message, charged to:      ours      SDK')
    for (const name of names)
      console.log(
        `    ${name.padEnd(32)} ${perMessage('ours', name).toFixed(1).padStart(7)}  ${perMessage('sdk', name).toFixed(1).padStart(7)}`,
      )
    console.log('  ours, most self time (% of busy time):')
    for (const row of functions.slice(0, top))
      console.log(`  ${row.percent.toFixed(1).padStart(5)}%  ${row.ms.toFixed(0).padStart(6)} ms  ${row.name}`)
    console.log('  ours, this library with the Node internals it calls:')
    for (const row of ours.slice(0, top))
      console.log(`  ${row.percent.toFixed(1).padStart(5)}%  ${row.ms.toFixed(0).padStart(6)} ms  ${row.name}`)
    console.log('  SDK, most self time:')
    for (const row of profiles.sdk.functions.slice(0, top))
      console.log(`  ${row.percent.toFixed(1).padStart(5)}%  ${row.ms.toFixed(0).padStart(6)} ms  ${row.name}`)
    console.log()
    return {areas, functions: functions.slice(0, top), ours: ours.slice(0, top)}
  } finally {
    await rm(directory, {recursive: true, force: true})
  }
}

/** Whose code `url` is; undefined for Node's own (charged to its caller). */
function areaOf(url) {
  if (url.includes('/node_modules/')) {
    if (url.includes('@modelcontextprotocol') || url.includes('/zod/') || url.includes('/ajv'))
      return 'SDK Client + zod'
    return url.replace(/^.*\/node_modules\//, '').split('/')[0]
  }
  if (url.includes('/dist/')) return 'this library'
  if (url.includes('undici')) return 'undici (fetch)'
  if (url.includes('/bench/')) return 'bench'
  return undefined
}

/** Self time per function (name and place); busy time charged per area and per function of this library; idle left out. */
function selfTimes(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parents = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id])))
  const nameOf = ({functionName, url, lineNumber}) =>
    `${functionName || '(anonymous)'}${url === '' ? '' : ` ${shortUrl(url)}:${lineNumber + 1}`}`
  const perFunction = new Map()
  const perArea = new Map()
  const ours = new Map()
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us)
  let busy = 0
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    const leaf = nodes.get(id).callFrame
    if (leaf.functionName === '(idle)') return
    busy += delta
    add(perFunction, nameOf(leaf), delta)
    let charged
    for (let at = id; at !== undefined && charged === undefined; at = parents.get(at)) {
      const frame = nodes.get(at).callFrame
      const area = areaOf(frame.url)
      if (area !== undefined) charged = {area, frame}
    }
    add(perArea, charged?.area ?? (leaf.functionName === '(garbage collector)' ? 'gc' : 'node, no caller above'), delta)
    if (charged?.area === 'this library') add(ours, nameOf(charged.frame), delta)
  })
  const rows = (map) =>
    [...map].map(([name, us]) => ({name, ms: us / 1000, percent: (us / busy) * 100})).sort((a, b) => b.ms - a.ms)
  return {functions: rows(perFunction), areas: rows(perArea), ours: rows(ours)}
}

function shortUrl(url) {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url
  return path.startsWith('/') ? relative(here('..'), path) : path
}
