/**
 * Against MCP servers nobody on this project wrote, each a real process on 127.0.0.1 behind the TCP proxy that cuts
 * real sockets: `@modelcontextprotocol/server-everything` in its Streamable HTTP mode, and a server built with
 * `fastmcp`'s `httpStream` transport. The rows are test/fixtures/third-party-rows.ts; each profile says what each
 * transport did. docs/comparison.md's table "Against third-party servers" quotes them.
 */
import {execFile} from 'node:child_process'
import {promisify} from 'node:util'
import {describe, expect, it} from 'vitest'
import {afterEventWith} from '../fixtures/tcp-proxy.ts'
import {
  afterFirstEvent,
  both,
  describeThirdParty,
  everythingTools,
  fixtureTools,
  resultWith,
  toolsCall,
  verdicts,
} from '../fixtures/third-party-rows.ts'

const run = promisify(execFile)

describeThirdParty('server-everything', {
  tools: everythingTools,
  echoed: 'Echo: hi',
  asks: 'sampling',
  askCut: {
    says: "sent while its stream is cut (after the stream's priming event)",
    rule: (proxy) => proxy.cutNext({request: toolsCall, at: afterFirstEvent}),
  },
  // Its event store answers a resumption with an event ID where the SDK expects a stream ID: after the replay, the
  // rest goes to no stream. Ours resumes again from the newest cursor once the replay falls silent.
  cut: {
    ours: {
      says: 'the result, each progress once (resumed again once the replay fell silent)',
      expected: {outcome: 'result', progress: [1, 2, 3, 4, 5, 6], resumes: 'one or more'},
    },
    sdk: {says: 'hung after the replay', expected: {outcome: 'hung', progress: [1, 2], resumes: 1}},
  },
  ask: {
    ours: {says: 'handled once, and the result', expected: {outcome: 'result', handled: 1, resumes: 'one or more'}},
    sdk: {says: 'handled once, then hung', expected: {outcome: 'hung', handled: 1, resumes: 1}},
  },
  killed: {
    ours: {
      says: "the journal's call completed",
      expected: {journal: 'completed', ...resultWith('Long running operation completed')},
    },
    sdk: {says: "the call's answer", expected: resultWith('Long running operation completed')},
  },
  restored: {
    ours: {
      says: 'the restored request answered once, the result',
      expected: {journal: 'completed', ...resultWith('LLM sampling result'), answered: 1},
    },
    sdk: verdicts.timedOut('nothing asks again'),
  },
  restarted: {ours: verdicts.sessionExpired, sdk: verdicts.refusedKept(400, 'No valid session ID provided')},
})

describeThirdParty('fastmcp', {
  // fastmcp sends its elicitation on the standalone GET stream, after a log line there.
  tools: fixtureTools,
  echoed: 'echo: hi',
  asks: 'elicitation',
  progressBeforeAsking: true,
  askCut: {
    says: "sent while the standalone stream is cut (fastmcp's way to ask, after the tool's log line there)",
    rule: (proxy) =>
      proxy.cutNext({request: (chunk) => chunk.startsWith('GET'), at: afterEventWith('asking for a name')}),
  },
  cut: both(verdicts.everyProgress),
  ask: both({says: 'handled once, and the result', expected: {outcome: 'result', handled: 1, resumes: 1}}),
  killed: {
    ours: {says: "the journal's call completed", expected: {journal: 'completed', ...resultWith('done after 6 steps')}},
    sdk: {says: "the call's answer", expected: resultWith('done after 6 steps')},
  },
  // The elicitation came on the standalone stream, the progress on the call's: both streams resume from a cursor.
  restored: {
    ours: {
      says: 'the restored request answered once, the result replayed on the resumed call stream',
      expected: {journal: 'completed', ...resultWith('elicited: accept {"name":"Grace"}'), answered: 1},
    },
    sdk: verdicts.timedOut('nothing asks again'),
  },
  restarted: {ours: verdicts.sessionExpired, sdk: verdicts.refusedKept(404, 'Session not found')},
})

describe('the preload that keeps every third-party process on the machine', () => {
  it('fails a connection to any host but a loopback one at once, and reports it', async () => {
    // 0.0.0.0 is this machine on Linux: were the preload to let it through, nothing would leave the machine either.
    const script = "require('node:net').connect({host: '0.0.0.0', port: 9}).on('error', (e) => console.log(e.message))"
    const preload = new URL('../fixtures/loopback-only.mjs', import.meta.url).href
    const {stdout} = await run(process.execPath, ['--import', preload, '-e', script])
    expect(stdout.split('\n')).toEqual([
      '@@ {"refused":"0.0.0.0:9"}',
      'connection to 0.0.0.0 refused: tests stay on 127.0.0.1',
      '',
    ])
  })
})
