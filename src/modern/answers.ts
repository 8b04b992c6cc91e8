import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import type {TransportError} from '../errors.ts'
import type {JsonRpcId} from '../wire/jsonrpc.ts'

/**
 * The JSON-RPC error that the HTTP refusal `error` carries for request `wireId`, if it is a 400 whose body is one
 * (docs/design.md#eras): a 2026-07-28 server answers a request it rejects before running it (a header that
 * disagrees with the body, an unsupported version) with HTTP 400 and such a body.
 */
export function rpcErrorAnswering(error: TransportError, wireId: JsonRpcId): JSONRPCMessage | undefined {
  return error.status === 400 ? rpcErrorIn(error, wireId) : undefined
}

/**
 * The JSON-RPC error answering request `wireId` that the body of the HTTP refusal `error` is, if it is one: the
 * server's word that it refused that request, not an error about no request (`id: null`) or no JSON-RPC at all.
 */
export function rpcErrorIn(error: TransportError, wireId: JsonRpcId): JSONRPCMessage | undefined {
  let body: unknown
  try {
    // An error with a status has `data`, and `httpError` (src/wire/http.ts) always gives it the body: `String` only
    // satisfies the type.
    body = JSON.parse(String(error.data!.text))
  } catch {
    // Not JSON: no answer (the check below says so).
  }
  const answer = body as {jsonrpc?: unknown; id?: unknown; error?: {code?: unknown; message?: unknown}} | null
  const valid =
    answer?.jsonrpc === '2.0' &&
    answer.id === wireId &&
    typeof answer.error?.code === 'number' &&
    typeof answer.error.message === 'string'
  return valid ? (answer as JSONRPCMessage) : undefined
}
