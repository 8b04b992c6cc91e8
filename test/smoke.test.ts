import {describe, expect, it} from 'vitest'
import {connect, eventsOf, until, useMock} from './fixtures/harness.ts'

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
    mock.faults.cut = {after: 3, how: 'error', on: 'POST'}
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
