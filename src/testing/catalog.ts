/**
 * What a reference server offers: tools, resources and prompts, declared by the test that serves them.
 */
import type {JsonObject} from './protocol.ts'
import type {TaskSupport} from './tasks.ts'

/** The levels of `notifications/message`. [spec server utilities, logging] */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'

/** What a tool's handler can do while it runs; everything it sends goes on the call's own stream. */
export interface ToolContext {
  /** The session the call runs in (undefined on a server that mints none). */
  readonly sessionId: string | undefined
  /** Sends `notifications/progress`, only when the call carried a progress token. */
  progress(progress: number, total?: number, message?: string): void
  /** Sends a log message (`notifications/message`). */
  log(level: LogLevel, data: unknown, logger?: string): void
  /**
   * Sends a server-to-client request and resolves with the client's whole JSON-RPC answer (`result` or
   * `error`). It stays pending on the session, whichever stream carried it, until the client answers it.
   */
  request(method: string, params?: JsonObject): Promise<JsonObject>
  /** `elicitation/create`: resolves with the client's result; rejects with {@link ClientAnswerError} on an error answer. */
  elicit(params: JsonObject): Promise<JsonObject>
  /** `sampling/createMessage`: resolves with the client's result; rejects with {@link ClientAnswerError} on an error answer. */
  sample(params: JsonObject): Promise<JsonObject>
}

/** The client answered a server-to-client request with a JSON-RPC error. */
export class ClientAnswerError extends Error {
  /** The JSON-RPC error code of the answer. */
  readonly code: number
  constructor(method: string, error: {code?: unknown; message?: unknown}) {
    super(`${method} was answered with an error: ${String(error.message)}`)
    this.name = 'ClientAnswerError'
    this.code = typeof error.code === 'number' ? error.code : 0
  }
}

/** What `tools/call` returns. */
export interface ToolResult {
  /** Content blocks, e.g. `{type: 'text', text: '...'}`. */
  content: JsonObject[]
  /** Structured output, for a tool with an output schema. @defaultValue none */
  structuredContent?: JsonObject | undefined
  /** The tool failed; the content says why. @defaultValue false */
  isError?: boolean | undefined
}

export interface ToolDefinition {
  /** The name `tools/call` names; unique on the server. */
  name: string
  /** Listed by `tools/list`. @defaultValue none */
  description?: string | undefined
  /**
   * The JSON Schema of the arguments, listed by `tools/list`. The server checks only its `required` names.
   * @defaultValue `{type: 'object'}`
   */
  inputSchema?: JsonObject | undefined
  /** The JSON Schema of the result's `structuredContent`, listed by `tools/list` (the server does not check it). @defaultValue none */
  outputSchema?: JsonObject | undefined
  /**
   * Whether a client may call the tool as a task (2025-11-25), listed as `execution.taskSupport`. A server with such
   * a tool declares the `tasks` capability; a call of the wrong kind is refused with -32601.
   * @defaultValue 'forbidden'
   */
  taskSupport?: TaskSupport | undefined
  /**
   * Runs one call. An error it throws becomes a result with `isError: true` and the error's message
   * ([spec server tools, error handling]: a tool's failure is reported in its result).
   */
  handler(args: JsonObject, context: ToolContext): ToolResult | Promise<ToolResult>
}

export interface ResourceDefinition {
  /** The URI `resources/read` names; unique on the server. */
  uri: string
  /** Listed by `resources/list`. */
  name: string
  /** Listed by `resources/list`. @defaultValue none */
  description?: string | undefined
  /** Listed by `resources/list`, and the MIME type of the text `read` returns as a string. @defaultValue none */
  mimeType?: string | undefined
  /** What `resources/read` returns: a string is one text content carrying this resource's URI and MIME type. */
  read(): string | JsonObject[] | Promise<string | JsonObject[]>
}

export interface PromptArgument {
  name: string
  /** @defaultValue none */
  description?: string | undefined
  /** `prompts/get` without it is refused (-32602). @defaultValue false */
  required?: boolean | undefined
}

export interface PromptDefinition {
  /** The name `prompts/get` names; unique on the server. */
  name: string
  /** Listed by `prompts/list` and returned by `prompts/get`. @defaultValue none */
  description?: string | undefined
  /** Listed by `prompts/list`. @defaultValue none */
  arguments?: PromptArgument[] | undefined
  /** The messages of `prompts/get`, from the arguments given (every required one is there). */
  get(args: Record<string, string>): JsonObject[] | Promise<JsonObject[]>
}

/** The declared offer, by name (URI for resources). */
export interface Catalog {
  tools: ReadonlyMap<string, ToolDefinition>
  resources: ReadonlyMap<string, ResourceDefinition>
  prompts: ReadonlyMap<string, PromptDefinition>
}

/** Indexes definitions by `key`; throws a TypeError naming `what` on a malformed or repeated one. */
function index<T extends object>(list: readonly T[], what: string, key: keyof T, run: keyof T): Map<string, T> {
  const map = new Map<string, T>()
  for (const [at, item] of list.entries()) {
    const name = (item as Record<keyof T, unknown>)[key]
    if (typeof name !== 'string' || name === '')
      throw new TypeError(`${what}[${at}].${String(key)} must be a non-empty string`)
    if (typeof (item as Record<keyof T, unknown>)[run] !== 'function')
      throw new TypeError(`${what}[${at}].${String(run)} must be a function`)
    if (map.has(name)) throw new TypeError(`${what}: ${name} is declared twice`)
    map.set(name, item)
  }
  return map
}

const taskSupports: readonly (TaskSupport | undefined)[] = [undefined, 'forbidden', 'optional', 'required']

export function createCatalog(
  tools: readonly ToolDefinition[],
  resources: readonly ResourceDefinition[],
  prompts: readonly PromptDefinition[],
): Catalog {
  for (const [at, tool] of tools.entries())
    if (!taskSupports.includes(tool.taskSupport))
      throw new TypeError(`options.tools[${at}].taskSupport must be 'forbidden', 'optional' or 'required'`)
  return {
    tools: index(tools, 'options.tools', 'name', 'handler'),
    resources: index(resources, 'options.resources', 'uri', 'read'),
    prompts: index(prompts, 'options.prompts', 'name', 'get'),
  }
}

/** The `capabilities` of the initialize result: what the catalog offers, and logging, which every tool may use. */
export function capabilitiesOf(catalog: Catalog): JsonObject {
  const tasks = [...catalog.tools.values()].some((tool) => (tool.taskSupport ?? 'forbidden') !== 'forbidden')
  return {
    tools: {},
    logging: {},
    ...(catalog.resources.size > 0 ? {resources: {}} : {}),
    ...(catalog.prompts.size > 0 ? {prompts: {}} : {}),
    // [spec 2025-11-25 tasks, capabilities] tools/call may run as a task; tasks/list and tasks/cancel are served.
    ...(tasks ? {tasks: {list: {}, cancel: {}, requests: {tools: {call: {}}}}} : {}),
  }
}
