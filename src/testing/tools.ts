/**
 * The reference server's built-in tools: each one exercises one thing a client transport must survive.
 */
import {wait, type JsonObject} from './protocol.ts'

/** What a tool can do while it runs. */
export interface ToolContext {
  readonly args: JsonObject
  /** Sends a notification on the call's stream (progress is only sent when the client asked for it). */
  progress(progress: number, total: number): void
  /** Sends a server-to-client request on the call's stream; resolves with the client's JSON-RPC answer. */
  request(method: string, params: JsonObject): Promise<JsonObject>
  /** The server's side-effect counter, shared by every session and kept across restarts. */
  increment(): number
}

export interface ToolResult {
  content: {type: 'text'; text: string}[]
  isError?: boolean
}

type Tool = (context: ToolContext) => Promise<ToolResult>

const text = (value: string): ToolResult => ({content: [{type: 'text', text: value}]})


const numberArg = (args: JsonObject, name: string, fallback: number): number => {
  const value = args[name]
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}

/** The text of an answer to `sampling/createMessage` or `elicitation/create`, or why there is none. */
function answerText(answer: JsonObject): string {
  const error = answer['error'] as {message?: unknown} | undefined
  if (error !== undefined) return `error: ${String(error.message)}`
  const result = (answer['result'] ?? {}) as {content?: unknown; action?: unknown}
  const content = result.content as {text?: unknown; answer?: unknown} | undefined
  if (typeof content?.text === 'string') return content.text
  if (content !== undefined && 'answer' in content) return String(content.answer)
  return typeof result.action === 'string' ? result.action : 'no answer'
}

const tools: Record<string, Tool> = {
  /** Returns its arguments: `echo: {...}`. */
  echo: ({args}) => Promise.resolve(text(`echo: ${JSON.stringify(args)}`)),
  /** A side effect: bumps a counter that survives sessions and restarts, and returns its new value. */
  increment: (context) => Promise.resolve(text(`count: ${context.increment()}`)),
  /** `steps` progress notifications (default 3), `delayMs` apart (default 0), then a result. */
  slow: async (context) => {
    const steps = numberArg(context.args, 'steps', 3)
    for (let step = 1; step <= steps; step++) {
      await wait(numberArg(context.args, 'delayMs', 0))
      context.progress(step, steps)
    }
    return text(`done after ${steps} steps`)
  },
  /**
   * Asks the client mid-call: `count` requests (default 1) of `kind` `sampling` (`sampling/createMessage`,
   * the default) or `elicitation` (`elicitation/create`), all at once; returns the answers, comma-separated.
   */
  ask: async (context) => {
    const count = numberArg(context.args, 'count', 1)
    const elicit = context.args['kind'] === 'elicitation'
    const questions = Array.from({length: count}, (_, index) => {
      const question = `question ${index + 1}`
      return elicit
        ? context.request('elicitation/create', {message: question, requestedSchema: {type: 'object', properties: {answer: {type: 'string'}}}})
        : context.request('sampling/createMessage', {messages: [{role: 'user', content: {type: 'text', text: question}}], maxTokens: 10})
    })
    const answers = await Promise.all(questions)
    const result = text(answers.map(answerText).join(', '))
    return answers.some((answer) => 'error' in answer) ? {...result, isError: true} : result
  },
}

/** The built-in tool called `name`, if there is one. */
export function toolNamed(name: string): Tool | undefined {
  return Object.hasOwn(tools, name) ? tools[name] : undefined
}

/** What `tools/list` returns. */
export const toolList = Object.keys(tools).map((name) => ({name, inputSchema: {type: 'object'}}))
