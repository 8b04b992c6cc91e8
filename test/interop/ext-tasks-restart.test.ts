/**
 * A task of the official Tasks extension outlives its client process: the first process (test/fixtures/task-client.ts)
 * calls a tool as a task and hands it off (`execution.handoff`, its reference kept in the FileStore beside the
 * transport's records), then is killed (SIGKILL, no cleanup); the next process on the same file resumes it
 * (`session.resumeTask`) and gets its result. In the 2025 revisions the task belongs to the server's session, which
 * the transport resumes from the file.
 */
import {fork, type ChildProcess} from 'node:child_process'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {stripTypes} from '../fixtures/child-process.ts'
import {startTaskServer, taskServers, type TaskServer} from '../fixtures/ext-tasks.ts'

let directory: string
let server: TaskServer | undefined
const children: ChildProcess[] = []
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ext-tasks-'))
})
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  await server?.close()
  server = undefined
  await rm(directory, {recursive: true, force: true})
})

type Message =
  | {type: 'handed-off'; sessionId: string | undefined; taskId: string}
  | {type: 'settled'; sessionId: string | undefined; outcome: unknown; gets: number; calls: unknown[]}

/** Starts a client process in `phase`; resolves its first message of `type`. */
function runClient<T extends Message['type']>(phase: 'call' | 'resume', type: T): Promise<Extract<Message, {type: T}>> {
  const child = fork('test/fixtures/task-client.ts', [server!.url, server!.era, join(directory, 'store.json'), phase], {
    execArgv: [...stripTypes, '--no-warnings'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${phase} process exited early: ${String(code)}`)))
    child.on('message', (message: Message) => {
      if (message.type === type) resolve(message as Extract<Message, {type: T}>)
    })
  })
}

describe('a task of the Tasks extension across a client restart', () => {
  it.for(taskServers)(
    'on the %s server: handed off, the process killed, resumed by the next one from the FileStore; the tool ran once, and its result came',
    {timeout: 30_000},
    async (name) => {
      server = await startTaskServer(name, 2500, 50)
      const first = await runClient('call', 'handed-off')
      const killed = children.at(-1)!
      killed.kill('SIGKILL')
      await new Promise((resolve) => killed.once('exit', resolve))
      const polledBefore = server.gets(first.taskId)

      const settled = await runClient('resume', 'settled')
      expect(settled.outcome).toMatchObject({
        status: 'completed',
        result: {content: [{type: 'text', text: 'rendered intro'}]},
      })
      expect(server.executions).toEqual({render: 1})
      // One poller: every tasks/get after the restart is one the extension sent; the journal holds nothing.
      expect(server.gets(first.taskId) - polledBefore).toBeLessThanOrEqual(settled.gets)
      expect(server.gets(first.taskId) - polledBefore).toBeGreaterThan(0)
      expect(settled.calls).toEqual([])
      // 2025: the task is its session's, and the session came back from the file.
      if (server.era === 'legacy') expect(settled.sessionId).toBe(first.sessionId)
    },
  )
})
