/**
 * Against the stacks remote MCP servers are mostly deployed on, each a real process on 127.0.0.1 behind the TCP proxy
 * that cuts real sockets: Vercel's `mcp-handler` (stateless for a 2025-era Client: no session, no event IDs, GET
 * answered 405), Cloudflare's `McpAgent` under `wrangler dev --local` (a Durable Object per session, its own event
 * store, no priming event), and `supergateway` over server-everything's stdio mode (sessions, no event IDs at all).
 * The rows are test/fixtures/third-party-rows.ts; each profile says what each transport did, and where a server cannot
 * do what a row needs, what follows. docs/comparison.md's table "Against the servers people deploy" quotes them.
 */
import {afterEventWith, afterHeaders} from '../fixtures/tcp-proxy.ts'
import {
  both,
  describeThirdParty,
  everythingTools,
  fixtureTools,
  resultWith,
  toolsCall,
  verdicts,
} from '../fixtures/third-party-rows.ts'

const noEventId = verdicts.noToken('no event ID came')

describeThirdParty('mcp-handler', {
  tools: fixtureTools,
  echoed: 'echo: hi',
  asks: 'elicitation',
  askCut: {says: 'from a stateless server (the answer reaches a fresh server, which did not ask)', rule: undefined},
  cut: {ours: verdicts.noCursor, sdk: verdicts.hung},
  ask: both({says: 'handled once, then hung', expected: {outcome: 'hung', handled: 1, resumes: 0}}),
  killed: {
    ours: {says: 'no session to resume: the journal says outcome-unknown', expected: {journal: 'outcome-unknown'}},
    sdk: noEventId,
  },
  restored: {
    ours: {
      says: 'no session, so nothing is restored: the journal says outcome-unknown',
      expected: {journal: 'outcome-unknown', answered: 0},
    },
    sdk: noEventId,
  },
  restarted: both({says: 'stateless, nothing lost: the next call answered', expected: {next: 'answered'}}),
})

describeThirdParty('mcp-agent', {
  tools: fixtureTools,
  echoed: 'echo: hi',
  asks: 'elicitation',
  askCut: {
    says: "sent while its stream is cut (after the tool's first progress there)",
    rule: (proxy) => proxy.cutNext({request: toolsCall, at: afterEventWith('asking for a name')}),
  },
  cut: both(verdicts.everyProgress),
  ask: both({says: 'handled once, and the result', expected: {outcome: 'result', handled: 1, resumes: 1}}),
  // McpAgent stores a result written while no connection of its stream is live, then clears the stream.
  killed: {
    ours: {
      says: 'McpAgent dropped the result it wrote with no connection live: the journal says outcome-unknown',
      expected: {journal: 'outcome-unknown'},
    },
    sdk: verdicts.timedOut('McpAgent dropped the result'),
  },
  restored: {
    // Resume, then answer (docs/design.md#session): answered first, the result was dropped (outcome-unknown).
    ours: {
      says: "the call's stream resumed, then the restored request answered once: the result",
      expected: {journal: 'completed', ...resultWith('elicited: accept {"name":"Grace"}'), answered: 1},
    },
    sdk: verdicts.timedOut('nothing asks again'),
  },
  restarted: both({says: 'sessions kept in the Durable Object: the next call answered', expected: {next: 'answered'}}),
})

describeThirdParty('supergateway', {
  tools: everythingTools,
  echoed: 'Echo: hi',
  asks: 'sampling',
  askCut: {
    says: 'sent while its stream is cut (as its headers arrive: no event ID ever comes)',
    rule: (proxy) => proxy.cutNext({request: toolsCall, at: afterHeaders}),
  },
  cut: {ours: verdicts.noCursor, sdk: verdicts.hung},
  ask: {
    ours: {
      says: 'never delivered, no cursor: outcome-unknown at once',
      expected: {outcome: 'outcome-unknown', handled: 0, resumes: 0},
    },
    sdk: {says: 'never delivered: hung', expected: {outcome: 'hung', handled: 0, resumes: 0}},
  },
  killed: {
    ours: {says: 'no cursor to resume with: the journal says outcome-unknown', expected: {journal: 'outcome-unknown'}},
    sdk: noEventId,
  },
  restored: {
    ours: {
      says: 'the restored request answered at once (no cursor to wait for), its result lost: outcome-unknown',
      expected: {journal: 'outcome-unknown', answered: 1},
    },
    sdk: noEventId,
  },
  restarted: {ours: verdicts.sessionExpired, sdk: verdicts.refusedKept(404, 'Session not found')},
})
