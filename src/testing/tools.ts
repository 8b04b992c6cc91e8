/**
 * The reference server's built-in tools: each one exercises one thing a client transport must survive.
 */
import type {ToolDefinition, ToolResult} from './catalog.ts'
import {wait, type JsonObject} from './protocol.ts'

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

/**
 * The built-in tools, each exercising one thing a client transport must survive. The default `tools` of a
 * reference server; spread them into your own list to keep them beside your tools. Each call makes a new set,
 * with its own `increment` counter.
 */
export function builtinTools(): ToolDefinition[] {
  let count = 0
  return [
    /** Returns its arguments: `echo: {...}`. */
    {name: 'echo', description: 'Returns its arguments.', handler: (args) => text(`echo: ${JSON.stringify(args)}`)},
    /** A side effect: bumps a counter that survives sessions and restarts, and returns its new value. */
    {
      name: 'increment',
      description: 'Bumps a counter kept across sessions and restarts.',
      handler: () => text(`count: ${++count}`),
    },
    {
      name: 'slow',
      description: '`steps` progress notifications (default 3), `delayMs` apart (default 0), then a result.',
      handler: async (args, context) => {
        const steps = numberArg(args, 'steps', 3)
        for (let step = 1; step <= steps; step++) {
          await wait(numberArg(args, 'delayMs', 0))
          context.progress(step, steps)
        }
        return text(`done after ${steps} steps`)
      },
    },
    {
      name: 'ask',
      description:
        'Asks the client mid-call: `count` requests (default 1) of `kind` `sampling` (the default) or `elicitation`, all at once; returns the answers, comma-separated.',
      handler: async (args, context) => {
        const count = numberArg(args, 'count', 1)
        const elicit = args['kind'] === 'elicitation'
        const questions = Array.from({length: count}, (_, index) => {
          const question = `question ${index + 1}`
          return elicit
            ? context.request('elicitation/create', {
                message: question,
                requestedSchema: {type: 'object', properties: {answer: {type: 'string'}}},
              })
            : context.request('sampling/createMessage', {
                messages: [{role: 'user', content: {type: 'text', text: question}}],
                maxTokens: 10,
              })
        })
        const answers = await Promise.all(questions)
        const result = text(answers.map(answerText).join(', '))
        return answers.some((answer) => 'error' in answer) ? {...result, isError: true} : result
      },
    },
  ]
}
