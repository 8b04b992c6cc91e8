import {LocalLeases, type Fence, type Lease} from './lease.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import type {ResumptionStore} from './store.ts'

/**
 * What the store uses of a Durable Object's storage (`ctx.storage`, a `DurableObjectStorage` of
 * `@cloudflare/workers-types`): declared here so that the package needs no Cloudflare types of its own.
 */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>
  put(key: string, value: unknown): Promise<void>
  delete(key: string): Promise<boolean>
  list(options: {prefix: string}): Promise<Map<string, unknown>>
}

/** The leases of each object's storage: one per live instance, so that every store over it shares them. */
const leasesOf = new WeakMap<DurableObjectStorageLike, LocalLeases>()

/**
 * A {@link ResumptionStore} in a Cloudflare Durable Object's storage, so that the object keeps its MCP session
 * and cursors when it is evicted, restarted or aborted: its next instance resumes where the last one stopped.
 * Exported from `mcp-resumable-http/cloudflare`; it imports no Node built-in, so it needs no `nodejs_compat`.
 *
 * - Values are kept as the structured clones `storage.put` makes of the JSON values given to `set`; `list` is
 *   `storage.list({prefix})`, which reads the values too (there is no keys-only listing), once per transport
 *   start. The transport's keys start with `mcp-resumable-http:` (or `[n]` and that, for a further session),
 *   so they share the object's storage with its own keys.
 * - Strict durability holds as with the other stores: what the transport awaits (a cursor before the events it
 *   covers are delivered, a call's record before it is sent) is in storage, and an object's output gate holds back
 *   what it sends until the writes made ahead of it are durable.
 * - **Single ownership comes from the object itself:** Cloudflare runs at most one live instance of an object
 *   ID, and an instance that is replaced (aborted, evicted, moved) can no longer write its storage. So the
 *   store keeps no lease in storage, which would only make the next instance wait for a dead one: its leases
 *   (`acquire`) live in the instance, shared by every store over the same `storage`, and keep apart the
 *   transports of one instance (a second transport for the same server starts a session of its own, as with
 *   `MemoryStore`). A new instance takes every session over at once.
 * - Keep the transport (and its SDK Client) in the object, made by the object on a request, never at module
 *   level: a Worker's I/O belongs to the request (or object) that started it, and a client made in one request
 *   and used by another hangs. examples/cloudflare-worker keeps one client across requests this way.
 *
 * @example
 * ```ts
 * import {DurableObject} from 'cloudflare:workers'
 * import {DurableObjectStore} from 'mcp-resumable-http/cloudflare'
 * export class Agent extends DurableObject {
 *   #transport: ResumableHTTPClientTransport | undefined
 *   async fetch(request: Request): Promise<Response> {
 *     this.#transport ??= new ResumableHTTPClientTransport(url, {store: new DurableObjectStore(this.ctx.storage)})
 *     // … connect a Client once on it, then use it for this request and the next ones
 *   }
 * }
 * ```
 */
export class DurableObjectStore implements ResumptionStore {
  readonly #storage: DurableObjectStorageLike
  readonly #leases: LocalLeases

  constructor(storage: DurableObjectStorageLike) {
    const given: unknown = storage
    const missing = (['get', 'put', 'delete', 'list'] as const).filter(
      (method) => typeof (given as Partial<Record<string, unknown>> | null | undefined)?.[method] !== 'function',
    )
    if (missing.length > 0) {
      throw new TypeError(
        `DurableObjectStore: storage must be a Durable Object's storage (ctx.storage); it lacks ${missing.join(', ')}`,
      )
    }
    this.#storage = storage
    let leases = leasesOf.get(storage)
    if (leases === undefined) leasesOf.set(storage, (leases = new LocalLeases()))
    this.#leases = leases
  }

  async get(key: string): Promise<JsonValue | undefined> {
    return (await this.#storage.get(key)) as JsonValue | undefined
  }

  async set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    const refused = this.#leases.refusal(fence)
    if (refused !== undefined) throw refused
    await this.#storage.put(key, value)
  }

  async delete(key: string, fence?: Fence): Promise<void> {
    const refused = this.#leases.refusal(fence)
    if (refused !== undefined) throw refused
    await this.#storage.delete(key)
  }

  async list(prefix: string): Promise<string[]> {
    return [...(await this.#storage.list({prefix})).keys()]
  }

  /** Leases held in this instance of the object: one transport at a time per session (see the class). */
  acquire(name: string, ttlMs: number): Promise<Lease | undefined> {
    return Promise.resolve(this.#leases.acquire(name, ttlMs))
  }
}
