/**
 * A server request that comes again once answered (docs/design.md#de-duplication): the cached answer is sent again
 * only when the server may have lost it. A server that re-emits its pending requests to a stream attached without
 * `Last-Event-ID`, and takes the answers just after, has them already: sending them again would answer twice.
 */
import {http} from 'msw'
import {describe, expect, it} from 'vitest'
import type {ReferenceServer} from '../../src/testing/index.ts'
import {connect, eventsOf, network, until, url, useMock, type Harness} from '../fixtures/harness.ts'

/** The standalone stream's ID on the server, once it is connected. */
async function standaloneOf(server: ReferenceServer): Promise<string> {
  await until(
    () => server.sessions()[0]?.streams.some((stream) => stream.kind === 'standalone' && stream.connected) === true,
  )
  return server.sessions()[0]!.streams.find((stream) => stream.kind === 'standalone')!.id
}

/**
 * The IDs of the Client's answers as their POSTs came, each held until `release()`, then handed to `server`; while
 * `lose()` is true, answered 202 without it.
 */
function holdAnswerPosts(server: ReferenceServer, lose = () => false) {
  const posted: unknown[] = []
  let taken = 0
  let release = (): void => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  network.use(
    http.post(url, async ({request}) => {
      const body = (await request.clone().json()) as {id?: unknown; result?: unknown}
      if (body.result === undefined) return undefined
      posted.push(body.id)
      await released
      const response = lose() ? new Response(null, {status: 202}) : await server.handle(request)
      if (response.status === 202) taken++
      return response
    }),
  )
  return {posted, taken: () => taken, release}
}

/** The tool `ask` asks the Client twice: the call, once both answers are on their way. */
async function askTwice(s: Harness, answers: {posted: unknown[]}): Promise<{call: Promise<unknown>}> {
  const call = s.client.callTool({name: 'ask', arguments: {count: 2, kind: 'sampling'}})
  await until(() => answers.posted.length === 2)
  return {call}
}

describe('a server request re-emitted to a re-attached stream', () => {
  it('is not answered again when the server took the answer after that stream was requested', async () => {
    const server = useMock()
    const s = await connect()
    const standalone = await standaloneOf(server)
    const answers = holdAnswerPosts(server)
    // The re-attach: the server re-emits both pending requests into its body, then takes both answers, and only
    // then does the body reach the client.
    network.use(
      http.get(url, async ({request}) => {
        const response = await server.handle(request)
        answers.release()
        await until(() => answers.taken() === 2)
        return response
      }),
    )
    const {call} = await askTwice(s, answers)
    server.faults.disconnect({stream: standalone})

    await expect(call).resolves.toMatchObject({content: [{text: 'answer 1, answer 2'}]})
    expect(server.counters.reemittedRequests).toBe(2)
    await until(() => s.events.some((event) => event.type === 'duplicate-dropped'))
    expect(eventsOf(s.events, 'cached-answer-resent')).toEqual([])
    expect(answers.posted).toHaveLength(2)
    expect([...server.answers.values()].map((answer) => answer.length)).toEqual([1, 1])
    expect(s.sampled).toHaveLength(2)
    await s.client.close()
  })

  it('is answered again from the cache when the server took the answer before that stream was requested, and lost it', async () => {
    const server = useMock()
    const s = await connect()
    const standalone = await standaloneOf(server)
    // The answers are confirmed with 202 but never reach the server, which still waits for them.
    let lost = true
    const answers = holdAnswerPosts(server, () => lost)
    const {call} = await askTwice(s, answers)
    answers.release()
    await until(() => answers.taken() === 2)
    lost = false
    server.faults.disconnect({stream: standalone})

    await expect(call).resolves.toMatchObject({content: [{text: 'answer 1, answer 2'}]})
    expect(eventsOf(s.events, 'cached-answer-resent').map((event) => event.requestId)).toHaveLength(2)
    expect([...server.answers.values()].map((answer) => answer.length)).toEqual([1, 1])
    expect(s.sampled).toHaveLength(2)
    await s.client.close()
  })
})
