/**
 * The msw adapter: the reference server behind one request handler, for `setupServer(...)` in Node and
 * `setupWorker(...)` in a browser. msw is an optional peer dependency of `mcp-resumable-http/testing`.
 */
import {http, type HttpHandler} from 'msw'
import type {ReferenceServerOptions} from './options.ts'
import {createReferenceServer, type ReferenceServer} from './server.ts'

export interface MockMcpServerOptions extends ReferenceServerOptions {
  /**
   * The endpoint the handler answers: a URL or an msw path pattern.
   * @defaultValue `'*\/mcp'`: the path `/mcp` on any origin
   */
  url?: string | URL | undefined
}

export interface MockMcpServer {
  /** The reference server: its faults, mode and instrumentation. */
  server: ReferenceServer
  /** Pass to `setupServer(...handlers)`, `setupWorker(...handlers)` or `network.use(...handlers)`. */
  handlers: HttpHandler[]
}

export function createMockMcpServer(options: MockMcpServerOptions = {}): MockMcpServer {
  const {url = '*/mcp', ...serverOptions} = options
  const server = createReferenceServer(serverOptions)
  // Every method: the server itself answers 405 to what it does not serve, as a real endpoint would.
  const handler = http.all(url instanceof URL ? url.href : url, ({request}) => server.handle(request))
  return {server, handlers: [handler]}
}
