/**
 * The timeline and the reconnect decisions: append-only, kept in sessionStorage so that a reload shows what
 * happened before it, next to what the reloaded page did.
 */
import type {TransportEvent} from '../src/index.ts'
import {messageOf} from '../demo/wording.ts'
import {byId, clock, h} from './dom.ts'

export type Tone = 'info' | 'good' | 'warn' | 'bad' | 'fault' | 'muted'

export interface Entry {
  time: number
  load: number
  /** Which stream (or who) it is about: `GET`, `req 3`, `page`, `server`... */
  lane: string
  tone: Tone
  text: string
}

export interface Decision {
  time: number
  load: number
  stream: string
  branch: string
  attempt: number
  sessionId: string | undefined
  lastEventId: string | undefined
}

const limit = 300

function restore<T>(key: string): T[] {
  try {
    return JSON.parse(sessionStorage.getItem(key) ?? '[]') as T[]
  } catch {
    return []
  }
}

/** An append-only list shown in a DOM container and kept in sessionStorage. */
class Kept<T> {
  readonly items: T[]
  readonly #key: string
  readonly #render: (item: T) => HTMLElement
  readonly #container: () => HTMLElement

  constructor(key: string, container: () => HTMLElement, render: (item: T) => HTMLElement) {
    this.#key = key
    this.#container = container
    this.#render = render
    this.items = restore<T>(key)
  }

  show(): void {
    this.items.splice(0, this.items.length, ...restore<T>(this.#key))
    this.#container().replaceChildren(...this.items.map(this.#render))
    this.#scroll()
  }

  add(item: T): void {
    this.items.push(item)
    if (this.items.length > limit) this.items.splice(0, this.items.length - limit)
    sessionStorage.setItem(this.#key, JSON.stringify(this.items))
    const container = this.#container()
    container.append(this.#render(item))
    while (container.children.length > limit) container.firstElementChild?.remove()
    this.#scroll()
  }

  #scroll(): void {
    const panel = this.#container().closest('.scroll')
    if (panel !== null) panel.scrollTop = panel.scrollHeight
  }
}

export const timeline = new Kept<Entry>(
  'playground:timeline',
  () => byId('timeline'),
  (entry) =>
    h(
      'li',
      {class: `tone-${entry.tone}`, 'data-lane': entry.lane},
      h('time', {}, clock(entry.time, false)),
      h('span', {class: 'lane'}, entry.lane),
      h('span', {class: 'text'}, entry.text),
    ),
)

export const decisions = new Kept<Decision>(
  'playground:decisions',
  () => byId('decisions').querySelector('tbody')!,
  (decision) =>
    h(
      'tr',
      {'data-branch': decision.branch},
      h('td', {}, clock(decision.time, false)),
      h('td', {}, `#${decision.load}`),
      h('td', {}, decision.stream),
      h(
        'td',
        {class: `branch ${decision.branch}`},
        decision.branch,
        decision.attempt > 1 && h('small', {title: `attempt ${decision.attempt}`}, ` #${decision.attempt}`),
      ),
      h('td', {class: 'header'}, decision.sessionId ?? '—'),
      h('td', {class: 'header'}, decision.lastEventId ?? '—'),
    ),
)

/** Forgets the timeline, the decisions and the calls kept across reloads. */
export function clearLogs(): void {
  for (const key of ['playground:timeline', 'playground:decisions', 'playground:calls']) sessionStorage.removeItem(key)
}

export function laneOf(stream: 'standalone' | 'request', requestId: unknown): string {
  return stream === 'standalone' ? 'GET' : `req ${String(requestId)}`
}

const duplicateName = {
  event: 'event',
  response: 'response to request',
  'server-request': 'server request',
  progress: 'progress of request',
} as const

/** One transport event as a timeline entry (undefined: not worth a line). */
export function describe(event: TransportEvent): Pick<Entry, 'lane' | 'tone' | 'text'> | undefined {
  switch (event.type) {
    case 'session-started':
      return {lane: 'session', tone: 'good', text: `initialize → ${event.sessionId}`}
    case 'session-expired':
      return {
        lane: 'session',
        tone: 'bad',
        text: `${event.sessionId} expired (HTTP 404): session and cursors cleared, ${event.settledRequests} pending request(s) settled`,
      }
    case 'session-terminated':
      return {lane: 'session', tone: 'muted', text: `${event.sessionId} terminated (HTTP ${event.status})`}
    case 'stream-opened':
      return {
        lane: laneOf(event.stream, event.requestId),
        tone: 'info',
        text: `opened · Mcp-Session-Id ${event.headers['mcp-session-id'] ?? '—'}`,
      }
    case 'reconnect':
      return {
        lane: laneOf(event.stream, event.requestId),
        tone: event.branch === 'stream-resumption' ? 'good' : 'warn',
        text: `↻ ${event.branch} · Last-Event-ID ${event.headers['last-event-id'] ?? '—'}`,
      }
    case 'reconnect-failed':
      if (event.attempt === 0)
        return {
          lane: laneOf(event.stream, event.requestId),
          tone: 'fault',
          text: `✂ connection broke (${messageOf(event.error)})`,
        }
      return {
        lane: laneOf(event.stream, event.requestId),
        tone: 'warn',
        text: `attempt ${event.attempt} failed: ${messageOf(event.error)}`,
      }
    case 'stream-degraded':
      return {
        lane: laneOf(event.stream, undefined),
        tone: 'bad',
        text: `out of fast attempts (${messageOf(event.error)}): tried every maxDelayMs, and when a call succeeds`,
      }
    case 'stream-recovered':
      return {
        lane: laneOf(event.stream, undefined),
        tone: 'good',
        text: `connected again after ${String(Math.round(event.downMs / 1000))} s`,
      }
    case 'cursor-rejected':
      return {
        lane: laneOf(event.stream, event.requestId),
        tone: 'bad',
        text: `Last-Event-ID ${event.lastEventId} refused (HTTP ${event.status}): cursor dropped`,
      }
    case 'stream-closed':
      if (event.reason === 'abandoned' || event.reason === 'completed')
        return {lane: laneOf(event.stream, event.requestId), tone: 'muted', text: `closed: ${event.reason}`}
      return {lane: laneOf(event.stream, event.requestId), tone: 'warn', text: `closed: ${event.reason}`}
    case 'duplicate-dropped':
      return {
        lane: 'dedupe',
        tone: 'warn',
        text: `⊘ duplicate dropped: ${duplicateName[event.what]} ${String(event.id)}`,
      }
    case 'cached-answer-resent':
      return {
        lane: 'dedupe',
        tone: 'warn',
        text: `⊘ server request ${String(event.requestId)} came again: cached answer re-sent, handler not run`,
      }
    case 'request-restored':
      return {
        lane: 'dedupe',
        tone: 'warn',
        text: `↺ server request ${String(event.requestId)} was left unanswered by the earlier page: handed to this one`,
      }
    case 'unmatched-response':
      return {
        lane: `req ${String(event.id)}`,
        tone: 'good',
        text: "← the answer to an earlier page's call: reported to the page (this Client never made it)",
      }
    case 'orphaned-notification':
      return {
        lane: 'replay',
        tone: 'muted',
        text: `${(event.method ?? 'notification').replace('notifications/', '')} for an earlier page's Client: not delivered`,
      }
    case 'request-settled': {
      const resend = event.code === 'session-expired' || event.code === 'outcome-unknown' ? ': not sent again' : ''
      return {lane: 'page', tone: 'bad', text: `request ${String(event.requestId)} settled '${event.code}'${resend}`}
    }
    case 'store-error':
      return {lane: 'IndexedDB', tone: 'bad', text: `${event.key}: ${messageOf(event.error)}`}
    case 'record-discarded':
      return {lane: 'IndexedDB', tone: 'warn', text: `${event.key} discarded: ${event.reason}`}
    case 'limit-exceeded':
      return {
        lane: event.stream === undefined ? 'page' : laneOf(event.stream, event.requestId),
        tone: 'warn',
        text: `limit ${event.limit} (${event.max}) reached${event.size === undefined ? '' : `: ${event.size}`}`,
      }
    case 'call-changed':
      // An earlier page's call as it ends (its progress is on the replayed stream's lines already).
      if (!event.call.inherited || event.call.state === 'sent') return undefined
      return {
        lane: 'journal',
        tone: 'info',
        text: `${event.call.name}: an earlier page's call, ${event.call.state}${event.call.progress === undefined ? '' : ` at ${event.call.progress.progress}/${String(event.call.progress.total)}`}`,
      }
    case 'pending-changed':
      return undefined
  }
}
