/**
 * The popup: starts calls and approves sampling requests through messages to the worker (which wake it when it
 * is stopped), and shows the app state from `chrome.storage.local`, which it reads without waking the worker.
 */
import {readState} from './app-state.ts'
import type {Reply, Request} from './messages.ts'

const ask = (request: Request): Promise<Reply> => chrome.runtime.sendMessage<Request, Reply>(request)

document
  .querySelector('#run-slow')!
  .addEventListener('click', () => void ask({type: 'call', tool: 'slow', arguments: {steps: 6, delayMs: 2000}}))
document.querySelector('#run-ask')!.addEventListener('click', () => void ask({type: 'call', tool: 'ask'}))

function item(text: string, action?: {label: string; run: () => void}): HTMLLIElement {
  const li = document.createElement('li')
  li.textContent = text
  if (action !== undefined) {
    const button = document.createElement('button')
    button.textContent = action.label
    button.addEventListener('click', action.run)
    li.append(' ', button)
  }
  return li
}

async function render(): Promise<void> {
  const state = await readState(chrome.storage.local)
  document
    .querySelector('#calls')!
    .replaceChildren(
      ...Object.values(state.calls).map((call) =>
        item(
          `${call.tool}: ${call.status} · progress ${call.progress.join(' ') || '—'}${call.result === undefined ? '' : ` · ${call.result}`}`,
        ),
      ),
      ...state.unattributed.map((answer) => item(`an earlier call (request ${String(answer.wireId)}): ${answer.text}`)),
    )
  document
    .querySelector('#approvals')!
    .replaceChildren(
      ...Object.entries(state.approvals).map(([key, approval]) =>
        item(
          `${approval.question}: ${approval.status}`,
          approval.status === 'waiting' ? {label: 'Approve', run: () => void ask({type: 'approve', key})} : undefined,
        ),
      ),
    )
  document.querySelector('#status')!.textContent = state.errors.length === 0 ? '' : `errors: ${state.errors.join('; ')}`
}

chrome.storage.onChanged.addListener(() => void render())
void render()
