import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'

/**
 * What a restart must not lose, by the key of a server request's ID: each server request delivered and not yet
 * answered, replaced by the Client's answer once given, until the server took it; with the key of the stream that
 * brought the request (none in a record of an earlier version). Bounded by count and by the characters of their
 * JSON: past either, the oldest go (`dropped` hears each, with the weight that dropped it when the count did not).
 */
export class KeptRequests {
  readonly #max: number
  readonly #maxChars: number
  readonly #dropped: (key: string, message: JSONRPCMessage, overweight: number | undefined) => void
  readonly #kept = new Map<string, {message: JSONRPCMessage; chars: number; stream: string | undefined}>()
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
    return this.#kept.has(key)
  }

  /** The key of the stream that brought the request kept under `key`. */
  streamOf(key: string): string | undefined {
    return this.#kept.get(key)?.stream
  }

  /** Keeps `message` (`chars` long as JSON) under `key`, replacing what was kept there; the oldest go past the bounds. */
  keep(key: string, message: JSONRPCMessage, chars: number, stream: string | undefined): void {
    this.delete(key)
    this.#kept.set(key, {message, chars, stream})
    this.#chars += chars
    while (this.#kept.size > this.#max || (this.#chars > this.#maxChars && this.#kept.size > 1)) {
      const [oldest, {message: dropped}] = this.#kept.entries().next().value!
      const overweight = this.#kept.size <= this.#max ? this.#chars : undefined
      this.delete(oldest)
      this.#dropped(oldest, dropped, overweight)
    }
  }

  /** True when `key` was kept. */
  delete(key: string): boolean {
    const kept = this.#kept.get(key)
    if (kept === undefined) return false
    this.#kept.delete(key)
    this.#chars -= kept.chars
    return true
  }

  clear(): void {
    this.#kept.clear()
    this.#chars = 0
  }
}
