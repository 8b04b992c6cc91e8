/**
 * What the reference server answers to each JSON-RPC request, built-in tools included.
 */
import {errorCodes, isObject, type JsonObject, type RequestId} from './protocol.ts'
import type {Session} from './session.ts'
import {toolList, toolNamed, type ToolContext} from './tools.ts'

/** Where a request runs. */
export interface CallEnvironment {
  session: Session
  /** Writes a notification or a server request on the call's stream (or wherever it can go). */
  send: (message: JsonObject) => void
  /** The stream `send` writes to, if any: a server request records where it was first sent. */
  streamId: string | undefined
  /** Counts one execution of a tool. */
  executed: (tool: string) => void
  /** The server's side-effect counter. */
  increment: () => number
}

/** Runs one request; resolves with its response, never rejects. */
export async function execute(request: JsonObject, environment: CallEnvironment): Promise<JsonObject> {
  const params = isObject(request['params']) ? request['params'] : {}
  let answer: JsonObject
  switch (request['method']) {
    case 'tools/call':
      answer = await callTool(params, environment)
      break
    case 'tools/list':
      answer = {result: {tools: toolList}}
      break
    case 'ping':
      answer = {result: {}}
      break
    default:
      answer = {error: {code: errorCodes.methodNotFound, message: `Method not found: ${String(request['method'])}`}}
  }
  return {jsonrpc: '2.0', id: request['id'] as RequestId, ...answer}
}

async function callTool(params: JsonObject, environment: CallEnvironment): Promise<JsonObject> {
  const {session, send} = environment
  const name = String(params['name'])
  const tool = toolNamed(name)
  if (tool === undefined) return {error: {code: errorCodes.invalidParams, message: `Unknown tool: ${name}`}}
  environment.executed(name)
  const progressToken = isObject(params['_meta']) ? params['_meta']['progressToken'] : undefined
  const context: ToolContext = {
    args: isObject(params['arguments']) ? params['arguments'] : {},
    progress: (progress, total) => {
      // [spec utilities, progress] progress is sent only for a request that carried a progress token.
      if (progressToken !== undefined) send({jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken, progress, total}})
    },
    request: (method, requestParams) => {
      const requestId = `srv-${++session.nextServerRequest}`
      const message = {jsonrpc: '2.0', id: requestId, method, params: requestParams}
      return new Promise<JsonObject>((resolve) => {
        // [design note] pending server requests live on the session, whichever stream carried them.
        session.pending.set(requestId, {message, streamId: environment.streamId, resolve})
        send(message)
      })
    },
    increment: environment.increment,
  }
  try {
    return {result: await tool(context)}
  } catch (error) {
    return {error: {code: errorCodes.internalError, message: error instanceof Error ? error.message : String(error)}}
  }
}
