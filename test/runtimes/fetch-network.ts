/**
 * msw 3 for a runtime whose fetch is its own (Bun, Deno): `setupServer` of `msw/node` intercepts Node's HTTP
 * stack, which their global fetch does not go through (docs/runtimes.md), so the handlers are served by a network
 * of `msw/experimental` over the interceptor that wraps the global fetch itself, as in a browser.
 */
import type {HttpRequestEventMap, Interceptor} from '@mswjs/interceptors'
import {FetchInterceptor} from '@mswjs/interceptors/fetch/web'
import type {HttpHandler} from 'msw'
import {defineNetwork, InterceptorSource} from 'msw/experimental'

/** Serves `handlers` to the global fetch; resolves with what stops it. A request no handler takes is an error. */
export function mockFetch(handlers: HttpHandler[]): Promise<() => Promise<void>> {
  // The browser build declares a class Interceptor of its own: the same class at run time, another type to tsc.
  const interceptor = new FetchInterceptor() as unknown as Interceptor<HttpRequestEventMap>
  const network = defineNetwork({
    sources: [new InterceptorSource({interceptors: [interceptor]})],
    handlers,
    onUnhandledFrame: 'error',
    // As setupServer: no line printed per request.
    context: {quiet: true},
  })
  network.enable()
  return Promise.resolve(() => {
    network.disable()
    return Promise.resolve()
  })
}
