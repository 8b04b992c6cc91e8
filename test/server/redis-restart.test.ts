/**
 * A server process killed (SIGKILL) while a client is cut off, and started again: with `ResumableEventStore` on a
 * `RedisEventLog` (a real redis-server), the call's stream is replayed by the new process from Redis, and the call
 * the old process finished reaches the client. The server is test/fixtures/restartable-server.ts, a child process
 * on the SDK's v1 or v2 Web-standard transport; the client reaches it through a TCP proxy that cuts its connection
 * and then refuses connections while the server is down.
 */
import {fork, type ChildProcess} from 'node:child_process'
import {createServer} from 'node:net'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import type {EventStoreMetrics, PendingRequestsMetrics} from '../../src/server.ts'
import {stripTypes} from '../fixtures/child-process.ts'
import {callTool, connectPeer, duplicates, until, type Kind, type Peer} from '../fixtures/interop.ts'
import {requireRedis, startRedis, type RunningRedis} from '../fixtures/redis-server.ts'
import {afterEventWith, startTcpProxy, type TcpProxy} from '../fixtures/tcp-proxy.ts'

let redis: RunningRedis | undefined
beforeAll(async () => {
  redis = await startRedis().catch(() => undefined)
}, 10_000)
afterAll(async () => {
  await redis?.stop()
})

type Message =
  | {type: 'listening'}
  | {type: 'tool-done'; stored: number}
  | {type: 'metrics'; sessions: Record<string, {store: EventStoreMetrics; pending: PendingRequestsMetrics}>}

interface Child {
  process: ChildProcess
  messages: Message[]
  metrics(): Promise<Record<string, {store: EventStoreMetrics; pending: PendingRequestsMetrics}>>
}

const children: ChildProcess[] = []
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

async function startChild(port: number, flavour: string): Promise<Child> {
  const child = fork('test/fixtures/restartable-server.ts', [redis!.url, String(port), flavour], {
    execArgv: [...stripTypes, '--no-warnings'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.push(child)
  const messages: Message[] = []
  child.on('message', (message) => void messages.push(message as Message))
  await until(() => messages.some((message) => message.type === 'listening'), 8000)
  return {
    process: child,
    messages,
    metrics: async () => {
      const before = messages.length
      child.send('metrics')
      await until(() => messages.slice(before).some((message) => message.type === 'metrics'))
      return (
        messages.slice(before).find((message) => message.type === 'metrics') as Extract<Message, {type: 'metrics'}>
      ).sessions
    },
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const {port} = server.address() as {port: number}
      server.close(() => resolve(port))
    })
  })
}

describe.each(['v1-web', 'v2-web'])('a server process on %s restarted on the Redis log', (flavour) => {
  it.for(['ours', 'sdk'] as Kind[])(
    'replays the call its predecessor finished to a client on the %s transport that resumes after the restart',
    {timeout: 20_000},
    async (kind, context) => {
      requireRedis(context)
      const port = await freePort()
      const first = await startChild(port, flavour)
      let proxy: TcpProxy = await startTcpProxy({port})
      const proxyPort = proxy.port
      cleanups.push(() => proxy.close())
      // Both transports keep trying while the server is down (a second or two).
      const peer: Peer = await connectPeer(
        kind,
        proxy.url('/mcp'),
        {reconnect: {minDelayMs: 50, maxDelayMs: 100, maxAttempts: 100}},
        {
          reconnectionOptions: {
            initialReconnectionDelay: 50,
            maxReconnectionDelay: 100,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 100,
          },
        },
      )
      cleanups.push(() => peer.client.close())
      const sessionId = peer.transport.sessionId!

      // The call's connection is cut after its second progress notification, and nothing gets through any more.
      const cut = proxy.cutNext({
        request: (chunk) => chunk.includes('"tools/call"'),
        at: afterEventWith('"progress":2'),
      })
      const call = callTool(peer, 'slow')
      await cut
      await proxy.close()

      // The old process finishes the call, stores its result in Redis, and is killed.
      await until(() => first.messages.some((message) => message.type === 'tool-done'))
      const {stored} = first.messages.find((message) => message.type === 'tool-done') as Extract<
        Message,
        {type: 'tool-done'}
      >
      // The result is stored once the tool has returned: wait for the store's count to pass what it was then.
      let storedBeforeKill = stored
      for (let asked = 0; asked < 100 && storedBeforeKill === stored; asked++)
        storedBeforeKill = (await first.metrics())[sessionId]!.store.storedEvents
      expect(storedBeforeKill).toBe(stored + 1)
      first.process.kill('SIGKILL')
      await new Promise((resolve) => first.process.once('exit', resolve))

      // A new process on the same port and Redis; the network comes back.
      const second = await startChild(port, flavour)
      proxy = await startTcpProxy({port}, proxyPort)
      await call.settled
      expect(call.state).toBe('result')
      expect(call.text).toBe('done after 6 steps')
      expect(call.progress).toEqual([1, 2, 3, 4, 5, 6])
      expect(duplicates(call.progress)).toBe(0)
      const after = (await second.metrics())[sessionId]!
      // Progress 3 to 6 and the result, from Redis; the new process never ran the tool.
      expect(after.store).toMatchObject({streamResumptions: 1, replayedEvents: 5, refusedEventIds: 0})
      expect(second.messages.some((message) => message.type === 'tool-done')).toBe(false)
    },
  )
})
