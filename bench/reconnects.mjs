// The reconnects section of `npm run bench`: memory over many reconnects of the standalone stream. A server in this
// process ends the standalone GET after each event with `retry: 0` (the 2025-11-25 polling pattern, or a proxy
// cutting idle streams), so the client reconnects at once, for ever. Our transport runs in a child process of its own
// (bench/reconnect-client.mjs, with --expose-gc) and reports its heap after a full GC, after a warm-up, after the
// reconnects and after close(), with the abort listeners on the signals it handed to fetch.
import {createServer} from 'node:http'
import {measuredClient} from './memory.mjs'
import {fmt, round, verdict} from './stats.mjs'

/** Heap growth allowed over the reconnects (issue 28: flat, ≤ 1 MB), in MiB as the heap section. */
export const reconnectsLimitMiB = 1
/** Abort listeners one signal handed to fetch may carry when fetch gets it: fetch's own is added after. */
export const listenersLimit = 1

export async function reconnectsSection(count, missed) {
  console.log(
    `reconnects: ours, ${fmt(count)} reconnects of the standalone stream (one event and retry: 0 each), heapUsed after gc()`,
  )
  const server = await startPollingServer()
  try {
    const figures = await measuredClient('./reconnect-client.mjs', [server.url, String(count)], 'reconnect client')
    const MiB = 2 ** 20
    const [startMiB, endMiB, closedMiB] = [figures.start, figures.end, figures.closed].map((bytes) =>
      round(bytes / MiB, 2),
    )
    const growthMiB = round(endMiB - startMiB, 2)
    const result = {
      reconnects: figures.reconnects,
      gets: server.gets(),
      seconds: round(figures.ms / 1000, 1),
      heapMiB: {start: startMiB, end: endMiB, closed: closedMiB},
      growthMiB,
      limitMiB: reconnectsLimitMiB,
      listeners: figures.listeners,
      listenersLimit,
      maxListenersWarnings: figures.maxListenersWarnings,
    }
    console.log(
      `  ${fmt(figures.reconnects)} reconnects in ${result.seconds} s: heap start ${startMiB} MiB, after ${endMiB} MiB, after close() ${closedMiB} MiB`,
    )
    const {mostAtFetch, live, liveAfterClose} = figures.listeners
    console.log(
      `  abort listeners: at most ${mostAtFetch} on a signal as fetch got it; ${live} on live signals at the end, ${liveAfterClose} after close(); MaxListenersExceededWarning ${figures.maxListenersWarnings}`,
    )
    if (growthMiB > reconnectsLimitMiB)
      missed.push(
        `reconnects: heap grew ${growthMiB} MiB over ${fmt(figures.reconnects)} reconnects (> ${reconnectsLimitMiB} MiB)`,
      )
    if (!listenersOk(result))
      missed.push(
        `reconnects: abort listeners ${JSON.stringify(figures.listeners)}, ${figures.maxListenersWarnings} MaxListenersExceededWarning`,
      )
    console.log()
    return result
  } finally {
    await server.stop()
  }
}

/** No signal fetch got carried more than its bound, none is left with a listener after close(), and Node never warned. */
export function listenersOk({listeners, maxListenersWarnings}) {
  return listeners.mostAtFetch <= listenersLimit && listeners.liveAfterClose === 0 && maxListenersWarnings === 0
}

export function printReconnects(reconnects) {
  const {heapMiB, growthMiB, limitMiB, listeners} = reconnects
  console.log(
    `reconnects (ours, ${fmt(reconnects.reconnects)} reconnects of the standalone stream, ${reconnects.seconds} s)`,
  )
  console.log(`  heap start ${heapMiB.start} · after ${heapMiB.end} · after close() ${heapMiB.closed} MiB`)
  console.log(`  growth ${growthMiB} MiB  limit ${limitMiB} MiB  ${verdict((v) => v <= limitMiB, growthMiB)}`)
  const ok = listenersOk(reconnects)
  console.log(
    `  abort listeners: ≤ ${listeners.mostAtFetch} on a signal fetch got (limit ${listenersLimit}), ${listeners.liveAfterClose} after close()  ${ok ? 'PASS' : 'FAIL'}`,
  )
}

/** initialize, notifications (202), and a standalone GET that brings one event with `retry: 0`, then ends. */
function startPollingServer() {
  let gets = 0
  const server = createServer({keepAliveTimeout: 60_000}, async (request, response) => {
    if (request.method === 'GET') {
      gets++
      const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${gets}}}`
      return response
        .writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'})
        .end(`retry: 0\nid: ${gets}\ndata: ${note}\n\n`)
    }
    if (request.method === 'DELETE') return response.writeHead(200).end()
    let body = ''
    for await (const chunk of request) body += chunk
    const message = JSON.parse(body)
    if (message.method !== 'initialize') return response.writeHead(202).end()
    response.writeHead(200, {'content-type': 'application/json', 'mcp-session-id': 'reconnects-session'})
    response.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: message.id,
        result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: 'reconnects', version: '1'}},
      }),
    )
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        gets: () => gets,
        stop: () => {
          server.closeAllConnections()
          return new Promise((done) => server.close(done))
        },
      })
    })
  })
}
