/**
 * Tasks of the 2025-11-25 revision on the reference server: a tool that declares `taskSupport` runs as a task when
 * its `tools/call` asks for one (`params.task`). The call is answered at once with the task; the tool runs on, and
 * the client polls `tasks/get`, then takes the tool's result with `tasks/result`. A task belongs to the session
 * that made it.
 */
import {errorCodes, isObject, type JsonObject} from './protocol.ts'

/**
 * How a tool may be called as a task ([spec 2025-11-25 tasks, tool-level negotiation]): never (`forbidden`), when
 * the client asks (`optional`), or only so (`required`). The wrong kind of call is refused with -32601.
 */
export type TaskSupport = 'forbidden' | 'optional' | 'required'

/** The statuses of a task; the last three are terminal. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

/** A task as `tasks/get` reports it. */
export interface TaskView {
  taskId: string
  status: TaskStatus
  statusMessage?: string | undefined
  createdAt: string
  lastUpdatedAt: string
  /** How long the server keeps the task, in ms: the client's `params.task.ttl`, else one hour. */
  ttl: number
  /** How often the client should poll, in ms (`taskPollIntervalMs`). */
  pollInterval: number
}

interface Task extends TaskView {
  /** The tool's result once the task is terminal (a cancelled task's never comes). */
  result: JsonObject | undefined
  /** Resolves once the task is terminal: `tasks/result` waits for it. */
  readonly ended: Promise<void>
  end(): void
}

const terminal: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled'])
const defaultTtlMs = 3_600_000
/** The `_meta` key that ties a message to its task. [spec 2025-11-25 tasks, related-task metadata] */
export const relatedTaskKey = 'io.modelcontextprotocol/related-task'

type Answer = {result: unknown} | {error: {code: number; message: string}}

/** The tasks of one session. */
export class SessionTasks {
  readonly #tasks = new Map<string, Task>()

  /** Starts task `taskId` for a `tools/call` whose `params.task` asked for one; returns the `CreateTaskResult`. */
  create(taskId: string, params: JsonObject, pollInterval: number): {task: TaskView; settle: Settle} {
    const asked = isObject(params['task']) ? params['task']['ttl'] : undefined
    const now = new Date().toISOString()
    let end = (): void => {}
    const ended = new Promise<void>((resolve) => (end = resolve))
    const task: Task = {
      taskId,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttl: typeof asked === 'number' && Number.isInteger(asked) && asked >= 0 ? asked : defaultTtlMs,
      pollInterval,
      result: undefined,
      ended,
      end,
    }
    this.#tasks.set(taskId, task)
    return {task: viewOf(task), settle: (update) => this.#settle(task, update)}
  }

  /** Answers `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel`. */
  async answer(method: string, params: JsonObject): Promise<Answer> {
    if (method === 'tasks/list') return {result: {tasks: [...this.#tasks.values()].map(viewOf)}}
    const task = this.#tasks.get(String(params['taskId']))
    // [spec 2025-11-25 tasks, error handling] an unknown task (or another session's) is -32602.
    if (task === undefined) return failure(`Task not found: ${String(params['taskId'])}`)
    switch (method) {
      case 'tasks/get':
        return {result: viewOf(task)}
      case 'tasks/result':
        // [spec 2025-11-25 tasks] tasks/result blocks until the task is terminal.
        await task.ended
        if (task.result === undefined) return failure(`Task ${task.taskId} was cancelled`)
        return {result: {...task.result, _meta: {[relatedTaskKey]: {taskId: task.taskId}}}}
      case 'tasks/cancel':
        if (terminal.has(task.status)) return failure(`Task ${task.taskId} is already ${task.status}`)
        this.#settle(task, {status: 'cancelled', statusMessage: 'Cancelled by the client'})
        return {result: viewOf(task)}
      default:
        return {error: {code: errorCodes.methodNotFound, message: `Method not found: ${method}`}}
    }
  }

  #settle(task: Task, update: SettleUpdate): void {
    // A cancelled task stays cancelled: what its tool returns later is dropped.
    if (terminal.has(task.status)) return
    task.status = update.status
    task.statusMessage = update.statusMessage
    task.lastUpdatedAt = new Date().toISOString()
    if (update.result !== undefined) task.result = update.result
    if (terminal.has(task.status)) task.end()
  }
}

interface SettleUpdate {
  status: TaskStatus
  statusMessage?: string | undefined
  result?: JsonObject | undefined
}
/** Moves a task on: to `input_required` and back while its tool waits for the client, to its end with its result. */
export type Settle = (update: SettleUpdate) => void

function viewOf(task: Task): TaskView {
  const {taskId, status, statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval} = task
  return {
    taskId,
    status,
    ...(statusMessage === undefined ? {} : {statusMessage}),
    createdAt,
    lastUpdatedAt,
    ttl,
    pollInterval,
  }
}

function failure(message: string): Answer {
  return {error: {code: errorCodes.invalidParams, message}}
}

/**
 * Why a `tools/call` of a tool with `support` cannot run as asked (as a task or not), or undefined when it can.
 * [spec 2025-11-25 tasks, tool-level negotiation] the wrong kind of call is -32601.
 */
export function taskRefusal(support: TaskSupport | undefined, asTask: boolean, name: string): string | undefined {
  if (asTask && (support ?? 'forbidden') === 'forbidden') return `Tool ${name} cannot run as a task`
  if (!asTask && support === 'required') return `Tool ${name} runs only as a task`
  return undefined
}
