import {context, propagation, ROOT_CONTEXT, trace, type Context, type Span} from '@opentelemetry/api'
import type {FetchLike} from '../index.ts'

const headerSetter = {set: (carrier: Headers, key: string, value: string) => carrier.set(key, value)}

/**
 * `inner` (the app's fetch, or the global one read at each call) with each stream's GET sent in its span's context:
 * `spanOf` names the span of a GET's `Last-Event-ID` (null: an attach, the standalone stream's). A POST goes in the
 * context `send` made it in, its request's span. The app's propagator puts that context in the request's headers,
 * so that the server's span of it joins the call's trace.
 */
export function streamFetch(
  inner: FetchLike | undefined,
  spanOf: (lastEventId: string | null) => Span | undefined,
): FetchLike {
  return (url, init) => {
    const fetchFunction = inner ?? globalThis.fetch
    const headers = new Headers(init?.headers)
    let within: Context | undefined = context.active()
    if (init?.method === 'GET') {
      const span = spanOf(headers.get('last-event-id'))
      within = span === undefined ? undefined : trace.setSpan(ROOT_CONTEXT, span)
    } else if (trace.getSpan(within) === undefined) within = undefined
    if (within === undefined) return fetchFunction(url, init)
    propagation.inject(within, headers, headerSetter)
    return context.with(within, () => fetchFunction(url, {...init, headers}))
  }
}
