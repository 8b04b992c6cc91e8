/// <reference types="node" />
/**
 * `mcp-resumable-http/testing/node`: the reference server over real sockets, so that a dropped connection is
 * a real one (undici reports `TypeError: terminated`). Needs no msw.
 * @packageDocumentation
 * @module mcp-resumable-http/testing/node
 */
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

export * from './kit.ts'

import type {RequestHandler} from './protocol.ts'

export interface ListenOptions {
  /** The port to listen on. @defaultValue `0`: any free port */
  port?: number | undefined
  /** The interface to listen on. @defaultValue `'127.0.0.1'` */
  host?: string | undefined
  /** The path of the endpoint in the returned URL (every path is served). @defaultValue `'/mcp'` */
  path?: string | undefined
}

export interface Listening {
  /** The endpoint, e.g. `http://127.0.0.1:49152/mcp`. */
  url: string
  /** Destroys every open socket now: a real connection drop, for every client at once. Safe to destructure. */
  dropConnections: () => void
  /** Destroys every socket and stops listening. Safe to destructure. */
  close: () => Promise<void>
}

/** Serves `server` on a real socket. A response body that errors (a fault) destroys its socket. */
export async function listen(server: RequestHandler, options: ListenOptions = {}): Promise<Listening> {
  const {port = 0, host = '127.0.0.1', path = '/mcp'} = options
  const sockets = new Set<Socket>()
  const http = createServer((incoming, outgoing) => {
    void serveNodeRequest(server, incoming, outgoing)
  })
  http.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(port, host, resolve)
  })
  const address = http.address() as AddressInfo
  const dropConnections = (): void => {
    for (const socket of sockets) socket.destroy()
  }
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}${path}`,
    dropConnections,
    close: () =>
      new Promise<void>((resolve) => {
        dropConnections()
        http.close(() => resolve())
      }),
  }
}

/**
 * Answers one Node request with a Web-standard handler: for mounting the reference server (or any
 * `(Request) => Promise<Response>`) in a Node server of your own. The response headers go out at once (an
 * SSE stream may stay silent), and a body that errors (a cut, as a fault) destroys the socket. A client gone
 * before its request was read whole is not answered, and resolves it.
 */
export async function serveNodeRequest(
  server: RequestHandler,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
): Promise<void> {
  const chunks: Buffer[] = []
  try {
    for await (const chunk of incoming) chunks.push(chunk as Buffer)
  } catch {
    // The client went away while it sent its request (`aborted`): nobody is left to answer, and nothing escapes.
    outgoing.destroy()
    return
  }
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value)
  const method = incoming.method ?? 'GET'
  const request = new Request(new URL(incoming.url ?? '/', `http://${incoming.headers.host ?? 'localhost'}`), {
    method,
    headers,
    body: chunks.length === 0 || method === 'GET' || method === 'HEAD' ? null : Buffer.concat(chunks),
  })
  const response = await server.handle(request)
  outgoing.writeHead(response.status, Object.fromEntries(response.headers))
  // An SSE stream may stay silent for long: the client must see its headers now, not with the first event.
  outgoing.flushHeaders()
  if (response.body === null) {
    outgoing.end()
    return
  }
  const reader = response.body.getReader()
  // The client went away: stop reading, so the server sees its stream lose its reader.
  outgoing.on('close', () => void reader.cancel().catch(() => {}))
  try {
    for (;;) {
      const {done, value} = await reader.read()
      if (done) break
      outgoing.write(value)
    }
    outgoing.end()
  } catch {
    // A body that errors is a connection drop: destroy the socket, as a crashed server or a broken network would.
    outgoing.destroy()
  }
}
