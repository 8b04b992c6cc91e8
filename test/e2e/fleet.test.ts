/**
 * Issue 16: one session, one owner, across processes. Worker processes (test/fixtures/fleet-worker.mjs) share
 * one store: a Redis server (three workers: the owner is killed with SIGKILL mid-call and a standby adopts its
 * session), or one FileStore file (two processes making 150 calls each, never in one session).
 */
import {rm} from 'node:fs/promises'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  buildDist,
  reusedRequestIds,
  startFleetServer,
  startWorker,
  type FleetServer,
  type Worker,
} from '../fixtures/fleet.ts'
import {hasRedis, requireRedis, startRedis, type RunningRedis} from '../fixtures/redis-server.ts'

let build: {directory: string; dist: string}
let redis: RunningRedis | undefined
let fleet: FleetServer | undefined
const workers: Worker[] = []
const leaseTtlMs = 1000

beforeAll(async () => {
  const [built, started] = await Promise.all([buildDist('fleet'), hasRedis ? startRedis() : undefined])
  build = built
  redis = started
}, 120_000)

afterAll(async () => {
  for (const {child} of workers) child.kill('SIGKILL')
  await fleet?.listening.close()
  await redis?.stop()
  await rm(build.directory, {recursive: true, force: true})
})

function worker(
  name: string,
  store: ['redis' | 'file', string],
  ownership: 'new-session' | 'wait',
  answer: 'answer' | 'hang' = 'answer',
): Worker {
  const started = startWorker({dist: build.dist, url: fleet!.listening.url, store, name, ownership, leaseTtlMs, answer})
  workers.push(started)
  return started
}

describe('a fleet of workers on one RedisStore', () => {
  it('the owner killed mid-call, a standby adopts its session within the lease TTL and resumes: the tool ran once, no request ID reused, the server request answered once by one Client', async (context) => {
    requireRedis(context)
    fleet = await startFleetServer()
    const {server, seen} = fleet
    const store: ['redis', string] = ['redis', redis!.url]
    const owner = worker('owner', store, 'new-session', 'hang')
    const {connected: sessionId} = await owner.next((report) => report['connected'] !== undefined)
    // Two standbys wait for the session: neither shares it while its owner lives.
    const standbys = [worker('standby-1', store, 'wait'), worker('standby-2', store, 'wait')]
    await Promise.all(standbys.map((standby) => standby.next((report) => report['waiting'] === true)))

    owner.send('job')
    await owner.next((report) => report['asked'] !== undefined)
    expect(
      owner.reports.filter((report) => report['progress'] !== undefined).map((report) => report['progress']),
    ).toEqual([1, 2])
    expect(standbys.every((standby) => standby.reports.every((report) => report['connected'] === undefined))).toBe(true)
    owner.child.kill('SIGKILL')
    const killedAt = Date.now()

    const result = await Promise.race(
      standbys.map((standby) => standby.next((report) => report['result'] !== undefined)),
    )
    const adopter = standbys.find((standby) => standby.reports.includes(result))!
    const other = standbys.find((standby) => standby !== adopter)!
    const adopted = adopter.reports.find((report) => report['connected'] !== undefined)!
    const resumed = adopter.reports.find((report) => report['reconnect'] === 'stream-resumption')!
    expect(adopted['connected']).toBe(sessionId)
    // Within the lease TTL of the last renewal (a third of it before the kill at most), and the wait's poll.
    expect(resumed.at - killedAt).toBeLessThan(leaseTtlMs * 1.5)
    expect(result['result']).toMatchObject({
      result: {content: [{type: 'text', text: `job done: answer from ${adopter.reports[0]!.worker}`}]},
    })
    expect(result['metrics']).toMatchObject({streamResumptions: 1, unmatchedResponses: 1})

    expect(server.executions).toEqual({job: 1})
    expect(server.requests('POST', 'initialize')).toHaveLength(1)
    // The server's request was answered once, by the adopter's Client (the owner never answered it). The
    // standalone stream re-attached without a cursor may bring it again while that answer is on its way: the
    // transport then sends the same answer again, never a second one (the server asked twice).
    expect(adopter.reports.filter((report) => report['asked'] !== undefined)).toHaveLength(1)
    expect(
      [...server.answers.values()].map((answers) => new Set(answers.map((answer) => JSON.stringify(answer))).size),
    ).toEqual([1])
    expect(reusedRequestIds(seen)).toEqual([])
    // Only the owner and then the adopter ever used the session; the other standby is still waiting.
    expect(new Set(seen.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.worker))).toEqual(
      new Set(['owner', adopter.reports[0]!.worker]),
    )
    expect(other.reports.some((report) => report['connected'] !== undefined)).toBe(false)
    expect(
      seen.filter((entry) => entry.lastEventId !== null).every((entry) => entry.worker === adopter.reports[0]!.worker),
    ).toBe(true)
    expect(adopter.reports.filter((report) => report['storeError'] !== undefined)).toEqual([])

    adopter.send('close')
    // Released on close: the other standby takes the session at once, not a TTL later.
    const closedAt = Date.now()
    const taken = await other.next((report) => report['connected'] !== undefined)
    expect(taken['connected']).toBe(sessionId)
    expect(taken.at - closedAt).toBeLessThan(leaseTtlMs)
    other.send('close')
    await fleet.listening.close()
    fleet = undefined
  }, 40_000)
})

describe('two processes on one FileStore', () => {
  it('150 calls each at once: each has a session of its own, no request ID used twice in a session, no stream resumed by a non-owner', async () => {
    fleet = await startFleetServer()
    const {seen} = fleet
    const store: ['file', string] = ['file', join(build.directory, 'two-processes.json')]
    // A session left in the file by an earlier process: the one both would have attached to.
    const earlier = worker('earlier', store, 'new-session')
    const {connected: stored} = await earlier.next((report) => report['connected'] !== undefined)
    earlier.send('close')
    await new Promise((resolve) => earlier.child.once('exit', resolve))

    const pair = [worker('a', store, 'new-session'), worker('b', store, 'new-session')]
    const sessions = await Promise.all(
      pair.map(async (process) => (await process.next((report) => report['connected'] !== undefined))['connected']),
    )
    // One adopted the stored session; the other started its own.
    expect(sessions).toContain(stored)
    expect(new Set(sessions).size).toBe(2)
    for (const process of pair) process.send('calls')
    await Promise.all(pair.map((process) => process.next((report) => report['calls'] === 150, 30_000)))

    expect(reusedRequestIds(seen)).toEqual([])
    for (const [index, process] of pair.entries()) {
      const name = ['a', 'b'][index]!
      const used = new Set(
        seen.filter((entry) => entry.worker === name && entry.sessionId !== null).map((entry) => entry.sessionId),
      )
      expect(used).toEqual(new Set([sessions[index]]))
      expect(process.reports.filter((report) => report['storeError'] !== undefined)).toEqual([])
    }
    expect(seen.filter((entry) => entry.lastEventId !== null)).toEqual([])
    for (const process of pair) process.send('close')
    await fleet.listening.close()
    fleet = undefined
  }, 60_000)
})
