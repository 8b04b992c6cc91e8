/**
 * Tasks (2025-11-25) on the reference server: spoken to by hand for the wire, and by the official Tasks extension on
 * the v2 Client over this transport for a task whose tool asks the client mid-task.
 */
import {createTaskSessionFromClient} from '@modelcontextprotocol/ext-tasks/client'
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {createReferenceServer, type ToolDefinition} from '../../src/testing/index.ts'
import {listen} from '../../src/testing/node.ts'
import {until} from '../fixtures/client.ts'
import {clientOf, renderTool} from '../fixtures/ext-tasks.ts'
import {RawClient, rawClient, serve} from '../fixtures/kit.ts'

const echo: ToolDefinition = {name: 'echo', handler: () => ({content: [{type: 'text', text: 'echo'}]})}
const maybe: ToolDefinition = {...echo, name: 'maybe', taskSupport: 'optional'}

/** A JSON-RPC answer of the methods this file calls. */
interface Answer {
  result?: {tools?: {name: string; execution?: unknown}[]; task?: object; tasks?: object[]; [key: string]: unknown}
  error?: {code: number; message: string}
}

/** Sends one request; resolves its JSON-RPC answer (`json: true` servers answer with one body). */
async function rpc(client: RawClient, id: number, method: string, params: object = {}): Promise<Answer> {
  const response = await client.post({jsonrpc: '2.0', id, method, params})
  return (await response.json()) as Answer
}

describe('tasks on the reference server', () => {
  it('a tool with taskSupport is listed with it, and the server declares the tasks capability; without one it declares none', async () => {
    const served = await serve('msw', {json: true, tools: [echo, maybe, renderTool(0)]})
    const client = await rawClient(served)
    const {result} = await rpc(client, 1, 'tools/list')
    expect(result?.tools?.map((tool: {name: string; execution?: unknown}) => [tool.name, tool.execution])).toEqual([
      ['echo', undefined],
      ['maybe', {taskSupport: 'optional'}],
      ['render', {taskSupport: 'required'}],
    ])
    const initialized = (await (await new RawClient(served.url).initialize()).json()) as {
      result: {capabilities: Record<string, unknown>}
    }
    expect(initialized.result.capabilities['tasks']).toEqual({list: {}, cancel: {}, requests: {tools: {call: {}}}})
    const plain = await serve('msw', {json: true, tools: [echo]})
    const plainClient = await rawClient(plain)
    expect((await rpc(plainClient, 1, 'tasks/list')).error).toMatchObject({code: -32601})
  })

  it('a task-augmented call is answered at once with a working task; tasks/get follows it to completed, tasks/result gives the tool result tied to the task; the tool ran once', async () => {
    const served = await serve('msw', {json: true, tools: [renderTool(150)], taskPollIntervalMs: 25})
    const client = await rawClient(served)
    const created = await rpc(client, 1, 'tools/call', {name: 'render', arguments: {scene: 'intro'}, task: {ttl: 5000}})
    expect(created.result?.task).toMatchObject({taskId: 'task-1', status: 'working', ttl: 5000, pollInterval: 25})
    expect((await rpc(client, 2, 'tasks/get', {taskId: 'task-1'})).result).toMatchObject({status: 'working'})
    const result = await rpc(client, 3, 'tasks/result', {taskId: 'task-1'})
    expect(result.result).toEqual({
      content: [{type: 'text', text: 'rendered intro'}],
      _meta: {'io.modelcontextprotocol/related-task': {taskId: 'task-1'}},
    })
    expect((await rpc(client, 4, 'tasks/get', {taskId: 'task-1'})).result).toMatchObject({status: 'completed'})
    expect(served.server.executions).toEqual({render: 1})
  })

  it('the wrong kind of call is refused with -32601, and the tool does not run: a task of a tool without task support, a plain call of one that requires it', async () => {
    const served = await serve('msw', {json: true, tools: [echo, renderTool(0)]})
    const client = await rawClient(served)
    const asTask = await rpc(client, 1, 'tools/call', {name: 'echo', task: {}})
    const plain = await rpc(client, 2, 'tools/call', {name: 'render', arguments: {scene: 'intro'}})
    expect([asTask.error, plain.error]).toMatchObject([{code: -32601}, {code: -32601}])
    expect(served.server.executions).toEqual({})
  })

  it("a task is its session's: another session gets -32602 for it and lists none; a tool result with isError fails the task", async () => {
    const failing: ToolDefinition = {
      name: 'fail',
      taskSupport: 'optional',
      handler: () => {
        throw new Error('no luck')
      },
    }
    const served = await serve('msw', {json: true, tools: [failing]})
    const owner = await rawClient(served)
    const other = await rawClient(served)
    await rpc(owner, 1, 'tools/call', {name: 'fail', task: {}})
    expect((await rpc(owner, 2, 'tasks/result', {taskId: 'task-1'})).result).toMatchObject({isError: true})
    expect((await rpc(owner, 3, 'tasks/list')).result?.tasks).toEqual([expect.objectContaining({status: 'failed'})])
    expect((await rpc(other, 1, 'tasks/get', {taskId: 'task-1'})).error).toMatchObject({code: -32602})
    expect((await rpc(other, 2, 'tasks/list')).result?.tasks).toEqual([])
  })

  it('tasks/cancel ends a working task as cancelled: its tool result is dropped, tasks/result answers an error, and a second cancel is -32602', async () => {
    const served = await serve('msw', {json: true, tools: [renderTool(100)]})
    const client = await rawClient(served)
    await rpc(client, 1, 'tools/call', {name: 'render', arguments: {scene: 'intro'}, task: {}})
    expect((await rpc(client, 2, 'tasks/cancel', {taskId: 'task-1'})).result).toMatchObject({status: 'cancelled'})
    expect((await rpc(client, 3, 'tasks/result', {taskId: 'task-1'})).error).toMatchObject({code: -32602})
    await new Promise((resolve) => setTimeout(resolve, 150)) // the tool's own end, which must not revive the task
    expect((await rpc(client, 4, 'tasks/get', {taskId: 'task-1'})).result).toMatchObject({status: 'cancelled'})
    expect((await rpc(client, 5, 'tasks/cancel', {taskId: 'task-1'})).error).toMatchObject({code: -32602})
  })

  it('a task whose tool asks the client is input_required until the answer comes: the extension answers it once, on the v2 Client over this transport', async () => {
    const confirm: ToolDefinition = {
      name: 'confirm',
      taskSupport: 'required',
      handler: async (_args, context) => {
        const answer = await context.elicit({
          message: 'Go on?',
          requestedSchema: {type: 'object', properties: {go: {type: 'boolean'}}, required: ['go']},
        })
        return {content: [{type: 'text', text: `answered ${String(answer['action'])}`}]}
      },
    }
    const reference = createReferenceServer({tools: [confirm], taskPollIntervalMs: 20})
    const listening = await listen(reference)
    const transport = new ResumableHTTPClientTransport(new URL(listening.url))
    const client = clientOf('legacy')
    await client.connect(transport)
    const asked: string[] = []
    const statuses: string[] = []
    const session = createTaskSessionFromClient(client, {
      endpointId: 'kit',
      onInputRequest: async (request) => {
        asked.push(request.kind === 'elicitation' ? JSON.stringify(request.params['message']) : request.kind)
        // The user takes a moment: long enough for a poll to see the task wait.
        await until(() => statuses.includes('input_required'))
        return {action: 'accept', content: {go: true}} as never
      },
    })
    const execution = await session.callTool('confirm', {})
    const {outcome} = await execution.settle({
      onEvent: (event) => {
        if (event.type === 'task') statuses.push(event.task.status)
      },
    })
    expect(outcome).toMatchObject({status: 'completed', result: {content: [{type: 'text', text: 'answered accept'}]}})
    expect(asked).toEqual(['"Go on?"'])
    expect(statuses).toContain('input_required')
    expect(reference.answers.size).toBe(1)
    await session.close()
    await client.close()
    await listening.close()
  })

  it('a bad taskSupport or taskPollIntervalMs is a TypeError that names it', () => {
    expect(() => createReferenceServer({tools: [{...echo, taskSupport: 'always' as never}]})).toThrow(
      "options.tools[0].taskSupport must be 'forbidden', 'optional' or 'required'",
    )
    expect(() => createReferenceServer({taskPollIntervalMs: 0})).toThrow(/options.taskPollIntervalMs/)
  })
})
