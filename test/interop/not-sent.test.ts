/**
 * A request that never left: no connection could be opened, so the server cannot have run it and the caller may
 * send it again (code `not-sent`, docs/failures.md). Real sockets: only a real refused connection says so.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {createReferenceServer} from '../../src/testing/index.ts'
import {listen} from '../../src/testing/node.ts'
import {codeOf, connectTo} from '../fixtures/client.ts'

/** What `promise` rejected with. */
const failure = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  )

describe('a server that is not there', () => {
  it('fails a call with not-sent once its server stopped listening: nothing ran', async () => {
    const reference = createReferenceServer()
    const listening = await listen(reference)
    const {client} = await connectTo(listening.url)
    await listening.close()

    expect(codeOf(await failure(client.callTool({name: 'echo', arguments: {text: 'x'}})))).toBe('not-sent')
    expect(reference.executions).toEqual({})
    await client.close()
  })

  it('fails connect with not-sent when the port is closed', async () => {
    const closed = await listen(createReferenceServer())
    await closed.close()
    const client = new Client({name: 'test', version: '1.0.0'})
    expect(codeOf(await failure(client.connect(new ResumableHTTPClientTransport(new URL(closed.url)))))).toBe(
      'not-sent',
    )
  })
})
