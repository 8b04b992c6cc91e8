/**
 * A soak client in a process of its own, on a `FileStore`, so that it can be killed (SIGKILL) mid-call and
 * started again on the same file. It prints every {@link Report} as a JSON line; it stops starting calls when
 * it reads `stop` on its stdin, and exits once its calls are settled and its stdin has ended (the soak keeps it
 * alive meanwhile, so that it answers what the server still asks).
 *
 * argv: a JSON object `{url, file, seed, prefix, concurrency, trace}`.
 */
import {FileStore} from '../src/node.ts'
import {Agent, sleep, type Report} from './agent.ts'
import {Random} from './random.ts'

interface ChildArgs {
  url: string
  file: string
  seed: number
  /** Call IDs are `<prefix><n>`: unique across the lives of one slot. */
  prefix: string
  concurrency: number
  trace: boolean
}

const args = JSON.parse(process.argv[2] ?? '{}') as ChildArgs
const print = (report: Report): void => {
  process.stdout.write(`${JSON.stringify(report)}\n`)
}
const random = new Random(args.seed)
const agent = new Agent(args.url, {
  random,
  sink: print,
  store: new FileStore(args.file),
  name: 'soak-child',
  trace: args.trace,
})

let stopping = false
const ended = new Promise<void>((resolve) => {
  process.stdin.on('end', () => {
    stopping = true
    resolve()
  })
})
process.stdin.setEncoding('utf8')
process.stdin.on('data', (text: string) => {
  if (text.includes('stop')) stopping = true
})

await agent.connect()
let next = 0
await Promise.all(
  Array.from({length: args.concurrency}, async () => {
    while (!stopping) {
      const outcome = await agent.call(`${args.prefix}${next++}`)
      await sleep(outcome === 'result' ? random.int(0, 30) : random.int(100, 500))
    }
  }),
)
await ended
await agent.close()
process.exit(0)
