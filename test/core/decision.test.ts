import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {
  classifyDeleteAnswer,
  classifyPostAnswer,
  classifyStreamAnswer,
  decideReconnect,
  type ReconnectDecision,
  type ReconnectInput,
} from '../../src/index.ts'

const S = 'session-S'
const other = 'session-T'
const cursor = (sessionId: string | undefined, lastEventId = 'p1_5') => ({sessionId, lastEventId})

// One row per branch of the decision (docs/design.md#the-decision), for both kinds of stream.
const table: [string, ReconnectInput, ReconnectDecision][] = [
  [
    'session + cursor valid for it → stream resumption',
    {sessionId: S, cursor: cursor(S), cursorRejected: false, stream: 'request'},
    {branch: 'stream-resumption', sessionId: S, lastEventId: 'p1_5'},
  ],
  [
    'session + cursor on the standalone stream → stream resumption',
    {sessionId: S, cursor: cursor(S, 'g1_9'), cursorRejected: false, stream: 'standalone'},
    {branch: 'stream-resumption', sessionId: S, lastEventId: 'g1_9'},
  ],
  [
    'session, no cursor, standalone stream → session resumption (fresh stream, nothing to settle)',
    {sessionId: S, cursor: undefined, cursorRejected: false, stream: 'standalone'},
    {branch: 'session-resumption', sessionId: S, dropCursor: false, settleRequest: false},
  ],
  [
    'session, no cursor, request stream → session resumption; the request is settled (its answer is lost)',
    {sessionId: S, cursor: undefined, cursorRejected: false, stream: 'request'},
    {branch: 'session-resumption', sessionId: S, dropCursor: false, settleRequest: true},
  ],
  [
    'server rejected the cursor → dropped, never sent again; session resumption; request settled',
    {sessionId: S, cursor: cursor(S), cursorRejected: true, stream: 'request'},
    {branch: 'session-resumption', sessionId: S, dropCursor: true, settleRequest: true},
  ],
  [
    'rejected cursor on the standalone stream → session resumption on a fresh stream',
    {sessionId: S, cursor: cursor(S), cursorRejected: true, stream: 'standalone'},
    {branch: 'session-resumption', sessionId: S, dropCursor: true, settleRequest: false},
  ],
  [
    'cursor of another session → never sent with this one',
    {sessionId: S, cursor: cursor(other), cursorRejected: false, stream: 'standalone'},
    {branch: 'session-resumption', sessionId: S, dropCursor: true, settleRequest: false},
  ],
  [
    'cursor produced without a session → never sent once a session exists',
    {sessionId: S, cursor: cursor(undefined), cursorRejected: false, stream: 'request'},
    {branch: 'session-resumption', sessionId: S, dropCursor: true, settleRequest: true},
  ],
  [
    'empty cursor (an empty `id:` reset it) → not a cursor',
    {sessionId: S, cursor: cursor(S, ''), cursorRejected: false, stream: 'request'},
    {branch: 'session-resumption', sessionId: S, dropCursor: true, settleRequest: true},
  ],
  [
    'cursor but no session → never sent without its session; new session',
    {sessionId: undefined, cursor: cursor(S), cursorRejected: false, stream: 'request'},
    {branch: 'new-session', dropCursor: true, settleRequest: true},
  ],
  [
    'no session, no cursor → new session (the Client initializes)',
    {sessionId: undefined, cursor: undefined, cursorRejected: false, stream: 'standalone'},
    {branch: 'new-session', dropCursor: false, settleRequest: false},
  ],
]

describe('decideReconnect: the decision table', () => {
  it.each(table)('%s', (_row, input, expected) => {
    expect(decideReconnect(input)).toEqual(expected)
  })

  it('for any combination: a cursor is sent only with the session that produced it, never empty, never rejected', () => {
    const session = fc.option(fc.constantFrom(S, other), {nil: undefined})
    const input = fc.record({
      sessionId: session,
      cursor: fc.option(fc.record({sessionId: session, lastEventId: fc.constantFrom('', 'p1_5', 'g2_1')}), {
        nil: undefined,
      }),
      cursorRejected: fc.boolean(),
      stream: fc.constantFrom('standalone' as const, 'request' as const),
    })
    fc.assert(
      fc.property(input, (held) => {
        const decision = decideReconnect(held)
        if (held.sessionId === undefined) expect(decision.branch).toBe('new-session')
        if (decision.branch === 'stream-resumption') {
          expect(held.cursor?.sessionId).toBe(held.sessionId)
          expect(decision.lastEventId).not.toBe('')
          expect(held.cursorRejected).toBe(false)
        } else {
          expect(decision.settleRequest).toBe(held.stream === 'request')
        }
      }),
    )
  })
})

// docs/failures.md#a-session-the-server-no-longer-knows: the answers that end a session, request by request.
describe('a session the server no longer knows', () => {
  const get = (status: number, sentCursor: boolean, sentSession = true): string =>
    classifyStreamAnswer({status, eventStream: false, sentSession, sentCursor})
  const post = (status: number, request: boolean, sentSession = true): string =>
    classifyPostAnswer({status, body: 'json', sentSession, request})

  it.each<[string, string, () => string]>([
    ['a GET without cursor answered 404', 'session-expired', () => get(404, false)],
    [
      'a GET without cursor answered 400: it carried the session and nothing else',
      'session-expired',
      () => get(400, false),
    ],
    ['a GET without cursor answered 410', 'session-expired', () => get(410, false)],
    [
      'a GET with a cursor answered 400: the cursor or the session, told by the GET without it that follows',
      'cursor-refused',
      () => get(400, true),
    ],
    ['a GET with a cursor answered 410', 'cursor-refused', () => get(410, true)],
    ['a GET with a cursor answered 404', 'session-expired', () => get(404, true)],
    ['a GET without a session answered 400: no session to refuse', 'refused', () => get(400, false, false)],
    ['a GET without cursor answered 422: a refusal that names no session', 'refused', () => get(422, false)],
    ['a GET without cursor answered 409: a stream of the session is open', 'transient', () => get(409, false)],
    [
      'a GET with a cursor answered 409: that stream is still connected on the server side, and the cursor is kept',
      'transient',
      () => get(409, true),
    ],
    ['a GET without cursor answered 403', 'unauthorized', () => get(403, false)],
    ['a POST of a request answered 404', 'session-expired', () => post(404, true)],
    ['a POST of a request answered 400: its body may be what was refused', 'session-in-doubt', () => post(400, true)],
    ['a POST of a notification answered 410', 'session-in-doubt', () => post(410, false)],
    ['a POST without a session answered 400', 'refused', () => post(400, true, false)],
    ['a POST of a request answered 422', 'refused', () => post(422, true)],
    ['a DELETE answered 400: it carried the session alone', 'cleared', () => classifyDeleteAnswer(400)],
    ['a DELETE answered 410', 'cleared', () => classifyDeleteAnswer(410)],
    ['a DELETE answered 403: the server may keep the session', 'refused', () => classifyDeleteAnswer(403)],
  ])('%s: %s', (_row, expected, classify) => {
    expect(classify()).toBe(expected)
  })
})
