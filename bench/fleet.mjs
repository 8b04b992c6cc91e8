// The fleet section of `npm run bench` (issue 16), on a Debian redis-server of its own (a free port, a temporary
// directory, no persistence):
//
//   failover   a worker process owns a session and runs a tool; it is killed (SIGKILL) mid-call; a standby worker
//              (ownership 'wait') takes the session over once the lease expires and resumes the tool's stream.
//              Measured: kill → the standby's stream resumption, against the lease TTL.
//   redis      this transport driven by hand against bench/server.mjs on RedisStore and on MemoryStore: stream
//              throughput (strict durability: each batch's cursor stored before delivery) and request round trip.
//
// The workers are test/fixtures/fleet-worker.mjs, on ../dist.
import {fork, spawn, spawnSync} from 'node:child_process'
import {mkdtemp, rm} from 'node:fs/promises'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {createClient} from 'redis'
import {MemoryStore} from '../dist/index.js'
import {RedisStore} from '../dist/redis.js'
import {builtinTools, createReferenceServer, listen} from '../dist/testing/node.js'
import {createOurs} from './clients.mjs'
import {median, round, verdict} from './stats.mjs'

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export async function fleetSection(serverUrl, {quick, rounds, streamEvents, echoRequests}, missed) {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    console.log('fleet: skipped, redis-server is missing (apt-get install redis-server)\n')
    return {skipped: 'redis-server is missing'}
  }
  const redis = await startRedis()
  try {
    const failover = await failoverFigures(redis, quick ? [500, 1000] : [500, 1000, 2000], quick ? 1 : 3)
    const store = await storeFigures(serverUrl, redis, {
      rounds,
      streamEvents: Math.min(streamEvents, 50_000),
      echoRequests: Math.min(echoRequests, 1000),
    })
    const figures = [
      {
        name: 'failover (kill → stream resumed elsewhere) / lease TTL, worst',
        value: Math.max(...failover.map((f) => f.worstOverTtl)),
        target: 1.5,
        better: 'lower',
      },
      {
        name: 'stream throughput, RedisStore (strict) / MemoryStore',
        value: store.streamRatio,
        target: 0.8,
        better: 'higher',
      },
      {
        name: 'request round trip, RedisStore / MemoryStore (median)',
        value: store.echoRatio,
        target: 1.3,
        better: 'lower',
      },
    ]
    for (const {name, value, target, better} of figures) {
      const result = verdict((v) => (better === 'lower' ? v <= target : v >= target), value)
      console.log(
        `  ${name.padEnd(66)} ${value.toFixed(2)}  target ${better === 'lower' ? '≤' : '≥'} ${target}  ${result}`,
      )
      if (result === 'FAIL') missed.push(`${name}: ${value.toFixed(2)}`)
    }
    console.log()
    return {failover, store, figures}
  } finally {
    await redis.stop()
  }
}

async function failoverFigures(redis, ttls, runs) {
  console.log(
    `failover: owner killed mid-call, a standby (ownership 'wait') resumes; lease TTLs ${ttls.join(', ')} ms, ${runs} run(s) each`,
  )
  // The worker's job: the slow tool, 20 progress notifications 50 ms apart.
  const slow = builtinTools().find((tool) => tool.name === 'slow')
  const job = {
    ...slow,
    name: 'job',
    handler: (args, context) => slow.handler({steps: 20, delayMs: 50, ...args}, context),
  }
  const server = createReferenceServer({tools: [...builtinTools(), job]})
  const listening = await listen(server)
  const figures = []
  try {
    for (const ttl of ttls) {
      const times = []
      for (let run = 0; run < runs; run++) {
        await redis.client.flushAll()
        times.push(await failoverOnce(listening.url, redis.url, ttl))
      }
      const figure = {
        leaseTtlMs: ttl,
        failoverMs: times,
        medianMs: median(times),
        worstOverTtl: round(Math.max(...times) / ttl, 3),
      }
      console.log(
        `  TTL ${String(ttl).padStart(5)} ms   failover ${times.map((t) => `${t} ms`).join(', ')}   worst/TTL ${figure.worstOverTtl.toFixed(2)}`,
      )
      figures.push(figure)
    }
  } finally {
    await listening.close()
  }
  return figures
}

/** One owner, one standby: resolves the milliseconds from the owner's SIGKILL to the standby's stream resumption. */
async function failoverOnce(url, redisUrl, ttl) {
  const start = (name, ownership) => {
    const child = fork(
      here('../test/fixtures/fleet-worker.mjs'),
      [here('../dist'), url, 'redis', redisUrl, name, ownership, String(ttl), 'answer'],
      {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    )
    const reports = []
    child.on('message', (message) => reports.push(message))
    const next = async (match) => {
      const deadline = Date.now() + 20_000 + ttl * 2
      for (;;) {
        const found = reports.find(match)
        if (found !== undefined) return found
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`worker ${name}: ${JSON.stringify(reports)}`)
        await pause(5)
      }
    }
    return {child, next}
  }
  const owner = start('owner', 'new-session')
  let standby
  try {
    await owner.next((report) => report.connected !== undefined)
    // Started once the owner holds the session: it waits for that session, not for an empty store.
    standby = start('standby', 'wait')
    await standby.next((report) => report.waiting === true)
    await pause(ttl / 2)
    owner.child.send('job')
    await owner.next((report) => report.progress === 2)
    owner.child.kill('SIGKILL')
    const killedAt = Date.now()
    const resumed = await standby.next((report) => report.reconnect === 'stream-resumption')
    await standby.next((report) => report.result !== undefined)
    return resumed.at - killedAt
  } finally {
    owner.child.kill('SIGKILL')
    standby?.child.kill('SIGKILL')
  }
}

async function storeFigures(serverUrl, redis, {rounds, streamEvents, echoRequests}) {
  console.log(
    `RedisStore / MemoryStore: ${streamEvents} events per stream and ${echoRequests} sequential requests, 1 warm-up + ${rounds} rounds`,
  )
  const rates = {memory: [], redis: []}
  const echoes = {memory: [], redis: []}
  // Redis commands sent per event and per call: what the store costs, whatever the noise of a shared machine.
  const commands = {stream: 0, echo: 0}
  let counted = 0
  const counting = {sendCommand: (args) => (counted++, redis.client.sendCommand(args))}
  for (let run = 0; run <= rounds; run++) {
    for (const name of run % 2 === 0 ? ['memory', 'redis'] : ['redis', 'memory']) {
      const store = name === 'memory' ? new MemoryStore() : new RedisStore({client: counting, prefix: `bench-${run}:`})
      const client = await createOurs(serverUrl, {store})
      counted = 0
      const {events, ms} = await client.stream(streamEvents)
      if (events !== streamEvents) throw new Error(`${name}: ${events} of ${streamEvents} events`)
      if (name === 'redis') commands.stream = counted / events
      counted = 0
      const latencies = []
      for (let i = 0; i < echoRequests; i++) latencies.push(await client.echo())
      if (name === 'redis') commands.echo = counted / echoRequests
      await client.close()
      if (run === 0) continue
      rates[name].push((events / ms) * 1000)
      echoes[name].push(median(latencies))
    }
  }
  const streamRatio = round(median(rates.redis) / median(rates.memory), 3)
  const echoRatio = round(median(echoes.redis) / median(echoes.memory), 3)
  const line = (name) =>
    `${Math.round(median(rates[name])).toLocaleString('en-US')} events/s, round trip ${(median(echoes[name]) * 1000).toFixed(0)} µs`
  console.log(`  MemoryStore  ${line('memory')}\n  RedisStore   ${line('redis')}`)
  console.log(
    `  Redis commands: ${commands.stream.toFixed(4)} per stream event, ${commands.echo.toFixed(4)} per plain call`,
  )
  return {
    streamRatio,
    echoRatio,
    commandsPerEvent: commands.stream,
    commandsPerCall: commands.echo,
    eventsPerSecond: {memory: median(rates.memory), redis: median(rates.redis)},
    roundTripMs: {memory: median(echoes.memory), redis: median(echoes.redis)},
  }
}

async function startRedis() {
  const dir = await mkdtemp(join(tmpdir(), 'bench-redis-'))
  const port = await new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const {port: free} = probe.address()
      probe.close(() => resolve(free))
    })
  })
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    {stdio: 'ignore'},
  )
  const url = `redis://127.0.0.1:${port}`
  let client
  for (let attempt = 0; client === undefined; attempt++) {
    client = await createClient({url, socket: {reconnectStrategy: false}})
      .connect()
      .catch(async (error) => {
        if (attempt > 100) throw error
        await pause(50)
      })
  }
  return {
    url,
    client,
    stop: async () => {
      await client.quit()
      child.kill()
      await rm(dir, {recursive: true, force: true})
    },
  }
}
