import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {TransportError} from '../errors.ts'
import type {Redact} from './redaction.ts'

/** A JSON value: what a message carries, and what a `ResumptionStore` keeps. */
export type JsonValue = string | number | boolean | null | JsonValue[] | {[key: string]: JsonValue}

export type JsonRpcId = string | number

/** The shape this transport reads; validation beyond it is the Client's job. */
interface Envelope {
  jsonrpc: '2.0'
  id?: unknown
  method?: unknown
  params?: unknown
  result?: unknown
  error?: unknown
}

export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || typeof value === 'number'
}

export function requestIdOf(message: JSONRPCMessage): JsonRpcId | undefined {
  const envelope = message as Envelope
  return typeof envelope.method === 'string' && isJsonRpcId(envelope.id) ? envelope.id : undefined
}

export function responseIdOf(message: JSONRPCMessage): JsonRpcId | undefined {
  const envelope = message as Envelope
  return envelope.method === undefined && isJsonRpcId(envelope.id) && ('result' in envelope || 'error' in envelope)
    ? envelope.id
    : undefined
}

export function methodOf(message: JSONRPCMessage): string | undefined {
  const {method} = message as Envelope
  return typeof method === 'string' ? method : undefined
}

/** The request a `notifications/cancelled` names, if `message` is one. */
export function cancelledRequestIdOf(message: JSONRPCMessage): JsonRpcId | undefined {
  if (methodOf(message) !== 'notifications/cancelled') return undefined
  const params = (message as Envelope).params as {requestId?: unknown} | undefined
  return isJsonRpcId(params?.requestId) ? params.requestId : undefined
}

/**
 * Parses one SSE `data` field or a JSON body and appends its messages to `into` (a 2025-03-26 batch gives
 * several). Throws a `protocol` TransportError naming what was wrong, with the data masked by `redact`; nothing
 * half-parsed is appended.
 */
export function parseMessages(text: string, into: JSONRPCMessage[], redact: Redact): JSONRPCMessage[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    // No cause: the SyntaxError quotes the data, where `redact` cannot mask a secret the server echoed.
    throw new TransportError('protocol', `The server sent data that is not JSON: ${excerpt(redact(text))}`)
  }
  if (!Array.isArray(value)) {
    into.push(asMessage(value, text, redact))
    return into
  }
  const batch = value.map((item) => asMessage(item, text, redact))
  into.push(...batch)
  return into
}

function asMessage(value: unknown, text: string, redact: Redact): JSONRPCMessage {
  // A primitive has no jsonrpc member either.
  if ((value as {jsonrpc?: unknown} | null)?.jsonrpc !== '2.0') {
    throw new TransportError(
      'protocol',
      `The server sent JSON that is not a JSON-RPC 2.0 message: ${excerpt(redact(text))}`,
    )
  }
  return value as JSONRPCMessage
}

/**
 * The JSON-RPC error response that settles request `id` when its answer cannot arrive, so that the caller's
 * promise rejects at once instead of waiting for its timeout. `data.code` is the TransportError code.
 */
export function settlementFor(id: JsonRpcId, error: TransportError): JSONRPCMessage {
  const data: {code: string; status?: number} = {code: error.code}
  if (error.status !== undefined) data.status = error.status
  // -32000: the implementation-defined server-error range of JSON-RPC, the code the SDK uses for a lost connection.
  return {jsonrpc: '2.0', id, error: {code: -32000, message: error.message, data}}
}

export function excerpt(text: string, max = 200): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text)
}
