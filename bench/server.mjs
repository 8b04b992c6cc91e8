// The benchmark server: just enough of MCP Streamable HTTP (2025-11-25) to drive a client transport.
// Run as a child process (forked by bench/run.mjs); it reports its port over IPC and exits with its parent.
//
//   POST initialize                      -> 200 JSON, Mcp-Session-Id: bench-session
//   POST notification / response         -> 202, no body
//   POST tools/call {name:'stream', arguments:{count}}
//                                        -> 200 text/event-stream: `count` notifications, then the response
//   POST tools/call {name:'echo'} / ping -> 200 JSON, small result
//   GET, DELETE, anything else           -> 405
import http from 'node:http'
import {drained} from './drain.mjs'

const protocolVersion = '2025-11-25'
const sessionId = 'bench-session'
/** Events are batched into strings of about this many characters before each res.write. */
const chunkCharacters = 64 * 1024
const padding = 'x'.repeat(40)

/** One SSE event carrying notification `n`, ~150 bytes of JSON; even: progress, odd: log message. */
function event(n, total) {
  const data =
    n % 2 === 0
      ? `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"bench","progress":${n},"total":${total},"message":"step ${n} ${padding}"}}`
      : `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"line ${n} of the stream ${padding}"}}`
  return `id: ${n}\ndata: ${data}\n\n`
}

/** Streams up to this many events are built once and kept as Buffers, so the server costs little more than the socket. */
const cacheLimit = 250_000
const cache = new Map()

/** The notifications of a `count`-event stream as ~64 KiB chunks (the response event is not included). */
function* chunksOf(count) {
  const cached = cache.get(count)
  if (cached !== undefined) {
    yield* cached
    return
  }
  const built = count <= cacheLimit ? [] : undefined
  let chunk = ''
  for (let n = 1; n <= count; n++) {
    chunk += event(n, count)
    if (chunk.length < chunkCharacters) continue
    const buffer = Buffer.from(chunk)
    built?.push(buffer)
    yield buffer
    chunk = ''
  }
  if (chunk !== '') {
    const buffer = Buffer.from(chunk)
    built?.push(buffer)
    yield buffer
  }
  if (built !== undefined) cache.set(count, built)
}

async function writeStream(res, id, count) {
  let closed = false
  res.on('close', () => (closed = true))
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'mcp-session-id': sessionId,
  })
  for (const chunk of chunksOf(count)) {
    if (closed) return
    if (!res.write(chunk)) await drained(res)
  }
  const response = JSON.stringify({jsonrpc: '2.0', id, result: {content: []}})
  if (closed) return
  res.end(`id: ${count + 1}\ndata: ${response}\n\n`)
}

function json(res, status, body, headers = {}) {
  const text = JSON.stringify(body)
  res.writeHead(status, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers})
  res.end(text)
}

function handlePost(req, res, text) {
  let message
  try {
    message = JSON.parse(text)
  } catch {
    json(res, 400, {jsonrpc: '2.0', id: null, error: {code: -32700, message: 'Parse error'}})
    return
  }
  const {id, method, params} = message
  if (method === undefined || id === undefined) {
    // A notification or a response: accepted, no body.
    res.writeHead(202).end()
    return
  }
  switch (method) {
    case 'initialize':
      json(
        res,
        200,
        {jsonrpc: '2.0', id, result: {protocolVersion, capabilities: {}, serverInfo: {name: 'bench', version: '1'}}},
        {'mcp-session-id': sessionId},
      )
      return
    case 'ping':
      json(res, 200, {jsonrpc: '2.0', id, result: {}})
      return
    case 'tools/call':
      if (params?.name === 'stream') {
        const count = Number(params.arguments?.count ?? 0)
        writeStream(res, id, count).catch((error) => {
          console.error('bench server: stream failed', error)
          res.destroy()
        })
        return
      }
      if (params?.name === 'echo') {
        json(res, 200, {
          jsonrpc: '2.0',
          id,
          result: {content: [{type: 'text', text: String(params.arguments?.text ?? 'ok')}]},
        })
        return
      }
      json(res, 200, {jsonrpc: '2.0', id, error: {code: -32602, message: `Unknown tool ${params?.name}`}})
      return
    default:
      json(res, 200, {jsonrpc: '2.0', id, error: {code: -32601, message: `Method not found: ${method}`}})
  }
}

const server = http.createServer({keepAliveTimeout: 60_000}, (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, {allow: 'POST'}).end()
    return
  }
  let text = ''
  req.setEncoding('utf8')
  req.on('data', (part) => (text += part))
  req.on('end', () => handlePost(req, res, text))
})

server.listen(0, '127.0.0.1', () => {
  const {port} = server.address()
  if (process.send) process.send({type: 'listening', port})
  else console.log(`bench server on http://127.0.0.1:${port}/mcp`)
})

// The parent is gone (or asked us to stop): leave at once.
process.on('disconnect', () => process.exit(0))
process.on('message', (message) => {
  if (message?.type === 'stop') server.close(() => process.exit(0))
})
