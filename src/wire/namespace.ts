import {notLoaded} from '../errors.ts'

/** Hex digits of the query digest kept in a namespace: 128 bits, no collision between two endpoints. */
const digestLength = 32

/**
 * Where the records of one endpoint (and one `storeKey`) live in the store. Origin and path, then a digest of
 * the query when there is one: endpoints that differ only in their query (`?token=ALICE`, `?token=BOB`) never
 * share a session or a cursor, and the store never holds a query value. Taken from the URL as it is at
 * construction; the digest is computed by the first store access ({@link StoreNamespace.known}).
 */
export class StoreNamespace {
  readonly #endpoint: string
  readonly #query: string
  readonly #storeKey: string
  #value: string | undefined
  #digest: Promise<void> | undefined

  constructor(url: URL, storeKey: string | undefined) {
    this.#endpoint = `mcp-resumable-http:${url.origin}${url.pathname}`
    this.#query = url.search
    this.#storeKey = storeKey === undefined ? '' : `#${storeKey}`
    if (this.#query === '') this.#value = this.#endpoint + this.#storeKey
  }

  /**
   * Undefined once the namespace is known, so that a store access then costs no turn; else the digest of the
   * query, computed. Rejects with a `network` TransportError when it cannot be (the SHA-256 of a page without Web
   * Crypto did not load), and tries again on the next call.
   */
  known(): Promise<void> | undefined {
    if (this.#value !== undefined) return undefined
    this.#digest ??= sha256Of(this.#query).then(
      (hex) => {
        this.#value = `${this.#endpoint}?sha256=${hex.slice(0, digestLength)}${this.#storeKey}`
      },
      (cause: unknown) => {
        this.#digest = undefined
        throw notLoaded("The SHA-256 of the server URL's query, which names its records in the store,", cause)
      },
    )
    return this.#digest
  }

  /** The namespace; read only once {@link StoreNamespace.known} has settled it. */
  get value(): string {
    if (this.#value === undefined)
      throw new Error('The store namespace was read before the digest of its query was known')
    return this.#value
  }
}

/**
 * SHA-256 (hex) of `text`: Web Crypto's, wherever there is one (every secure context, service workers included,
 * and Node, Deno, Bun, workerd), so that no module is imported there (a service worker may not `import()`); a page
 * over plain HTTP has none, and loads src/wire/sha256.ts on first use instead.
 */
async function sha256Of(text: string): Promise<string> {
  const subtle = (globalThis.crypto as Partial<Crypto> | undefined)?.subtle
  if (subtle === undefined) return (await import('./sha256.ts')).sha256Hex(text)
  const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('')
}
