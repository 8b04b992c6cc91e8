/**
 * An abort inside another's lifetime: its signal aborts with `parent`, with the same reason, or alone by `abort`.
 * One listener on `parent` until `release`: a long-lived signal keeps nothing of it once released. (`AbortSignal.any`
 * registers what it needs on each source for as long as the source lives.)
 */
export class ChildAbort {
  readonly #controller = new AbortController()
  readonly #parent: AbortSignal
  readonly #follow = (): void => this.#controller.abort(this.#parent.reason)

  constructor(parent: AbortSignal) {
    this.#parent = parent
    if (parent.aborted) this.#follow()
    // release() removes the listener: a signal aborts once anyway.
    else parent.addEventListener('abort', this.#follow)
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  abort(): void {
    this.#controller.abort()
  }

  /** Its listener leaves `parent`. */
  release(): void {
    this.#parent.removeEventListener('abort', this.#follow)
  }
}
