import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {TransportError} from '../errors.ts'
import type {JsonRpcId} from '../jsonrpc.ts'

/**
 * The JSON-RPC error that the HTTP refusal `error` carries for request `wireId`, if it is a 400 whose body is one
 * (docs/design.md#eras): a 2026-07-28 server answers a request it rejects before running it (a header that
 * disagrees with the body, an unsupported version) with HTTP 400 and such a body.
 */
export function rpcErrorAnswering(error: TransportError, wireId: JsonRpcId): JSONRPCMessage | undefined {
  if (error.status !== 400 || error.data?.text === undefined) return undefined
  let body: unknown
  try {
    body = JSON.parse(error.data.text)
  } catch {
    return undefined
  }
  const answer = body as {jsonrpc?: unknown; id?: unknown; error?: {code?: unknown; message?: unknown}} | null
  const valid = answer?.jsonrpc === '2.0' && answer.id === wireId && typeof answer.error?.code === 'number' && typeof answer.error.message === 'string'
  return valid ? (answer as JSONRPCMessage) : undefined
}
