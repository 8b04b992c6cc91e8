/**
 * How the demo and the playground put results and errors into words. No Node built-in: the playground's page
 * imports it too.
 */
export {transportErrorCodeOf as codeOf} from '../src/index.ts'

/** An error's message; a client process sends errors as their message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The text of a tool result (a `callTool` result, or the JSON-RPC response carrying one), or of its error. */
export function resultText(message: unknown): string {
  const response = message as {
    result?: {content?: {text?: string}[]}
    content?: {text?: string}[]
    error?: {message?: string}
  }
  if (response.error !== undefined) return `error: ${response.error.message ?? '?'}`
  const content = response.result?.content ?? response.content
  return content?.map((item) => item.text ?? '').join(' ') ?? JSON.stringify(message)
}
