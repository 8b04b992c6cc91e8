import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {asError, TransportError} from '../errors.ts'

type Name = 'onclose' | 'onerror' | 'onmessage'
type Slots = {[K in Name]: Transport[K] | undefined}

/**
 * The three callbacks of the SDK `Transport`, kept across `close()` as the app set them. A Client's `connect` wraps
 * whatever callbacks it finds and calls `start()` in the same turn: those wrappers are dropped at `close()`, so a
 * Client connected again receives each message once, while a callback the app set itself stays, as it does on the
 * SDK's own transport. It also calls them: the last step of every delivery, and background reports.
 */
export abstract class TransportCallbacks {
  #current: Slots = {onclose: undefined, onerror: undefined, onmessage: undefined}
  /** Each callback as it was before its latest assignment, and whether that assignment was in this turn. */
  #previous: Slots = {onclose: undefined, onerror: undefined, onmessage: undefined}
  #assignedThisTurn = new Set<Name>()
  /** What `close()` restores: the callbacks as they were before a Client wrapped them. */
  #beforeClient: Slots | undefined
  #storeFailed = false

  get onclose(): Transport['onclose'] {
    return this.#current.onclose
  }

  set onclose(callback: Transport['onclose']) {
    this.#assign('onclose', callback)
  }

  get onerror(): Transport['onerror'] {
    return this.#current.onerror
  }

  set onerror(callback: Transport['onerror']) {
    this.#assign('onerror', callback)
  }

  get onmessage(): Transport['onmessage'] {
    return this.#current.onmessage
  }

  set onmessage(callback: Transport['onmessage']) {
    this.#assign('onmessage', callback)
  }

  /** Calls `onmessage` with `message`; a handler that throws is reported, never thrown into the transport. */
  protected callOnmessage(message: JSONRPCMessage): void {
    try {
      this.onmessage?.(message)
    } catch (error) {
      this.report(error)
    }
  }

  /** Reports a background failure through `onerror`. */
  protected report(error: unknown): void {
    this.onerror?.(asError(error))
  }

  /** Says through `onerror` that the store failed, the first time only: every failure is an event besides. */
  protected reportStoreFailure(error: unknown): void {
    if (this.#storeFailed) return
    this.#storeFailed = true
    this.report(
      new TransportError('store', `The store failed: ${asError(error).message}; going on without it`, {cause: error}),
    )
  }

  /** `start()` is called: callbacks assigned in this same turn are a Client's wrappers. */
  protected clientConnecting(): void {
    const restored = {...this.#current}
    for (const name of this.#assignedThisTurn) restored[name] = this.#previous[name] as never
    this.#beforeClient = restored
  }

  /** `close()` is done: the Client's wrappers go; the app's own callbacks stay. */
  protected clientDisconnected(): void {
    this.#current = this.#beforeClient ?? this.#current
    this.#beforeClient = undefined
  }

  #assign<K extends Name>(name: K, callback: Slots[K]): void {
    this.#previous[name] = this.#current[name]
    this.#current[name] = callback
    if (this.#assignedThisTurn.size === 0) queueMicrotask(() => this.#assignedThisTurn.clear())
    this.#assignedThisTurn.add(name)
  }
}
