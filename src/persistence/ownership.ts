import {sleep} from '../policy/backoff.ts'
import {abortedError, TransportError} from '../errors.ts'
import type {StoreNamespace} from '../wire/namespace.ts'
import {checkTtl, type Fence, type Lease} from './lease.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import type {ResumptionStore} from './store.ts'

/** The ownership options of the transport ({@link https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/stores.md#ownership-one-session-one-owner | one owner per session}). */
export interface OwnershipOptions {
  /**
   * What a transport does when a live owner (another tab, process or machine) holds the session it finds in a
   * store that implements `acquire`: `'new-session'` starts a session of its own, in a slot of its own of the
   * store (the first free one, whose stored session, if any, it adopts); `'wait'` waits in `start()` until the
   * owner lets go or its lease expires, then adopts that session. Never both on one session. A store without
   * `acquire` keeps no owner.
   * @defaultValue 'new-session'
   */
  ownership?: 'new-session' | 'wait' | undefined
  /**
   * How long a lease lasts unless renewed: the transport renews it every third of this, so an owner that dies
   * without `close()` (killed, crashed, its machine gone) is taken over this long after its last renewal.
   * `IdbStore` does not need it (the browser releases a tab's Web Lock when the tab goes), and `FileStore`
   * takes over at once from an owner process found dead on its own host.
   * @defaultValue 10000
   */
  leaseTtlMs?: number | undefined
}

export interface ResolvedOwnership {
  mode: 'new-session' | 'wait'
  leaseTtlMs: number
}

export function resolveOwnership(options: OwnershipOptions): ResolvedOwnership {
  // `null` is no option left out: it is refused below, as any value but the two.
  const mode: unknown = options.ownership === undefined ? 'new-session' : options.ownership
  if (mode !== 'new-session' && mode !== 'wait') {
    throw new TypeError(`options.ownership must be 'new-session' or 'wait', got ${JSON.stringify(mode)}`)
  }
  const leaseTtlMs = options.leaseTtlMs === undefined ? 10_000 : options.leaseTtlMs
  try {
    checkTtl(leaseTtlMs)
  } catch {
    throw new TypeError(`options.leaseTtlMs must be a positive integer of milliseconds, got ${String(leaseTtlMs)}`)
  }
  return {mode, leaseTtlMs}
}

/** How many sessions of one server (and `storeKey`) a store holds at most, each with its own owner. */
const maxSlots = 64

/** A lease this transport holds, with the fence its writes carry (the lease's name and token). */
interface Held {
  readonly lease: Lease
  readonly fence: Fence
}

/** Where slot `slot` of `namespace` keeps its records: slot 0 is the namespace itself. */
function slotNamespace(namespace: string, slot: number): string {
  // A prefix, never a suffix: a suffix could be a `storeKey`'s end, and no namespace starts with '['.
  return slot === 0 ? namespace : `[${slot}]${namespace}`
}

/**
 * The store as one transport sees it: the records of the slot whose lease it holds, every write fenced with
 * that lease. Before {@link OwnedStore.claim} (and with a store that keeps no owner) it is the store itself.
 */
export class OwnedStore implements ResumptionStore {
  readonly #store: ResumptionStore
  readonly #namespace: StoreNamespace
  readonly #options: ResolvedOwnership
  readonly #report: (error: unknown, key: string) => void
  /** The namespace of the slot whose lease is held; undefined for none, which is slot 0's: the namespace itself. */
  #slotNamespace: string | undefined
  /** The lease held, and the fence of every write made under it. */
  #held: Held | undefined
  #heartbeat: ReturnType<typeof setInterval> | undefined

  constructor(
    store: ResumptionStore,
    namespace: StoreNamespace,
    options: ResolvedOwnership,
    report: (error: unknown, key: string) => void,
  ) {
    this.#store = store
    this.#namespace = namespace
    this.#options = options
    this.#report = report
  }

  get(key: string): Promise<JsonValue | undefined> {
    return this.#store.get(this.#map(key))
  }

  set(key: string, value: JsonValue): Promise<void> {
    return this.#store.set(this.#map(key), value, ...this.#fenced())
  }

  delete(key: string): Promise<void> {
    return this.#store.delete(this.#map(key), ...this.#fenced())
  }

  list(prefix: string): Promise<string[]> {
    // Slot 0 costs no turn of its own: the records' writes keep the order they had without owners.
    const namespace = this.#namespace.value
    const slot = this.#slotNamespace ?? namespace
    // Stryker disable next-line ConditionalExpression: slot 0's mapping is the identity
    if (slot === namespace) return this.#store.list(prefix)
    return this.#store.list(this.#map(prefix)).then((keys) => keys.map((key) => namespace + key.slice(slot.length)))
  }

  /**
   * Takes the lease of a session: the first slot no live owner holds (`'new-session'`), or the first slot once
   * its owner lets go (`'wait'`); then keeps it renewed until {@link OwnedStore.release}.
   */
  async claim(signal: AbortSignal): Promise<void> {
    // The first store access of a transport: a URL with a query has its namespace once its digest is computed.
    const digest = this.#namespace.known()
    if (digest !== undefined) await digest
    const acquire = this.#store.acquire?.bind(this.#store)
    if (acquire === undefined || this.#held !== undefined) return
    const {mode, leaseTtlMs} = this.#options
    for (;;) {
      for (let slot = 0; slot < (mode === 'wait' ? 1 : maxSlots); slot++) {
        const namespace = slotNamespace(this.#namespace.value, slot)
        const name = `${namespace}#lease`
        let lease: Lease | undefined
        try {
          lease = await acquire(name, leaseTtlMs)
        } catch (error) {
          // A store that cannot lease cannot store either: said once, and the transport goes on in memory.
          this.#report(error, name)
          return
        }
        if (lease === undefined) continue
        // close() came while the store was leasing: release() found nothing held, so give the lease up here, or its
        // heartbeat would renew it after close() and keep every next owner out for ever.
        if (signal.aborted) {
          await lease.release().catch((error: unknown) => this.#report(error, name))
          throw abortedError(signal)
        }
        const held = {lease, fence: {lease: name, token: lease.token}}
        this.#slotNamespace = namespace
        this.#held = held
        this.#heartbeat = setInterval(() => void this.#renew(held), leaseTtlMs / 3)
        // Not what keeps a process alive: its streams do, and `close()` stops it.
        ;(this.#heartbeat as {unref?: () => void}).unref?.()
        return
      }
      if (mode === 'new-session') {
        throw new TransportError(
          'aborted',
          `Every one of the ${maxSlots} sessions kept in the store for this server is owned by a live transport`,
        )
      }
      await sleep(leaseTtlMs / 4, signal)
    }
  }

  /** Stops renewing the lease and gives it up: the next transport takes the session at once. */
  async release(): Promise<void> {
    clearInterval(this.#heartbeat)
    const held = this.#held
    this.#held = this.#heartbeat = this.#slotNamespace = undefined
    if (held === undefined) return
    try {
      await held.lease.release()
    } catch (error) {
      this.#report(error, held.fence.lease)
    }
  }

  async #renew(held: Held): Promise<void> {
    const name = held.fence.lease
    let kept: boolean
    try {
      kept = await held.lease.renew()
    } catch (error) {
      // The store was unreachable: tried again at the next beat, while the lease may still be ours.
      this.#report(error, name)
      return
    }
    if (kept || this.#held !== held) return
    clearInterval(this.#heartbeat)
    this.#report(
      new Error(`The lease ${name} was taken over by another owner: this transport's writes to it are refused`),
      name,
    )
  }

  #map(key: string): string {
    const slot = this.#slotNamespace
    if (slot === undefined) return key
    const namespace = this.#namespace.value
    return key.startsWith(namespace) ? slot + key.slice(namespace.length) : key
  }

  #fenced(): [] | [Fence] {
    return this.#held === undefined ? [] : [this.#held.fence]
  }
}
