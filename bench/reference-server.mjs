// The library's reference server (`mcp-resumable-http/testing/node`) on a real socket, as a child process
// forked by bench/scale.mjs: it reports its port over IPC and exits with its parent.
import {createReferenceServer, listen} from '../dist/testing/node.js'

// Sessions of finished runs are dropped once idle, so that one server serves the whole sweep in bounded memory.
const listening = await listen(createReferenceServer({sessionIdleMs: 30_000}))
process.send?.({type: 'listening', url: listening.url})
process.on('disconnect', () => process.exit(0))
