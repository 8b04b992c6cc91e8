import {
  createCatalog,
  type Catalog,
  type PromptDefinition,
  type ResourceDefinition,
  type ToolDefinition,
} from './catalog.ts'
import {checkMode, type ServerMode} from './modes.ts'
import {builtinTools} from './tools.ts'
import {isSupportedVersion, supportedProtocolVersions} from './protocol.ts'

export interface ReferenceServerOptions {
  /**
   * The tools the server offers, each with its handler. Spread `builtinTools()` into the list to keep the
   * built-in ones beside yours.
   * @defaultValue `builtinTools()`: `echo`, `increment`, `slow`, `ask`
   */
  tools?: readonly ToolDefinition[] | undefined
  /**
   * The resources `resources/list` and `resources/read` serve. The `resources` capability is declared when
   * there is at least one.
   * @defaultValue `[]`
   */
  resources?: readonly ResourceDefinition[] | undefined
  /**
   * The prompts `prompts/list` and `prompts/get` serve. The `prompts` capability is declared when there is at
   * least one.
   * @defaultValue `[]`
   */
  prompts?: readonly PromptDefinition[] | undefined
  /**
   * The protocol version negotiated on `initialize`, whatever the client asks for (to test an older server).
   * @defaultValue the client's, when supported; otherwise the latest supported (2025-11-25)
   */
  protocolVersion?: string | undefined
  /**
   * Mint a session on `initialize`. False makes a server without sessions: no `Mcp-Session-Id` is sent or
   * required, and a `Last-Event-ID` (which needs a session) is always refused.
   * @defaultValue true
   */
  sessions?: boolean | undefined
  /**
   * The session IDs to hand out, in order; after them, `session-<n>`. IDs are never reused, restarts included.
   * @defaultValue `[]`
   */
  sessionIds?: readonly string[] | undefined
  /**
   * Garbage-collects a session no request has named for this long (checked as each request arrives, so no
   * timer runs). Streams have no such limit: they live as long as their session.
   * @defaultValue `Infinity`: sessions end only by `DELETE` or a fault
   */
  sessionIdleMs?: number | undefined
  /**
   * `retry` (ms) sent with the priming event of every POST stream.
   * @defaultValue none
   */
  retryMs?: number | undefined
  /**
   * Answer every request with one JSON body instead of an SSE stream. Notifications and server requests of a
   * call then go to the session's standalone stream.
   * @defaultValue false
   */
  json?: boolean | undefined
  /**
   * Offer the standalone GET stream. False answers GET with 405.
   * @defaultValue true
   */
  standalone?: boolean | undefined
  /**
   * Start every POST stream with a priming event (an event ID and empty data).
   * @defaultValue true when the negotiated version is 2025-11-25 or later
   */
  priming?: boolean | undefined
  /**
   * What a stream attached without `Last-Event-ID` does with the session's pending server-to-client requests:
   * write each of them again, or cancel each one (`notifications/cancelled` on the new stream, and the tool
   * that asked gets a JSON-RPC error as the answer).
   * @defaultValue 're-emit'
   */
  pendingOnAttach?: 're-emit' | 'cancel' | undefined
  /**
   * How reconnects are served: the boundary a server must keep
   * ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/design.md#what-a-server-must-do | what a server must do}),
   * or one of three faulty modes (see {@link ServerMode}). Switchable at run time through `server.mode`.
   * @defaultValue 'correct'
   */
  mode?: ServerMode | undefined
  /**
   * The `pollInterval` (ms) of every task, the wait the server asks of a client between two `tasks/get`. Tasks run
   * tools that declare `taskSupport`.
   * @defaultValue 100
   */
  taskPollIntervalMs?: number | undefined
  /**
   * The `serverInfo` of the initialize result.
   * @defaultValue `{name: 'reference-server', version: '1.0.0'}`
   */
  serverInfo?: {name: string; version: string} | undefined
}

export interface ResolvedServerOptions {
  catalog: Catalog
  protocolVersion: string | undefined
  sessions: boolean
  sessionIds: readonly string[]
  sessionIdleMs: number
  retryMs: number | undefined
  json: boolean
  standalone: boolean
  priming: boolean | undefined
  pendingOnAttach: 're-emit' | 'cancel'
  mode: ServerMode
  taskPollIntervalMs: number
  serverInfo: {name: string; version: string}
}

export function resolveServerOptions(options: ReferenceServerOptions = {}): ResolvedServerOptions {
  const {protocolVersion, retryMs, sessionIdleMs = Number.POSITIVE_INFINITY, mode = 'correct'} = options
  const {taskPollIntervalMs = 100} = options
  if (protocolVersion !== undefined && !isSupportedVersion(protocolVersion)) {
    throw new TypeError(`options.protocolVersion must be one of ${supportedProtocolVersions.join(', ')}`)
  }
  if (retryMs !== undefined && !(Number.isInteger(retryMs) && retryMs >= 0))
    throw new TypeError('options.retryMs must be a whole number of ms')
  if (!(sessionIdleMs > 0)) throw new TypeError('options.sessionIdleMs must be more than 0')
  if (!(Number.isInteger(taskPollIntervalMs) && taskPollIntervalMs > 0))
    throw new TypeError('options.taskPollIntervalMs must be a whole number of ms, more than 0')
  checkMode(mode, 'options.mode')
  return {
    catalog: createCatalog(options.tools ?? builtinTools(), options.resources ?? [], options.prompts ?? []),
    protocolVersion,
    sessions: options.sessions ?? true,
    sessionIds: options.sessionIds ?? [],
    sessionIdleMs,
    retryMs,
    json: options.json ?? false,
    standalone: options.standalone ?? true,
    priming: options.priming,
    pendingOnAttach: options.pendingOnAttach ?? 're-emit',
    mode,
    taskPollIntervalMs,
    serverInfo: options.serverInfo ?? {name: 'reference-server', version: '1.0.0'},
  }
}
