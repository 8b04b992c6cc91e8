/**
 * `npm run playground [-- --build] [--port N] [--host H]`: one Node process serving the page (Vite's dev
 * server, or a production build with --build) and the reference server on the same origin.
 */
import {parseArgs} from 'node:util'
import {startPlayground} from './server.ts'

const {values} = parseArgs({
  options: {
    build: {type: 'boolean'},
    port: {type: 'string'},
    host: {type: 'string'},
    help: {type: 'boolean', short: 'h'},
  },
})

if (values.help === true) {
  console.log('usage: npm run playground [-- --build] [--port N] [--host H]')
  process.exit(0)
}

const playground = await startPlayground({
  serve: values.build === true ? 'build' : 'dev',
  ...(values.port === undefined ? {} : {port: Number(values.port)}),
  ...(values.host === undefined ? {} : {host: values.host}),
})
console.log(
  `\n  mcp-resumable-http playground (${values.build === true ? 'production build' : 'Vite dev server'}) + reference server on one origin:\n`,
)
console.log(`  ➜  ${playground.url}\n`)
console.log('  Ctrl+C to stop.')

const stop = (): void => {
  void playground.close().then(() => process.exit(0))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
