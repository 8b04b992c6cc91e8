/**
 * The agent's own record of its calls and of the sampling requests waiting for the user, in `chrome.storage.local`.
 * It outlives the service worker: the popup shows it whether the worker runs or not, and a worker that comes back
 * attributes to the right call the results and progress of calls an earlier instance started.
 */
import type {CallRecord, JsonRpcId} from 'mcp-resumable-http'
import type {AppState, Approval, CallEntry} from './messages.ts'

const empty = (): AppState => ({calls: {}, approvals: {}, unattributed: [], errors: []})

/** Reads `chrome.storage.local` as an {@link AppState} (what is missing, empty); for the popup too. */
export function readState(area: chrome.storage.StorageArea): Promise<AppState> {
  return area.get<AppState>(empty())
}

/** The app state, changed one update at a time (each reads, changes and writes the whole state). */
export class AppStore {
  readonly #area: chrome.storage.StorageArea
  #queue: Promise<void> = Promise.resolve()

  constructor(area: chrome.storage.StorageArea) {
    this.#area = area
  }

  update(change: (state: AppState) => void): Promise<void> {
    const next = this.#queue.then(async () => {
      const state = await readState(this.#area)
      change(state)
      await this.#area.set(state)
    })
    this.#queue = next.catch(() => {})
    return next
  }

  async started(tool: string, instance: string): Promise<string> {
    const id = crypto.randomUUID()
    await this.update((state) => (state.calls[id] = {id, tool, instance, status: 'pending', progress: []}))
    return id
  }

  /** Progress of a call this instance started, or of an earlier instance's (`call` and the wire's `token`). */
  progressed(
    target: string | {call: CallRecord | undefined; token: JsonRpcId; instance: string},
    progress: number,
  ): Promise<void> {
    return this.update((state) => {
      const entry = typeof target === 'string' ? state.calls[target] : earlierCall(state, target)
      entry?.progress.push(progress)
    })
  }

  /** The answer to a call: by the app's ID for this instance's calls, by the wire ID for an earlier instance's. */
  finished(target: string | {wireId: JsonRpcId}, outcome: {text: string; failed: boolean}): Promise<void> {
    return this.update((state) => {
      const entry =
        typeof target === 'string'
          ? state.calls[target]
          : Object.values(state.calls).find((call) => call.wireId === target.wireId)
      if (entry === undefined && typeof target !== 'string')
        state.unattributed.push({wireId: target.wireId, text: outcome.text})
      if (entry === undefined) return
      entry.status = outcome.failed ? 'failed' : 'done'
      entry.result = outcome.text
    })
  }

  approval(key: string, change: Approval): Promise<void> {
    return this.update((state) => (state.approvals[key] = change))
  }

  error(error: unknown): Promise<void> {
    return this.update((state) => state.errors.push(String(error)))
  }
}

/**
 * The earlier instance's call a replayed progress notification belongs to: the one its token (the wire ID) names,
 * or else the oldest pending call of that tool, started by another instance, whose wire ID is not known yet.
 */
function earlierCall(
  state: AppState,
  {call, token, instance}: {call: CallRecord | undefined; token: JsonRpcId; instance: string},
): CallEntry | undefined {
  const calls = Object.values(state.calls)
  const known = calls.find((entry) => entry.wireId === token)
  if (known !== undefined) return known
  const entry = calls.find(
    (candidate) =>
      candidate.status === 'pending' &&
      candidate.instance !== instance &&
      candidate.wireId === undefined &&
      candidate.tool === call?.name,
  )
  if (entry !== undefined) entry.wireId = token
  return entry
}
