import {createVitest} from 'vitest/node'
const [pool, isolate, ...files] = process.argv.slice(2)
const ctx = await createVitest('test', {config: process.env.CFG, pool, maxWorkers: 1, isolate: isolate === 'true', watch: false, coverage: {enabled: false}, onConsoleLog: () => false, reporters: []})
for (let i = 0; i < 4; i++) {
  const t = Date.now()
  await ctx.start(files)
  const tests = ctx.state.getFiles().flatMap(f => f.tasks).length
  const failed = ctx.state.getFiles().filter(f => f.result?.state === 'fail').length
  console.log(pool, isolate, 'run', i, Date.now() - t, 'ms', 'suites', tests, 'failedFiles', failed)
}
await ctx.close()
