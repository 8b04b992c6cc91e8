/**
 * [WHATWG SSE] a line ends with CR, LF or CRLF, and a lone CR is a line end even as the last byte of a body: the
 * last event of a body is delivered when the body ends, whatever its line endings and wherever the network cut
 * it into chunks; an event without its blank line at the end of the body is incomplete and discarded. Through the
 * transport: a `tools/call` answered with an event stream, its bytes in chunks of every size and place.
 */
import fc from 'fast-check'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {describe, expect, it} from 'vitest'
import {until} from '../fixtures/harness.ts'
import {initialize, scripted, started} from '../fixtures/scripted-fetch.ts'

const encoder = new TextEncoder()
const endings = ['\n', '\r', '\r\n'] as const
const note = JSON.stringify({jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'working'}})
const call = {jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: {name: 'echo'}}

/**
 * A notification, then the answer to wire request `wireId` ending the body: each of the six lines (`id`, `data`, the
 * blank line, twice) ends with its own ending; `complete` false leaves out the last blank line.
 */
function bodyText(wireId: number, ends: readonly string[], complete = true): string {
  const answer = JSON.stringify({jsonrpc: '2.0', id: wireId, result: {content: []}})
  const lines = [`id: e1`, `data: ${note}`, '', `id: e2`, `data: ${answer}`, '']
  return lines
    .map((line, index) => line + ends[index]!)
    .join('')
    .slice(0, complete ? undefined : -ends[5]!.length)
}

/**
 * Six line endings, as a server writes them: a CR ending a data line followed by an empty line ending in LF would be
 * one CRLF, and the event would have no blank line (the case below).
 */
const lineEndings = fc
  .array(fc.constantFrom(...endings), {minLength: 6, maxLength: 6})
  .filter((ends) => !(ends[1] === '\r' && ends[2] === '\n') && !(ends[4] === '\r' && ends[5] === '\n'))

/** `text` cut before each of `cuts`, one read of the body each. */
function chunked(text: string, cuts: readonly number[]): ReadableStream<Uint8Array> {
  const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
  const chunks = [0, ...at].map((start, index) => text.slice(start, at[index] ?? text.length))
  return new ReadableStream({
    pull(controller) {
      const chunk = chunks.shift()
      if (chunk === undefined) controller.close()
      else controller.enqueue(encoder.encode(chunk))
    },
  })
}

/** What the transport delivers of a call whose answer is `text(wireId)`, cut before each of `cuts`; once its stream ended. */
async function delivered(
  text: (wireId: number) => string,
  cuts: readonly number[],
): Promise<{messages: JSONRPCMessage[]; closed: string[]}> {
  const closed: string[] = []
  const {fetch} = scripted((sent) => {
    if (sent.body?.includes('"tools/call"') !== true) return undefined
    const wireId = (JSON.parse(sent.body) as {id: number}).id
    return new Response(chunked(text(wireId), cuts), {headers: {'content-type': 'text/event-stream'}})
  })
  const {transport, messages} = await started({
    fetch,
    onEvent: (event) => event.type === 'stream-closed' && event.stream === 'request' && closed.push(event.reason),
  })
  await transport.send(initialize)
  await transport.send(call)
  await until(
    () => closed.length === 1 || messages.some((message) => 'id' in message && message.id === 1 && 'error' in message),
    2000,
  )
  await transport.close()
  return {messages: messages.slice(1), closed}
}

describe('line endings of an event stream', () => {
  it('delivers every event of a body, the last one when the body ends, whatever its line endings and its chunks', async () => {
    await fc.assert(
      fc.asyncProperty(lineEndings, fc.array(fc.nat(), {maxLength: 4}), async (ends, cuts) => {
        const {messages, closed} = await delivered((wireId) => bodyText(wireId, ends), cuts)
        expect(messages).toEqual([JSON.parse(note), {jsonrpc: '2.0', id: 1, result: {content: []}}])
        expect(closed).toEqual(['completed'])
      }),
      {numRuns: 150},
    )
  })

  it.each(endings)(
    'delivers an answer whose event ends at the very end of the body with %j, cut at every position',
    async (end) => {
      const ends = Array.from({length: 6}, () => end)
      const length = bodyText(1, ends).length
      for (let cut = 0; cut <= length; cut++) {
        const {messages} = await delivered((wireId) => bodyText(wireId, ends), [cut])
        expect(messages.at(-1), `cut at ${cut}`).toEqual({jsonrpc: '2.0', id: 1, result: {content: []}})
      }
    },
  )

  it.each(endings)(
    'discards an answer whose blank line is missing at the end of the body (%j): the call is settled, never answered twice',
    async (end) => {
      const {messages} = await delivered(
        (wireId) =>
          bodyText(
            wireId,
            Array.from({length: 6}, () => end),
            false,
          ),
        [],
      )
      expect(messages[0]).toEqual(JSON.parse(note))
      // The stream broke before its answer: its cursor (e1) is resumed, and the scripted server answers the GET 405.
      expect(messages.slice(1)).toEqual([
        expect.objectContaining({
          id: 1,
          error: expect.objectContaining({data: expect.objectContaining({code: 'outcome-unknown'})}),
        }),
      ])
    },
  )
})
