/**
 * `mcp-resumable-http/testing`: a reference MCP Streamable HTTP server that keeps stream and session
 * resumption apart and fails on command, serving the tools, resources and prompts a test declares, with an msw
 * adapter. Real sockets: `mcp-resumable-http/testing/node`.
 * @packageDocumentation
 * @module mcp-resumable-http/testing
 */
export * from './kit.ts'
export {
  createMockMcpServer,
  handlersFor,
  type EndpointOptions,
  type MockMcpServer,
  type MockMcpServerOptions,
} from './msw.ts'
