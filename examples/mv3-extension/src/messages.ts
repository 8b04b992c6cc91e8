/** What the popup (or any extension page) and the service worker share: the messages, and the app state's shape. */

/** What an extension page asks the service worker. */
export type Request =
  /** Starts a tool call; answered with the app's ID of the call at once, before the call ends. */
  | {type: 'call'; tool: string; arguments?: Record<string, unknown>}
  /** The user approves sampling request `key`: the worker's sampling handler answers it. */
  | {type: 'approve'; key: string}
  /** The names of the server's tools (`tools/list`: the Client compiles their output schemas). */
  | {type: 'tools'}
  /** The worker's state; any message also wakes a stopped worker. */
  | {type: 'status'}

export type Reply =
  | {id: string}
  | {ok: true}
  | {tools: string[]}
  | {instance: string; sessionId: string | undefined; pending: number}
  | {error: string}

/** The app state in `chrome.storage.local` (./app-state.ts). */
export interface CallEntry {
  /** The app's own ID of the call. */
  id: string
  tool: string
  /** The worker instance that started it: another instance gets its answer through the transport's events. */
  instance: string
  status: 'pending' | 'done' | 'failed'
  /** Progress values, in the order they arrived, from whichever instance received them. */
  progress: number[]
  result?: string
  /** Its request ID on the wire, once an earlier instance's replayed progress revealed it (as the progress token). */
  wireId?: string | number
}

export interface Approval {
  question: string
  status: 'waiting' | 'approved' | 'answered'
}

export interface AppState {
  calls: Record<string, CallEntry>
  /** Sampling requests by the server's request ID: the user approves each before the model answers it. */
  approvals: Record<string, Approval>
  /** Answers to an earlier instance's calls that no call could be matched to: kept, never dropped. */
  unattributed: {wireId: string | number; text: string}[]
  errors: string[]
}
