import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'

/**
 * What a restart must not lose, by the key of a server request's ID: each server request delivered and not yet
 * answered, replaced by the Client's answer once given, and that answer marked taken once the server confirmed it
 * (so that a next process knows a replayed copy); with the key of the stream that brought the request (none in a
 * record of an earlier version). Bounded by count and by the characters of their JSON: past either, the oldest
 * taken answers go first, then the oldest of the rest (`dropped` hears each, with the weight that dropped it when the
 * count did not).
 */
export class KeptRequests {
  readonly #max: number
  readonly #maxChars: number
  readonly #dropped: (key: string, message: JSONRPCMessage, overweight: number | undefined) => void
  /** The requests and the answers the server has not confirmed yet, oldest first. */
  readonly #open = new Map<string, Kept>()
  /** The answers the server took, oldest first: what goes first past the bounds. */
  readonly #taken = new Map<string, Kept>()
  #chars = 0

  constructor(
    max: number,
    maxChars: number,
    dropped: (key: string, message: JSONRPCMessage, overweight: number | undefined) => void,
  ) {
    this.#max = max
    this.#maxChars = maxChars
    this.#dropped = dropped
  }

  has(key: string): boolean {
    return this.#open.has(key) || this.#taken.has(key)
  }

  /** The key of the stream that brought the request kept under `key`. */
  streamOf(key: string): string | undefined {
    return (this.#open.get(key) ?? this.#taken.get(key))?.stream
  }

  /**
   * Keeps `message` (`chars` long as JSON) under `key`, `taken` when it is an answer the server confirmed, replacing
   * what was kept there; the oldest go past the bounds.
   */
  keep(key: string, message: JSONRPCMessage, chars: number, stream: string | undefined, taken = false): void {
    this.delete(key)
    ;(taken ? this.#taken : this.#open).set(key, {message, chars, stream})
    this.#chars += chars
    for (;;) {
      const size = this.#open.size + this.#taken.size
      if (size <= this.#max && (this.#chars <= this.#maxChars || size <= 1)) break
      const [oldest, {message: dropped}] = (this.#taken.size > 0 ? this.#taken : this.#open).entries().next().value!
      const overweight = size <= this.#max ? this.#chars : undefined
      this.delete(oldest)
      this.#dropped(oldest, dropped, overweight)
    }
  }

  /** True when `key` was kept. */
  delete(key: string): boolean {
    const kept = this.#open.get(key) ?? this.#taken.get(key)
    if (kept === undefined) return false
    this.#open.delete(key)
    this.#taken.delete(key)
    this.#chars -= kept.chars
    return true
  }

  clear(): void {
    this.#open.clear()
    this.#taken.clear()
    this.#chars = 0
  }
}

interface Kept {
  message: JSONRPCMessage
  chars: number
  stream: string | undefined
}
