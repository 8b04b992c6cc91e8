/**
 * docs/failures.md is the specification of what each answer means: every row of its table is checked here against
 * the pure classifications the transport acts on.
 */
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {classifyDeleteAnswer, classifyPostAnswer, classifyStreamAnswer} from '../../src/index.ts'

const page = readFileSync(fileURLToPath(new URL('../../docs/failures.md', import.meta.url)), 'utf8')
const table = page.slice(page.indexOf('| answer |'))
const rows = table
  .split('\n')
  .slice(2)
  .filter((line) => line.startsWith('|'))
  .map((line) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim().replace(/^`|`$/g, '')),
  )
const statusRows = rows.filter(([answer]) => /^\d{3}$/.test(answer!))

/** What the transport does with `status` for each column of the table, in order. */
function classify(status: number): string[] {
  return [
    classifyPostAnswer({status, body: 'json', sentSession: true, request: true}),
    classifyPostAnswer({status, body: 'other', sentSession: true, request: false}),
    classifyStreamAnswer({status, eventStream: status === 200, sentSession: true, sentCursor: false}),
    classifyStreamAnswer({status, eventStream: status === 200, sentSession: true, sentCursor: true}),
    classifyDeleteAnswer(status),
  ]
}

describe('the table of answers in docs/failures.md', () => {
  it('has a row for every status the transport distinguishes', () => {
    expect(statusRows.map(([answer]) => answer)).toEqual([
      '400',
      '401',
      '403',
      '404',
      '405',
      '406',
      '408',
      '409',
      '410',
      '415',
      '422',
      '425',
      '429',
      '500',
      '502',
      '503',
      '504',
    ])
  })

  it.each(statusRows.map((row) => [row[0]!, row.slice(1)] as const))(
    'says what the transport does with %s, for every kind of request',
    (answer, documented) => {
      expect(classify(Number(answer))).toEqual(documented)
    },
  )

  it('says what a success with a bad body means: the request may have run, a notification was taken, a stream ended', () => {
    const row = rows.find(([answer]) => answer!.startsWith('2xx with a bad body'))!
    expect([
      classifyPostAnswer({status: 200, body: 'other', sentSession: true, request: true}),
      classifyPostAnswer({status: 202, body: 'other', sentSession: true, request: false}),
      classifyStreamAnswer({status: 200, eventStream: false, sentSession: true, sentCursor: false}),
      classifyStreamAnswer({status: 204, eventStream: false, sentSession: true, sentCursor: true}),
      classifyDeleteAnswer(204),
    ]).toEqual(row.slice(1))
  })

  it('keeps a 404 without a session apart from an expired session', () => {
    expect(classifyPostAnswer({status: 404, body: 'json', sentSession: false, request: true})).toBe('refused')
    expect(classifyStreamAnswer({status: 404, eventStream: false, sentSession: false, sentCursor: false})).toBe(
      'not-offered',
    )
  })

  it.each([400, 410])(
    'keeps a %i without a session a refusal, as the note under the table says: there is no session to refuse',
    (status) => {
      expect(page.replace(/\s+/g, ' ')).toContain(
        'Without a session, a 400 or 410 is `refused`, or `cursor-refused` for a GET that sent a cursor.',
      )
      expect(classifyPostAnswer({status, body: 'json', sentSession: false, request: true})).toBe('refused')
      expect(classifyPostAnswer({status, body: 'other', sentSession: false, request: false})).toBe('refused')
      expect(classifyStreamAnswer({status, eventStream: false, sentSession: false, sentCursor: false})).toBe('refused')
      expect(classifyStreamAnswer({status, eventStream: false, sentSession: false, sentCursor: true})).toBe(
        'cursor-refused',
      )
    },
  )
})

describe('a redirect the transport does not follow', () => {
  // One without a Location (a 300 or 304 has none) reaches the classification as it is.
  it.each([300, 301, 302, 303, 304, 307, 308])(
    '%s is refused for every kind of request, as the 3xx row says: no cursor is refused, no session cleared',
    (status) => {
      const row = rows.find(([answer]) => answer === '3xx not followed')!
      expect(classify(status)).toEqual(row.slice(1))
    },
  )
})
