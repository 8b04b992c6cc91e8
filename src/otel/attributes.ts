import type {Attributes} from '@opentelemetry/api'
import {sha256} from '@noble/hashes/sha2.js'
import {bytesToHex, utf8ToBytes} from '@noble/hashes/utils.js'
import {attribute} from './names.ts'

/**
 * How `mcp.session.id` is recorded. `'digest'`: `sha256:` and the first 16 hex digits of the SHA-256 of the ID, the
 * same on both halves (so a client's spans and a server's can be matched) and of no use to whoever reads it. `'raw'`:
 * the ID itself, which on many servers is a capability: whoever has it may act in the session.
 */
export type SessionIdAttribute = 'digest' | 'raw'

/** Records session IDs as `mode` says; the digest of the latest ID is kept, as a session's ID rarely changes. */
export class SessionIds {
  readonly #mode: SessionIdAttribute
  #last: {id: string; value: string} | undefined

  constructor(mode: SessionIdAttribute) {
    this.#mode = mode
  }

  /** The value of `mcp.session.id` for `id`. */
  value(id: string): string {
    if (this.#mode === 'raw') return id
    if (this.#last?.id !== id) this.#last = {id, value: `sha256:${bytesToHex(sha256(utf8ToBytes(id))).slice(0, 16)}`}
    return this.#last.value
  }
}

/**
 * A resource URI without what may be a secret: its user information, query and fragment
 * (`https://user:token@host/a?key=1#x` is `https://host/a`).
 */
export function safeUri(uri: string): string {
  return uri.replace(/[?#].*$/s, '').replace(/^([a-z][a-z\d+.-]*:\/\/)[^/@]*@/i, '$1')
}

/** The parts of a request the conventions name, read from its `params`. */
export interface Target {
  /** `{mcp.method.name} {target}`: the tool or prompt named, else the method alone. */
  spanName: string
  attributes: Attributes
}

/** [semconv mcp] the span name and the attributes of request or notification `method`, from its `params`. */
export function targetOf(method: string, params: {name?: unknown; uri?: unknown} | undefined): Target {
  const attributes: Attributes = {[attribute.method]: method}
  const name = typeof params?.name === 'string' ? params.name : undefined
  if (method === 'tools/call' && name !== undefined) {
    attributes[attribute.toolName] = name
    attributes[attribute.operation] = 'execute_tool'
    return {spanName: `${method} ${name}`, attributes}
  }
  if (method === 'prompts/get' && name !== undefined) {
    attributes[attribute.promptName] = name
    return {spanName: `${method} ${name}`, attributes}
  }
  // A resource URI is no low-cardinality target: an attribute only, never in the span name.
  if (typeof params?.uri === 'string') attributes[attribute.resourceUri] = safeUri(params.uri)
  return {spanName: method, attributes}
}

/** [semconv mcp] where the server is: its host and port (the default port of its scheme when the URL has none). */
export function serverAttributes(url: URL): Attributes {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  return {
    [attribute.serverAddress]: url.hostname,
    [attribute.serverPort]: port,
    // [semconv mcp, recording MCP transport] Streamable HTTP.
    [attribute.networkTransport]: 'tcp',
    [attribute.networkProtocol]: 'http',
  }
}
