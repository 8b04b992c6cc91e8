// The memory section of `npm run bench`: what a hostile server can make the client hold. Each scenario runs
// our transport, under the SDK Client, in a child process of its own (bench/memory-client.mjs, with
// --expose-gc), against a minimal server in this process over a real socket on 127.0.0.1; the child reports
// its RSS above its baseline after connecting: the highest right after a full GC while the server pushes
// (what the transport keeps alive: the figure with a bound), the highest with garbage, and what stays at the end.
import {fork} from 'node:child_process'
import {createServer} from 'node:http'
import {fileURLToPath} from 'node:url'
import {drained} from './drain.mjs'
import {fmt} from './stats.mjs'

/** The documented bound of each figure (SECURITY.md, "exhaust the client's memory"). */
export const memoryBoundMb = 100

const MB = 1024 * 1024

export function memoryScenarios(quick) {
  return [
    {name: 'ids', what: `${quick ? 300 : 1500} events with distinct 1 MB IDs`, count: quick ? 300 : 1500},
    {name: 'pings', what: `${quick ? 5000 : 20_000} server pings`, count: quick ? 5000 : 20_000},
    {name: 'event', what: 'a 200 MB event', count: 200},
  ]
}

export async function memorySection(quick, missed, names = ['ids', 'pings', 'event']) {
  console.log(
    'memory: RSS above the baseline after connect, right after a full GC at its highest (retained), against its bound',
  )
  const results = {}
  for (const scenario of memoryScenarios(quick).filter(({name}) => names.includes(name))) {
    const server = await startMemoryServer(scenario)
    try {
      const figures = await runClient(scenario, server.url)
      const [retainedMb, peakMb, afterMb] = [figures.retained, figures.peak, figures.after].map((bytes) => bytes / MB)
      results[scenario.name] = {
        what: scenario.what,
        retainedMb,
        peakMb,
        afterMb,
        boundMb: memoryBoundMb,
        answers: server.answers(),
        ...figures.extra,
      }
      const ok = retainedMb <= memoryBoundMb
      if (!ok) missed.push(`memory ${scenario.name}: ${fmt(retainedMb)} MB retained > ${memoryBoundMb} MB`)
      const figuresText = `retained ${fmt(retainedMb).padStart(4)} MB (bound ${memoryBoundMb} MB) ${ok ? 'ok' : 'MISSED'}; with garbage ${fmt(peakMb).padStart(4)} MB, at the end ${fmt(afterMb).padStart(3)} MB`
      console.log(`  ${scenario.what.padEnd(36)} ${figuresText}`)
    } finally {
      await server.stop()
    }
  }
  return results
}

function runClient(scenario, url) {
  return measuredClient(
    './memory-client.mjs',
    [scenario.name, url, String(scenario.count)],
    `memory client ${scenario.name}`,
  )
}

/** Runs the bench client `script` with `args` in a process of its own, with --expose-gc: the figures it sends. */
export function measuredClient(script, args, name) {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: ['--expose-gc'],
  })
  return new Promise((resolve, reject) => {
    let figures
    child.on('message', (message) => (figures = message))
    child.once('error', reject)
    child.once('exit', (code) =>
      figures === undefined ? reject(new Error(`${name} exited (${code})`)) : resolve(figures),
    )
  })
}

/** Writes `text`, waiting for the socket to drain when it must. */
function write(response, text) {
  return response.write(text) ? Promise.resolve() : drained(response)
}

const sse = (response) => response.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'})
const progress = (token, n) =>
  JSON.stringify({jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken: token, progress: n}})
const result = (id) => JSON.stringify({jsonrpc: '2.0', id, result: {content: [{type: 'text', text: 'done'}]}})

/** Just enough of MCP for one scenario: initialize, the standalone GET, one tools/call, answers counted. */
function startMemoryServer(scenario) {
  let answers = 0
  let pendingCall
  const open = new Set()
  const server = createServer(async (request, response) => {
    open.add(response)
    response.on('close', () => open.delete(response))
    if (request.method === 'DELETE') return response.writeHead(200).end()
    if (request.method === 'GET') return get(request, response)
    let body = ''
    for await (const chunk of request) body += chunk
    const message = JSON.parse(body)
    if (message.method === 'initialize') {
      response.writeHead(200, {'content-type': 'application/json', 'mcp-session-id': 'memory-session'})
      return response.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: {
            protocolVersion: '2025-11-25',
            capabilities: {tools: {}},
            serverInfo: {name: 'memory', version: '1'},
          },
        }),
      )
    }
    if (message.method === undefined) answers++
    if (message.method !== 'tools/call') return response.writeHead(202).end()
    pendingCall = message.id
    const token = message.params?._meta?.progressToken
    sse(response)
    if (scenario.name === 'ids') {
      for (let n = 0; n < scenario.count && !response.destroyed; n++)
        await write(response, `id: ${n}:${'x'.repeat(MB)}\ndata: ${progress(token, n)}\n\n`)
      return response.end(`id: last\ndata: ${result(message.id)}\n\n`)
    }
    // 'event': one event of 200 MB that the client must refuse; it then resumes from e1 (see get).
    await write(response, 'id: e1\ndata: \n\n')
    await write(response, 'data: ')
    const chunk = 'y'.repeat(MB)
    for (let n = 0; n < scenario.count && !response.destroyed; n++) await write(response, chunk)
    response.end('\n\n')
  })

  async function get(request, response) {
    if (request.headers['last-event-id'] !== undefined) {
      sse(response)
      return response.end(`id: e2\ndata: ${result(pendingCall)}\n\n`)
    }
    sse(response)
    if (scenario.name !== 'pings') return
    for (let n = 0; n < scenario.count && !response.destroyed; n++) {
      await write(response, `id: p${n}\ndata: ${JSON.stringify({jsonrpc: '2.0', id: `ping-${n}`, method: 'ping'})}\n\n`)
    }
  }

  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        answers: () => answers,
        stop: () => {
          for (const response of open) response.destroy()
          return new Promise((done) => server.close(done))
        },
      })
    })
  })
}
