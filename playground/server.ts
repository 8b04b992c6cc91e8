/**
 * The playground's server: one Node HTTP server, one origin. Vite serves the page (its dev server, or a
 * production build), the reference server of `mcp-resumable-http/testing` answers `/mcp`, and `/__playground/*`
 * exposes the reference server's instrumentation and faults to the page.
 */
import {existsSync, rmSync} from 'node:fs'
import {mkdtemp} from 'node:fs/promises'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {build, createServer, preview, type Plugin} from 'vite'
import type {ServerMode} from '../src/testing/index.ts'
import {
  createReferenceServer,
  serveNodeRequest,
  type ReferenceServer,
  type ReferenceServerOptions,
} from '../src/testing/node.ts'
import {control, type PlaygroundState} from './state.ts'

export interface PlaygroundOptions {
  /** `dev`: Vite's dev server (the page rebuilt as it is edited); `build`: a production build, served as is. */
  serve?: 'dev' | 'build'
  host?: string
  /** @defaultValue 5173, or the next free port; 0: any free port */
  port?: number
  /** The reference server's options. @defaultValue `{retryMs: 300}` */
  server?: ReferenceServerOptions
}

export interface Playground {
  /** The page, e.g. `http://127.0.0.1:5173/`. */
  url: string
  reference: ReferenceServer
  close: () => Promise<void>
}

const modes: readonly ServerMode[] = ['correct', 'cursor-per-session', 'global-log']

/** The playground's sources: `playground/` of the package root (this file also runs compiled, from elsewhere). */
function playgroundRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory)
    if (parent === directory) throw new Error('package.json not found above the playground server')
    directory = parent
  }
  return join(directory, 'playground')
}

export async function startPlayground(options: PlaygroundOptions = {}): Promise<Playground> {
  const {serve = 'dev', host = '127.0.0.1', port = 5173} = options
  const reference = createReferenceServer(options.server ?? {retryMs: 300})
  const root = playgroundRoot()
  const common = {root, configFile: false as const, logLevel: 'warn' as const, plugins: [referencePlugin(reference)]}
  if (serve === 'dev') {
    const vite = await createServer({...common, server: {host, port, strictPort: port === 0}})
    await vite.listen()
    return {url: vite.resolvedUrls!.local[0]!, reference, close: () => vite.close()}
  }
  const outDir = await mkdtemp(join(tmpdir(), 'mcp-playground-'))
  // Vite's preview server exits the process on SIGTERM: the build goes with it.
  const removeBuild = (): void => rmSync(outDir, {recursive: true, force: true})
  process.once('exit', removeBuild)
  await build({...common, build: {outDir, emptyOutDir: true, reportCompressedSize: false, chunkSizeWarningLimit: 2000}})
  const server = await preview({...common, build: {outDir}, preview: {host, port, strictPort: port === 0}})
  return {
    url: server.resolvedUrls!.local[0]!,
    reference,
    close: async () => {
      await server.close()
      process.off('exit', removeBuild)
      removeBuild()
    },
  }
}

/** Mounts `/mcp` and `/__playground/*` in front of Vite's own middlewares, in dev and in preview. */
function referencePlugin(reference: ReferenceServer): Plugin {
  const middleware = (incoming: IncomingMessage, outgoing: ServerResponse, next: () => void): void => {
    const path = (incoming.url ?? '/').split('?')[0]!
    if (path === '/mcp') void serveNodeRequest(reference, incoming, outgoing)
    else if (path.startsWith('/__playground/'))
      void serveNodeRequest({handle: (request) => controlRequest(reference, request)}, incoming, outgoing)
    else next()
  }
  return {
    name: 'mcp-reference-server',
    configureServer: (server) => {
      server.middlewares.use(middleware)
    },
    configurePreviewServer: (server) => {
      server.middlewares.use(middleware)
    },
  }
}

async function controlRequest(reference: ReferenceServer, request: Request): Promise<Response> {
  const {pathname} = new URL(request.url)
  if (request.method === 'GET' && pathname === control.state)
    return Response.json(stateOf(reference), {headers: {'cache-control': 'no-store'}})
  if (request.method !== 'POST') return Response.json({error: 'not found'}, {status: 404})
  const body = (await request.json().catch(() => ({}))) as {sessionId?: unknown; mode?: unknown}
  switch (pathname) {
    case control.cut: {
      const live = reference
        .sessions()
        .reduce((count, session) => count + session.streams.filter((stream) => stream.connected).length, 0)
      reference.faults.disconnect({how: 'error'})
      return Response.json({cut: live})
    }
    case control.expire: {
      const sessionId = typeof body.sessionId === 'string' ? body.sessionId : undefined
      if (!reference.sessions().some((session) => sessionId === undefined || session.id === sessionId)) {
        return Response.json({error: `no session ${sessionId ?? ''}`}, {status: 409})
      }
      reference.faults.expireSession(sessionId)
      return Response.json({expired: sessionId ?? reference.sessions()[0]?.id})
    }
    case control.mode: {
      if (!modes.includes(body.mode as ServerMode))
        return Response.json({error: `mode must be one of ${modes.join(', ')}`}, {status: 400})
      reference.mode = body.mode as ServerMode
      return Response.json({mode: reference.mode})
    }
    default:
      return Response.json({error: 'not found'}, {status: 404})
  }
}

function stateOf(reference: ReferenceServer): PlaygroundState {
  const sessions = reference.sessions().map((session) => ({
    id: session.id,
    protocolVersion: session.protocolVersion,
    streams: session.streams.map((stream) => ({
      id: stream.id,
      kind: stream.kind,
      requestId: stream.requestId,
      events: stream.events.length,
      lastEventId: stream.events.at(-1)?.id,
      sent: stream.sent,
      replayed: stream.replayed,
      connected: stream.connected,
      finished: stream.finished,
    })),
    pending: session.pending.map(({id, method}) => ({id, method})),
  }))
  const posts: Record<string, number> = {}
  for (const entry of reference.requests('POST'))
    if (entry.rpcMethod !== undefined) posts[entry.rpcMethod] = (posts[entry.rpcMethod] ?? 0) + 1
  const replayedEvents = sessions.reduce(
    (sum, session) => sum + session.streams.reduce((total, stream) => total + stream.replayed, 0),
    0,
  )
  return {
    mode: reference.mode,
    executions: {...reference.executions},
    counters: {...reference.counters, replayedEvents},
    posts,
    sessions,
    log: reference.log.slice(-40),
  }
}
