import {foundDead, ownHost} from './file-lock.ts'
import type {Fence} from './lease.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'

/**
 * `FileStore`'s leases: each a record in the store's own file (under the lease's name), read and written under
 * the file's lock like every other record, so that the fence check and the write it guards land in one atomic
 * write (one log line, or one rename). A separate lease file would need a second lock held across each write;
 * `proper-lockfile` would give the same mtime-judged lock the store has already, and no fencing token.
 *
 *     {token, expiresAt, pid, host}   expiresAt 0: released. The record stays: tokens only grow.
 */
interface LeaseRecord {
  token: number
  expiresAt: number
  pid: number
  host: string
}

/** An operation on the file's entries under its lock; the key it changed, if it changed one. */
export type EntriesOperation = (entries: Map<string, JsonValue>) => string | undefined

function leaseOf(value: JsonValue | undefined): LeaseRecord | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const {token, expiresAt, pid, host} = value
  if (typeof token !== 'number' || typeof expiresAt !== 'number' || typeof pid !== 'number' || typeof host !== 'string')
    return undefined
  return {token, expiresAt, pid, host}
}

/** Held by a live owner: not expired, and not a process found dead on this host. */
function live(lease: LeaseRecord): boolean {
  return lease.expiresAt > Date.now() && !foundDead(lease.pid, lease.host)
}

/** Takes lease `name` for `ttlMs` unless a live owner holds it; `took` receives the token, only if taken. */
export function acquireLease(name: string, ttlMs: number, took: (token: number) => void): EntriesOperation {
  return (entries) => {
    const held = leaseOf(entries.get(name))
    if (held !== undefined && live(held)) return undefined
    const token = (held?.token ?? 0) + 1
    entries.set(name, {token, expiresAt: Date.now() + ttlMs, pid: process.pid, host: ownHost()})
    took(token)
    return name
  }
}

/** Extends lease `name` while `token` is still the latest; `kept` receives whether it was. */
export function renewLease(
  name: string,
  token: number,
  ttlMs: number,
  kept: (renewed: boolean) => void,
): EntriesOperation {
  return (entries) => {
    const held = leaseOf(entries.get(name))
    const ours = held?.token === token
    kept(ours)
    if (!ours) return undefined
    entries.set(name, {...held, expiresAt: Date.now() + ttlMs})
    return name
  }
}

export function releaseLease(name: string, token: number): EntriesOperation {
  return (entries) => {
    const held = leaseOf(entries.get(name))
    if (held?.token !== token || held.expiresAt === 0) return undefined
    entries.set(name, {...held, expiresAt: 0})
    return name
  }
}

/** True when a write fenced with `fence` may go: its token is still the latest of its lease. */
export function fenceHolds(entries: Map<string, JsonValue>, fence: Fence | undefined): boolean {
  return fence === undefined || leaseOf(entries.get(fence.lease))?.token === fence.token
}
