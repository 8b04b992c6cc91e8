/**
 * What the reference server answers to each JSON-RPC request: the declared tools, resources and prompts.
 */
import {capabilitiesOf, ClientAnswerError, type Catalog, type ToolContext, type ToolDefinition} from './catalog.ts'
import {errorCodes, isObject, type JsonObject, type RequestId} from './protocol.ts'
import type {Session} from './session.ts'
import {relatedTaskKey, taskRefusal, type Settle} from './tasks.ts'

/** Where a request runs. */
export interface CallEnvironment {
  catalog: Catalog
  session: Session
  /** Writes a notification or a server request on the call's stream (or wherever it can go). */
  send: (message: JsonObject) => void
  /** The stream `send` writes to, if any: a server request records where it was first sent. */
  streamId: string | undefined
  /** Counts one execution of a tool. */
  executed: (tool: string) => void
  /** Writes a message on the session's standalone stream, if one is open: where a task's messages go. */
  later: (message: JsonObject) => void
  /** A task ID never handed out before, restarts included. */
  nextTaskId: () => string
  /** The `pollInterval` every task asks for (`taskPollIntervalMs`). */
  taskPollIntervalMs: number
}

type Answer = {result: unknown} | {error: {code: number; message: string}}

const failure = (code: number, message: string): Answer => ({error: {code, message}})

/** Runs one request; resolves with its response, never rejects. */
export async function execute(request: JsonObject, environment: CallEnvironment): Promise<JsonObject> {
  const params = isObject(request['params']) ? request['params'] : {}
  const {catalog} = environment
  const method = String(request['method'])
  let answer: Answer
  try {
    // [spec basic lifecycle, capability negotiation] resources, prompts and tasks are served only when offered.
    const family = method.slice(0, method.indexOf('/'))
    const offered = ['resources', 'prompts', 'tasks'].includes(family) ? family in capabilitiesOf(catalog) : true
    switch (offered ? method : undefined) {
      case 'tools/call':
        answer = await callTool(params, environment)
        break
      case 'tools/list':
        answer = {
          result: {
            tools: [...catalog.tools.values()].map(({name, description, inputSchema, outputSchema, taskSupport}) => ({
              name,
              description,
              inputSchema: inputSchema ?? {type: 'object'},
              outputSchema,
              ...(taskSupport === undefined ? {} : {execution: {taskSupport}}),
            })),
          },
        }
        break
      case 'resources/list':
        answer = {
          result: {
            resources: [...catalog.resources.values()].map(({uri, name, description, mimeType}) => ({
              uri,
              name,
              description,
              mimeType,
            })),
          },
        }
        break
      case 'resources/templates/list':
        answer = {result: {resourceTemplates: []}}
        break
      case 'resources/read':
        answer = await readResource(params, catalog)
        break
      case 'prompts/list':
        answer = {
          result: {
            prompts: [...catalog.prompts.values()].map((prompt) => ({
              name: prompt.name,
              description: prompt.description,
              arguments: prompt.arguments,
            })),
          },
        }
        break
      case 'prompts/get':
        answer = await getPrompt(params, catalog)
        break
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/list':
      case 'tasks/cancel':
        answer = await environment.session.tasks.answer(method, params)
        break
      case 'ping':
      case 'logging/setLevel':
        answer = {result: {}}
        break
      default:
        answer = failure(errorCodes.methodNotFound, `Method not found: ${method}`)
    }
  } catch (error) {
    // A resource's `read` or a prompt's `get` that throws.
    answer = failure(errorCodes.internalError, messageOf(error))
  }
  return {jsonrpc: '2.0', id: request['id'] as RequestId, ...answer}
}

async function callTool(params: JsonObject, environment: CallEnvironment): Promise<Answer> {
  const name = String(params['name'])
  const tool = environment.catalog.tools.get(name)
  if (tool === undefined) return failure(errorCodes.invalidParams, `Unknown tool: ${name}`)
  const asTask = isObject(params['task'])
  const refused = taskRefusal(tool.taskSupport, asTask, name)
  if (refused !== undefined) return failure(errorCodes.methodNotFound, refused)
  const args = isObject(params['arguments']) ? params['arguments'] : {}
  const missing = missingArguments(tool, args)
  if (missing.length > 0)
    return failure(errorCodes.invalidParams, `Invalid arguments for ${name}: missing ${missing.join(', ')}`)
  environment.executed(name)
  const progressToken = isObject(params['_meta']) ? params['_meta']['progressToken'] : undefined
  if (asTask) return {result: {task: startTask(tool, args, params, environment, progressToken)}}
  return {result: await run(tool, args, contextFor(environment, progressToken))}
}

/** Runs a tool; a failure it throws is its result. */
async function run(tool: ToolDefinition, args: JsonObject, context: ToolContext): Promise<JsonObject> {
  try {
    return (await tool.handler(args, context)) as unknown as JsonObject
  } catch (error) {
    // [spec server tools, error handling] a tool's failure is reported in its result, for the model to see.
    return {content: [{type: 'text', text: messageOf(error)}], isError: true}
  }
}

/**
 * Starts `tool` as a task and returns the task at once; the tool runs on. Its answer ends the call's stream, so
 * what it sends later goes to the session's standalone stream, tied to the task. A tool result with `isError`
 * fails the task.
 */
function startTask(
  tool: ToolDefinition,
  args: JsonObject,
  params: JsonObject,
  environment: CallEnvironment,
  progressToken: unknown,
): JsonObject {
  const {task, settle} = environment.session.tasks.create(
    environment.nextTaskId(),
    params,
    environment.taskPollIntervalMs,
  )
  // [spec 2025-11-25 tasks, related-task metadata] a message of a task names it.
  const later = (message: JsonObject): void => {
    const messageParams = isObject(message['params']) ? message['params'] : {}
    const meta = {
      ...(isObject(messageParams['_meta']) ? messageParams['_meta'] : {}),
      [relatedTaskKey]: {taskId: task.taskId},
    }
    environment.later({...message, params: {...messageParams, _meta: meta}})
  }
  const context = contextFor({...environment, send: later, streamId: undefined}, progressToken, settle)
  void run(tool, args, context).then((result) =>
    settle({status: result['isError'] === true ? 'failed' : 'completed', result}),
  )
  return task as unknown as JsonObject
}

function contextFor(environment: CallEnvironment, progressToken: unknown, settle?: Settle): ToolContext {
  const {session, send} = environment
  /** Server requests of a task awaiting the client: while there is one, the task is `input_required`. */
  let asking = 0
  const notify = (method: string, params: JsonObject): void => {
    send({jsonrpc: '2.0', method, params})
  }
  const request = (method: string, params: JsonObject = {}): Promise<JsonObject> => {
    const id = `srv-${++session.nextServerRequest}`
    const message = {jsonrpc: '2.0', id, method, params}
    if (asking++ === 0) settle?.({status: 'input_required'})
    return new Promise<JsonObject>((resolve) => {
      // Pending server requests live on the session, whichever stream carried them
      // (docs/design.md#what-a-server-must-do).
      const answered = (answer: JsonObject): void => {
        if (--asking === 0) settle?.({status: 'working'})
        resolve(answer)
      }
      session.pending.set(id, {message, streamId: environment.streamId, resolve: answered})
      send(message)
    })
  }
  const result = async (method: string, params: JsonObject): Promise<JsonObject> => {
    const answer = await request(method, params)
    if (isObject(answer['error'])) throw new ClientAnswerError(method, answer['error'])
    return isObject(answer['result']) ? answer['result'] : {}
  }
  return {
    sessionId: session.id,
    progress: (progress, total, message) => {
      // [spec utilities, progress] progress is sent only for a request that carried a progress token.
      if (progressToken !== undefined) notify('notifications/progress', {progressToken, progress, total, message})
    },
    log: (level, data, logger) => {
      notify('notifications/message', {level, data, logger})
    },
    request,
    elicit: (params) => result('elicitation/create', params),
    sample: (params) => result('sampling/createMessage', params),
  }
}

/** The `required` names of the tool's input schema that `args` lacks. */
function missingArguments(tool: ToolDefinition, args: JsonObject): string[] {
  const required = tool.inputSchema?.['required']
  return Array.isArray(required)
    ? required.filter((name): name is string => typeof name === 'string' && !(name in args))
    : []
}

async function readResource(params: JsonObject, catalog: Catalog): Promise<Answer> {
  const uri = String(params['uri'])
  const resource = catalog.resources.get(uri)
  // [spec server resources, error handling] an unknown resource is -32002.
  if (resource === undefined) return failure(errorCodes.resourceNotFound, `Resource not found: ${uri}`)
  const contents = await resource.read()
  return {
    result: {contents: typeof contents === 'string' ? [{uri, mimeType: resource.mimeType, text: contents}] : contents},
  }
}

async function getPrompt(params: JsonObject, catalog: Catalog): Promise<Answer> {
  const name = String(params['name'])
  const prompt = catalog.prompts.get(name)
  if (prompt === undefined) return failure(errorCodes.invalidParams, `Unknown prompt: ${name}`)
  const given = isObject(params['arguments']) ? params['arguments'] : {}
  const args = Object.fromEntries(Object.entries(given).map(([key, value]) => [key, String(value)]))
  const missing = (prompt.arguments ?? [])
    .filter((argument) => argument.required === true && !(argument.name in args))
    .map((argument) => argument.name)
  // [spec server prompts, error handling] missing required arguments are -32602.
  if (missing.length > 0)
    return failure(errorCodes.invalidParams, `Missing arguments for ${name}: ${missing.join(', ')}`)
  return {result: {description: prompt.description, messages: await prompt.get(args)}}
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
