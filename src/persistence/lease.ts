/**
 * Ownership of a session (docs/stores.md#ownership-one-session-one-owner): a lease that one
 * transport holds at a time, with a fencing token that grows with every lease of the same name, so
 * that a store can refuse the late writes of an owner whose lease another one took since.
 */

/** What a write is made under: the lease's name and the token it was given. */
export interface Fence {
  /** The name the lease was acquired under. */
  readonly lease: string
  /** The lease's fencing token: the write is refused once a larger one was given for `lease`. */
  readonly token: number
}

/** A lease held: keep it with {@link Lease.renew} more often than its TTL, give it up with {@link Lease.release}. */
export interface Lease {
  /** The fencing token: larger than that of every earlier lease of the same name. */
  readonly token: number
  /** Extends the lease by its TTL from now; false when it was lost (another owner took it since). */
  renew(): Promise<boolean>
  /** Gives the lease up, so that the next transport takes it at once; nothing when it was lost already. */
  release(): Promise<void>
}

/** A write refused because it was fenced with a lease that is no longer the latest: another owner took over. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError'
  readonly code = 'lease-lost'
  /** The lease the refused write was made under. */
  readonly lease: string

  constructor(fence: Fence) {
    super(`The lease ${fence.lease} (token ${fence.token}) was taken over by another owner: the write is refused`)
    this.lease = fence.lease
  }
}

/** True for a {@link LeaseLostError}, also one from another realm or another copy of this library. */
export function isLeaseLost(error: unknown): error is LeaseLostError {
  return typeof error === 'object' && error !== null && (error as {code?: unknown}).code === 'lease-lost'
}

/** Throws a TypeError when `ttlMs` cannot be a lease's TTL. */
export function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw new TypeError(`A lease TTL must be a positive integer of milliseconds, got ${String(ttlMs)}`)
}

/** Leases kept in this JavaScript realm (process or page): {@link MemoryStore}'s, and `IdbStore`'s without Web Locks. */
export class LocalLeases {
  /** The latest token given for each name, kept after its lease ends: tokens only grow. */
  readonly #tokens = new Map<string, number>()
  /** The live lease of each name: its token and when it expires. */
  readonly #held = new Map<string, {token: number; expiresAt: number}>()

  acquire(name: string, ttlMs: number): Lease | undefined {
    checkTtl(ttlMs)
    const held = this.#held.get(name)
    if (held !== undefined && held.expiresAt > Date.now()) return undefined
    const token = (this.#tokens.get(name) ?? 0) + 1
    this.#tokens.set(name, token)
    this.#held.set(name, {token, expiresAt: Date.now() + ttlMs})
    return {
      token,
      renew: () => {
        // Lapsed but not taken over: still the latest token, so it may go on.
        if (this.#tokens.get(name) !== token) return Promise.resolve(false)
        this.#held.set(name, {token, expiresAt: Date.now() + ttlMs})
        return Promise.resolve(true)
      },
      release: () => {
        if (this.#held.get(name)?.token === token) this.#held.delete(name)
        return Promise.resolve()
      },
    }
  }

  /** The error to refuse a write fenced with `fence` with, when it is not the latest lease of its name. */
  refusal(fence: Fence | undefined): LeaseLostError | undefined {
    return fence !== undefined && this.#tokens.get(fence.lease) !== fence.token ? new LeaseLostError(fence) : undefined
  }
}
