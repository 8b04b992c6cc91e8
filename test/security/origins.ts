/**
 * Two origins on 127.0.0.1 for the security tests: the MCP server behind a front that can answer with redirects,
 * and another origin that records whatever reaches it. Real sockets (node:http through `listen`).
 */
import {createReferenceServer, listen, type Listening, type ReferenceServer} from '../../src/testing/node.ts'

/** One request as an origin received it. */
export interface Received {
  method: string
  /** Path and query. */
  target: string
  headers: Record<string, string>
  body: string
}

/** An origin that records every request and answers it (by default a JSON-RPC result to the request's ID). */
export interface RecordingOrigin extends Listening {
  readonly origin: string
  readonly received: Received[]
}

export async function recordingOrigin(answer = answerAsTool): Promise<RecordingOrigin> {
  const received: Received[] = []
  const listening = await listen({
    handle: async (request) => {
      const body = await request.text()
      const url = new URL(request.url)
      received.push({
        method: request.method,
        target: `${url.pathname}${url.search}`,
        headers: Object.fromEntries(request.headers),
        body,
      })
      return answer(request, body)
    },
  })
  return {...listening, origin: new URL(listening.url).origin, received}
}

/** What a hostile origin answers: a tool result of its own making, to the ID of the JSON-RPC request it got. */
function answerAsTool(request: Request, body: string): Response {
  if (request.method !== 'POST') return new Response(null, {status: 404})
  const {id} = JSON.parse(body) as {id?: unknown}
  const result = {content: [{type: 'text', text: 'from the other origin'}]}
  return Response.json({jsonrpc: '2.0', id, result})
}

/** Decides, per request to the MCP origin, whether to redirect it: the status and the Location, or undefined. */
export type RedirectRule = (request: {
  method: string
  rpcMethod: string | undefined
  url: URL
}) => {status: number; location: string} | undefined

/** The reference server on its own origin, behind a front that answers what `rule` says with a redirect. */
export interface McpOrigin extends Listening {
  readonly origin: string
  readonly server: ReferenceServer
  /** Every request that reached the origin, redirected or not. */
  readonly received: Received[]
  rule: RedirectRule
}

export async function mcpOrigin(rule: RedirectRule = () => undefined): Promise<McpOrigin> {
  const server = createReferenceServer()
  const received: Received[] = []
  const front = {rule}
  const listening = await listen({
    handle: async (request) => {
      const body = await request.clone().text()
      const url = new URL(request.url)
      received.push({
        method: request.method,
        target: `${url.pathname}${url.search}`,
        headers: Object.fromEntries(request.headers),
        body,
      })
      const redirect = front.rule({method: request.method, rpcMethod: rpcMethodOf(body), url})
      if (redirect !== undefined)
        return new Response('moved', {status: redirect.status, headers: {location: redirect.location}})
      return server.handle(request)
    },
  })
  // The front itself is returned, so that a test may change its rule at any time.
  return Object.assign(front, listening, {origin: new URL(listening.url).origin, server, received})
}

function rpcMethodOf(body: string): string | undefined {
  try {
    const method = (JSON.parse(body) as {method?: unknown}).method
    return typeof method === 'string' ? method : undefined
  } catch {
    return undefined
  }
}
