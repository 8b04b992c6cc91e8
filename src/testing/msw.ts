/**
 * The msw adapter: the reference server behind one request handler, for `setupServer(...)` in Node and
 * `setupWorker(...)` in a browser. msw is an optional peer dependency of `mcp-resumable-http/testing`.
 */
import {http, type HttpHandler} from 'msw'
import type {ReferenceServerOptions} from './options.ts'
import type {RequestHandler} from './protocol.ts'
import {createReferenceServer, type ReferenceServer} from './server.ts'

export interface EndpointOptions {
  /**
   * The endpoint the handler answers: a URL or an msw path pattern.
   * @defaultValue `'*\/mcp'`: the path `/mcp` on any origin
   */
  url?: string | URL | undefined
}

export interface MockMcpServerOptions extends ReferenceServerOptions, EndpointOptions {}

export interface MockMcpServer {
  /** The reference server: its faults, mode and instrumentation. */
  server: ReferenceServer
  /** Pass to `setupServer(...handlers)`, `setupWorker(...handlers)` or `network.use(...handlers)`. */
  handlers: HttpHandler[]
}

/** A reference server and the msw handlers that serve it. */
export function createMockMcpServer(options: MockMcpServerOptions = {}): MockMcpServer {
  const {url, ...serverOptions} = options
  const server = createReferenceServer(serverOptions)
  return {server, handlers: handlersFor(server, {url})}
}

/** The msw handlers that serve `server` (a fault proxy in front of any MCP server, or a reference server) at `url`. */
export function handlersFor(server: RequestHandler, options: EndpointOptions = {}): HttpHandler[] {
  const {url = '*/mcp'} = options
  // Every method: the server itself answers 405 to what it does not serve, as a real endpoint would.
  return [
    http.all(url instanceof URL ? url.href : url, async ({request}) => headersAtOnce(await server.handle(request))),
  ]
}

/**
 * msw 3 writes a mocked response's headers with the first chunk of its body, so a stream that is silent for now (a
 * standalone GET stream) would leave the client's `fetch` pending. An empty first chunk sends them at once, as a
 * real server flushes them (`listen` does), and puts no byte on the wire.
 */
export function headersAtOnce(response: Response): Response {
  if (response.body === null) return response
  const flush = new TransformStream<Uint8Array, Uint8Array>({
    start: (controller) => controller.enqueue(new Uint8Array(0)),
  })
  return new Response(response.body.pipeThrough(flush), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}
