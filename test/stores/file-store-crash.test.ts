/**
 * Issue 3: a Node agent killed mid-call (SIGKILL, no cleanup) restarts on the same FileStore and resumes:
 * the session from the file, the tool's stream from its stored cursor; the tool ran once.
 */
import {execFile, type ChildProcess} from 'node:child_process'
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import {join, resolve as absolute} from 'node:path'
import {promisify} from 'node:util'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createReferenceServer} from '../../src/testing/index.ts'
import {listen, type Listening} from '../../src/testing/node.ts'
import {runJsonLines, type JsonLine} from '../fixtures/child-process.ts'

let directory: string
let server: Listening | undefined
const children: ChildProcess[] = []

beforeAll(async () => {
  // Inside the repository, so that the build finds node_modules.
  await mkdir('.test-build', {recursive: true})
  directory = await mkdtemp(join('.test-build', 'crash-'))
  // The child runs plain JavaScript: a build of src/ of its own, not whatever dist/ holds.
  await promisify(execFile)('npx', [
    'tsc',
    '-p',
    'tsconfig.build.json',
    '--outDir',
    join(directory, 'dist'),
    '--declaration',
    'false',
    '--declarationMap',
    'false',
    '--sourceMap',
    'false',
  ])
}, 120_000)

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await server?.close()
  await rm(directory, {recursive: true, force: true})
})

/** Starts a client process; resolves each printed line to `onLine` until it returns true. */
function runClient(url: string, phase: 'call' | 'resume', onLine: (line: JsonLine) => boolean): Promise<JsonLine> {
  const {child, line} = runJsonLines(
    [
      process.execPath,
      'test/fixtures/restart-client.mjs',
      absolute(directory, 'dist'),
      url,
      join(directory, 'store.json'),
      phase,
    ],
    `client (${phase})`,
    onLine,
  )
  children.push(child)
  return line
}

describe('FileStore: crash and restart', () => {
  it('a client killed mid-call resumes from the file: same session, the missed events replayed, the tool ran once', async () => {
    const reference = createReferenceServer()
    server = await listen(reference)
    const first = runClient(server.url, 'call', (line) => line['progress'] === 3)
    await first
    const killed = children.at(-1)!
    killed.kill('SIGKILL')
    await new Promise((resolve) => killed.once('exit', resolve))

    const resumed = await runClient(server.url, 'resume', (line) => line['result'] !== undefined)
    const metrics = resumed['metrics'] as Record<string, number>
    const events = resumed['events'] as {type: string; branch?: string; headers?: Record<string, string>}[]

    expect(reference.requests('POST', 'initialize')).toHaveLength(1)
    expect(reference.requests('POST', 'tools/call')).toHaveLength(1)
    expect(reference.executions).toEqual({slow: 1})
    expect(resumed['result']).toMatchObject({result: {content: [{type: 'text', text: 'done after 8 steps'}]}})
    const resumption = events.find((event) => event.type === 'reconnect' && event.branch === 'stream-resumption')
    expect(resumption?.headers?.['last-event-id']).toBeDefined()
    // Progress 4 to 8 at most and the result: the first process had seen 1 to 3, and its cursor was stored.
    expect(metrics['replayedEvents']).toBeGreaterThanOrEqual(1)
    expect(metrics['replayedEvents']).toBeLessThanOrEqual(6)
    expect(metrics['unmatchedResponses']).toBe(1)
  }, 30_000)
})
