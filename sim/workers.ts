/**
 * The schedules spread over worker threads, one per core by default: worker `w` of `n` runs the seeds `base + w`,
 * `base + w + n`, ... and reports its tally every few hundred milliseconds, each finding at once.
 */
import {isMainThread, parentPort, Worker, workerData} from 'node:worker_threads'
import {installClock, realTime, VirtualClock} from './clock.ts'
import {emptyTally, runSeeds, type Finding, type Tally} from './runner.ts'

export interface Slice {
  base: number
  count: number
  index: number
  of: number
}

export type WorkerMessage =
  | {type: 'progress'; schedules: number; calls: number; faults: number}
  | {type: 'finding'; finding: Finding}
  | {type: 'done'}

/** The seeds of one worker's slice. */
export function* seedsOf({base, count, index, of}: Slice): Generator<number> {
  for (let n = index; n < count; n += of) yield base + n
}

/** Runs `slices` on worker threads; `onProgress` hears of the totals as they grow. */
export function runOnWorkers(slices: Slice[], onProgress: (tally: Tally) => void): Promise<Tally> {
  const totals = emptyTally()
  const parts = slices.map(() => ({schedules: 0, calls: 0, faults: 0}))
  const sum = (): void => {
    totals.schedules = parts.reduce((total, part) => total + part.schedules, 0)
    totals.calls = parts.reduce((total, part) => total + part.calls, 0)
    totals.faults = parts.reduce((total, part) => total + part.faults, 0)
    onProgress(totals)
  }
  return Promise.all(
    slices.map(
      (slice, index) =>
        new Promise<void>((resolve, reject) => {
          // A schedule allocates much and keeps little: a large young generation scavenges less often.
          const resourceLimits = {maxYoungGenerationSizeMb: 384}
          const worker = new Worker(new URL(import.meta.url), {workerData: slice, resourceLimits})
          worker.on('message', (message: WorkerMessage) => {
            if (message.type === 'finding') totals.findings.push(message.finding)
            else if (message.type === 'progress') parts[index] = message
            else resolve()
            sum()
          })
          worker.on('error', reject)
          worker.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker ${index} exited ${code}`))))
        }),
    ),
  ).then(() => totals)
}

/** A worker's life: its slice, with progress every 250 ms of real time. */
async function work(slice: Slice): Promise<void> {
  const port = parentPort!
  const clock = new VirtualClock()
  installClock(clock)
  let reported = realTime.now()
  const tally = emptyTally()
  const progress = (): void =>
    port.postMessage({
      type: 'progress',
      schedules: tally.schedules,
      calls: tally.calls,
      faults: tally.faults,
    } satisfies WorkerMessage)
  await runSeeds(seedsOf(slice), clock, tally, (finding) => {
    if (finding !== undefined) port.postMessage({type: 'finding', finding} satisfies WorkerMessage)
    if (realTime.now() - reported < 250) return
    reported = realTime.now()
    progress()
  })
  progress()
  port.postMessage({type: 'done'} satisfies WorkerMessage)
}

if (!isMainThread && (workerData as Slice | undefined)?.of !== undefined) await work(workerData as Slice)
