import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {TransportError} from '../errors.ts'
import {isHeaderName} from '../policy/limits.ts'

/**
 * The headers of the 2026-07-28 era (docs/design.md#eras), derived from each message as the v2 SDK's transport
 * derives them: from the body, so that they never contradict it.
 */

/** The `_meta` key of a request's per-request envelope that names its protocol version. */
const versionMetaKey = 'io.modelcontextprotocol/protocolVersion'
/** [spec 2026-07-28 transports, standard request headers] the body field `Mcp-Name` mirrors, per method. */
const nameSources: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
])
/**
 * Headers the transport alone sets: a caller's per-request value for one is dropped (the v2 SDK's list, and the
 * resumption headers of this transport), so that no header can disagree with the body or the session. The v2
 * list's `content-type` and `accept` need no entry: `exchange` (src/wire/http.ts) sets both after these.
 */
const reservedHeaders = new Set([
  'authorization',
  'dpop',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
  'last-event-id',
])
/** What an HTTP field value may carry as it is: visible ASCII, space and tab. */
const plainValue = /^[\t\x20-\x7E]*$/
const base64Prefix = '=?base64?'
const base64Suffix = '?='

/** The extra headers of one POST, and the protocol version its body claims (a 2026-07-28 request), if any. */
export interface RequestHeaders {
  readonly headers: Readonly<Record<string, string>>
  readonly envelopeVersion: string | undefined
}

/** The protocol version `message`'s per-request `_meta` envelope names: only 2026-07-28 requests carry one. */
export function envelopeVersionOf(message: JSONRPCMessage): string | undefined {
  const {method, id, params} = message as {method?: unknown; id?: unknown; params?: {_meta?: Record<string, unknown>}}
  if (typeof method !== 'string' || id === undefined) return undefined
  const version = params?._meta?.[versionMetaKey]
  return typeof version === 'string' ? version : undefined
}

/**
 * The headers `message` goes out with besides the session's: the caller's per-request `headers` (the v2
 * `TransportSendOptions.headers`, where the v2 Client puts the `Mcp-Param-*` headers of a tool's `x-mcp-header`
 * arguments), minus the reserved ones; then, for a request whose body claims a protocol version, that version,
 * `Mcp-Method` and `Mcp-Name`. Throws a `protocol` TransportError for a header that cannot go on the wire, before
 * anything is sent.
 */
export function requestHeaders(
  message: JSONRPCMessage,
  perRequest: Readonly<Record<string, string>> | undefined,
): RequestHeaders {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(perRequest ?? {})) {
    if (!isHeaderName(name)) throw invalid(`the header name ${JSON.stringify(name)} is not an HTTP token`)
    if (reservedHeaders.has(name.toLowerCase())) continue
    // The value is not shown: a per-request header may be a credential.
    if (typeof value !== 'string' || !plainValue.test(value))
      throw invalid(
        `the value of header ${name} is not visible ASCII (encode it first, as the v2 Client encodes Mcp-Param-* values)`,
      )
    headers[name] = value
  }
  const envelopeVersion = envelopeVersionOf(message)
  if (envelopeVersion === undefined) return {headers, envelopeVersion}
  // The envelope is in `params._meta`: a request with one has params.
  const {method, params} = message as {method: string; params: Record<string, unknown>}
  // [spec 2026-07-28 transports, standard request headers] every request names its version and method...
  if (!plainValue.test(envelopeVersion) || !plainValue.test(method))
    throw invalid(`the method or protocol version of this request is not visible ASCII`)
  headers['mcp-protocol-version'] = envelopeVersion
  headers['mcp-method'] = method
  // ...and a named one its name, Base64-wrapped when it is not plain ASCII.
  const field = nameSources.get(method)
  const name = field === undefined ? undefined : params[field]
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name)
  return {headers, envelopeVersion}
}

/**
 * [spec 2026-07-28 transports, value encoding] a value that is not a safe plain field value (non-ASCII, control
 * characters, leading or trailing whitespace, empty, or already in the sentinel's form) goes as
 * `=?base64?<Base64 of its UTF-8>?=`; any other as it is.
 */
export function encodeHeaderValue(value: string): string {
  const plain =
    value !== '' &&
    value === value.trim() &&
    plainValue.test(value) &&
    !(value.startsWith(base64Prefix) && value.endsWith(base64Suffix))
  if (plain) return value
  let binary = ''
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte)
  return `${base64Prefix}${btoa(binary)}${base64Suffix}`
}

function invalid(why: string): TransportError {
  return new TransportError('protocol', `The request was not sent: ${why}`)
}
