/**
 * The official Tasks extension (`@modelcontextprotocol/ext-tasks` 0.2.2) on the v2 SDK `Client` over this
 * transport, against a task server of each era it supports (test/fixtures/ext-tasks.ts), over real sockets.
 */
import {taskId} from '@modelcontextprotocol/ext-tasks/core'
import {afterEach, describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {until} from '../fixtures/client.ts'
import {startDurableServer, type DurableServer} from '../fixtures/durable-server.ts'
import {clientOf, startTaskServer, taskServers, taskSession, type TaskServer} from '../fixtures/ext-tasks.ts'

let server: TaskServer | undefined
let durable: DurableServer | undefined
afterEach(async () => {
  await server?.close()
  await durable?.close()
  server = durable = undefined
})

describe('the Tasks extension on this transport', () => {
  it.for(taskServers)(
    'a task-backed call to the %s server settles with the tool result; the tool ran once, and only the extension polled',
    async (name) => {
      server = await startTaskServer(name)
      const transport = new ResumableHTTPClientTransport(new URL(server.url), {callJournal: true})
      const client = clientOf(server.era)
      await client.connect(transport)
      const sent = {gets: 0}
      const session = taskSession(client, transport, server, sent)
      const execution = await session.callTool('render', {scene: 'intro'}, {task: {preference: 'require'}})
      expect(execution.kind).toBe('task')
      // The handle went to the extension, which polls the task: the journal let the call go as delivered.
      expect(transport.calls.list()).toEqual([])
      const {outcome} = await execution.settle()
      expect(outcome).toMatchObject({status: 'completed', result: {content: [{type: 'text', text: 'rendered intro'}]}})
      expect(server.executions).toEqual({render: 1})
      // Every tasks/get is the extension's; one it gave up on (a status notification came first) may never arrive.
      expect(sent.gets).toBeGreaterThan(0)
      expect(server.gets(execution.handle!.taskId)).toBeLessThanOrEqual(sent.gets)
      await session.close()
      await client.close()
    },
  )
})

describe('the call journal and the extension never both poll one task', () => {
  it("a task the journal polls is the extension's once it resumes it: the journal sends no tasks/get after the extension's first", async () => {
    durable = await startDurableServer({taskMs: 900, pollIntervalMs: 40})
    const transport = new ResumableHTTPClientTransport(new URL(durable.url), {callJournal: true})
    const client = clientOf('modern')
    await client.connect(transport)
    // [v2 Client 2.4.0] the handle is no result it takes: the journal holds the task and polls it.
    await expect(client.callTool({name: 'render', arguments: {scene: 'intro'}})).rejects.toMatchObject({
      code: 'UNSUPPORTED_RESULT_TYPE',
    })
    const [call] = transport.calls.list()
    expect(call).toMatchObject({state: 'task', task: {taskId: 'task-1'}})
    const gets = (byExtension: boolean) =>
      durable!.seen.filter((seen) => seen.method === 'tasks/get' && seen.declaresTasks === byExtension)
    await until(() => gets(false).length >= 2)
    const sent = {gets: 0}
    const session = taskSession(client, transport, {era: 'modern', url: durable.url}, sent)
    const execution = await session.resumeTask({
      endpointId: `tasks:${durable.url}`,
      generation: 'v2',
      taskId: taskId('task-1'),
      originalOperation: 'tools/call',
    })
    const {outcome} = await execution.settle()
    expect(outcome).toMatchObject({status: 'completed', result: {content: [{type: 'text', text: 'rendered intro'}]}})
    const first = durable.seen.findIndex((seen) => seen.method === 'tasks/get' && seen.declaresTasks)
    expect(durable.seen.slice(first).filter((seen) => seen.method === 'tasks/get' && !seen.declaresTasks)).toEqual([])
    expect(gets(true)).toHaveLength(sent.gets)
    expect(transport.calls.list()).toEqual([])
    expect(durable.executions).toEqual({render: 1})
    await session.close()
    await client.close()
  })
})
