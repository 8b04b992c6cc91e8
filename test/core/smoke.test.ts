import {describe, expect, it} from 'vitest'
import {http, HttpResponse} from 'msw'
import {connect, eventsOf, network, until, url, useMock} from '../fixtures/harness.ts'

describe('SDK Client on the transport', () => {
  it('initializes, lists tools and calls one with progress', async () => {
    const mock = useMock()
    const {client, transport, events} = await connect()
    expect(transport.sessionId).toBe('session-1')
    const progress: number[] = []
    const result = await client.callTool({name: 'slow', arguments: {steps: 5}}, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })
    expect(result.content).toEqual([{type: 'text', text: 'done after 5 steps'}])
    expect(progress).toEqual([1, 2, 3, 4, 5])
    expect(mock.executions).toEqual({slow: 1})
    await until(() => mock.requests('GET').length === 1)
    expect(eventsOf(events, 'stream-opened')).toHaveLength(1)
    await client.close()
  })

  it('resumes a cut tool stream', async () => {
    const mock = useMock()
    const {client, transport} = await connect()
    mock.faults.cutNext({after: 3, how: 'error', on: 'POST'})
    const progress: number[] = []
    const result = await client.callTool({name: 'slow', arguments: {steps: 5}}, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })
    expect(result.content).toEqual([{type: 'text', text: 'done after 5 steps'}])
    expect(progress).toEqual([1, 2, 3, 4, 5])
    expect(mock.executions).toEqual({slow: 1})
    expect(transport.metrics.streamResumptions).toBe(1)
    await client.close()
  })
})

describe('[SDK interop] delivery order', () => {
  it('delivers every progress notification of a request when they arrive in one chunk with its response', async () => {
    useMock()
    const {client} = await connect()
    network.use(
      http.post(url, async ({request}) => {
        const call = (await request.json()) as {id: number; params: {_meta: {progressToken: number}}}
        const progressToken = call.params._meta.progressToken
        const frames = Array.from({length: 20}, (_, n) => ({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: {progressToken, progress: n + 1},
        }))
        frames.push({jsonrpc: '2.0', id: call.id, result: {content: []}} as never)
        const chunk = frames.map((frame, n) => `id: e${n}\ndata: ${JSON.stringify(frame)}\n\n`).join('')
        return new HttpResponse(chunk, {headers: {'content-type': 'text/event-stream'}})
      }),
    )
    const progress: number[] = []
    await client.callTool({name: 'slow'}, undefined, {onprogress: ({progress: step}) => progress.push(step)})
    expect(progress).toEqual(Array.from({length: 20}, (_, n) => n + 1))
    await client.close()
  })
})
