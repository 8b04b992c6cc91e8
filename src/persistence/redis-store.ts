/// <reference types="node" />
import {createHash} from 'node:crypto'
import {checkTtl, LeaseLostError, type Fence, type Lease} from './lease.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'
import type {ResumptionStore} from './store.ts'

/**
 * The one method of a Redis client the store uses: a node-redis client (`createClient()` of `redis`, connected)
 * has it as is. Replies as RESP2 gives them: strings, numbers, null and arrays of them; an error reply rejects.
 */
export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>
}

export interface RedisStoreOptions {
  /**
   * A connected client: `await createClient({url}).connect()` from `redis` (node-redis). The store never
   * connects nor quits it: the app owns its lifetime, and may share it.
   */
  client: RedisCommander
  /**
   * Put before every key the store writes, so that the records share a Redis database with other data safely.
   * @defaultValue `'mcp-resumption:'`
   */
  prefix?: string | undefined
  /**
   * How long a record lives after its last write: sessions abandoned for good go by themselves. Longer than a
   * server keeps an idle session is enough.
   * @defaultValue `86_400_000` (one day)
   */
  idleTtlMs?: number | undefined
}

// [Redis] Lua scripts run atomically: no command of another client runs between their reads and writes.
// A lease key holds its owner's token; `<lease>#token` holds the latest token given for that lease.
const acquireScript = `
if not redis.call('SET', KEYS[1], '0', 'NX', 'PX', ARGV[1]) then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token`
// Still the latest token (nobody took the lease since, even if it lapsed): set it again for a TTL from now.
const renewScript = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`
const releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`
// A write fenced with a lease: refused (0) once a later token was given for it.
const fencedSetScript = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`
const fencedDeleteScript = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`

/**
 * A {@link ResumptionStore} in Redis, for fleets: every worker that reaches the Redis server reaches the
 * sessions, so when the worker that owns a session dies, another adopts it once its lease expires. Exported
 * from `mcp-resumable-http/redis` (Node); `redis` is an optional peer dependency: `npm install redis`.
 *
 * - Keys are `prefix` + the transport's key; each expires `idleTtlMs` after its last write.
 * - Leases (`acquire`) are `SET NX PX` on the lease's key, renewed while their token is the latest given; writes
 *   fenced with a lease are checked against that token in the same Lua script that writes.
 * - `list` walks the keys with `SCAN MATCH` (never `KEYS`, which blocks the server).
 * - One Redis server (or a primary and its replicas); Redis Cluster is not supported: a fenced write's script
 *   reads a key that may live on another shard.
 *
 * @example
 * ```ts
 * import {createClient} from 'redis'
 * import {RedisStore} from 'mcp-resumable-http/redis'
 * const store = new RedisStore({client: await createClient({url: process.env.REDIS_URL}).connect()})
 * ```
 */
export class RedisStore implements ResumptionStore {
  readonly #client: RedisCommander
  readonly #prefix: string
  readonly #idleTtl: string
  /** The SHA-1 of each script the server has loaded: scripts go by digest (EVALSHA), not whole at each call. */
  readonly #loaded = new Set<string>()

  constructor(options: RedisStoreOptions) {
    const {
      client,
      prefix = 'mcp-resumption:',
      idleTtlMs = 86_400_000,
    } = (options as RedisStoreOptions | undefined) ?? ({} as Partial<RedisStoreOptions>)
    if (typeof client?.sendCommand !== 'function') {
      throw new TypeError(
        "RedisStore: options.client must be a connected Redis client (createClient() of 'redis', then connect())",
      )
    }
    if (typeof prefix !== 'string') throw new TypeError('RedisStore: options.prefix must be a string')
    try {
      checkTtl(idleTtlMs)
    } catch {
      throw new TypeError(
        `RedisStore: options.idleTtlMs must be a positive integer of milliseconds, got ${String(idleTtlMs)}`,
      )
    }
    this.#client = client
    this.#prefix = prefix
    this.#idleTtl = String(idleTtlMs)
  }

  async get(key: string): Promise<JsonValue | undefined> {
    const text = await this.#client.sendCommand(['GET', this.#key(key)])
    if (text === null) return undefined
    if (typeof text !== 'string')
      throw new TypeError(`RedisStore: GET ${key} did not answer a string: use a client without type mapping`)
    return JSON.parse(text) as JsonValue
  }

  async set(key: string, value: JsonValue, fence?: Fence): Promise<void> {
    const text = JSON.stringify(value) as string | undefined
    if (text === undefined) throw new TypeError(`RedisStore: the value of ${key} is not JSON`)
    if (fence === undefined) {
      await this.#client.sendCommand(['SET', this.#key(key), text, 'PX', this.#idleTtl])
      return
    }
    await this.#fenced(fencedSetScript, fence, key, [text, this.#idleTtl])
  }

  async delete(key: string, fence?: Fence): Promise<void> {
    if (fence === undefined) await this.#client.sendCommand(['DEL', this.#key(key)])
    // Stryker disable next-line ArrayDeclaration: the delete script reads ARGV[1] only
    else await this.#fenced(fencedDeleteScript, fence, key, [])
  }

  async list(prefix: string): Promise<string[]> {
    const match = `${escapeGlob(this.#key(prefix))}*`
    const keys = new Set<string>()
    let cursor = '0'
    do {
      const [next, batch] = (await this.#client.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', '500'])) as [
        string,
        string[],
      ]
      cursor = next
      // SCAN may return a key twice: a set keeps one.
      for (const key of batch) keys.add(key.slice(this.#prefix.length))
    } while (cursor !== '0')
    return [...keys]
  }

  async acquire(name: string, ttlMs: number): Promise<Lease | undefined> {
    checkTtl(ttlMs)
    const keys = [this.#key(name), this.#key(`${name}#token`)]
    const token = Number(await this.#eval(acquireScript, keys, [String(ttlMs), this.#idleTtl]))
    if (token === 0) return undefined
    return {
      token,
      renew: async () => Number(await this.#eval(renewScript, keys, [String(token), String(ttlMs)])) === 1,
      release: async () => {
        await this.#eval(releaseScript, keys, [String(token)])
      },
    }
  }

  async #fenced(script: string, fence: Fence, key: string, args: string[]): Promise<void> {
    const written = await this.#eval(
      script,
      [this.#key(key), this.#key(`${fence.lease}#token`)],
      [String(fence.token), ...args],
    )
    if (Number(written) !== 1) throw new LeaseLostError(fence)
  }

  /** Runs `script` by its digest, loading it first when the server does not have it (new, restarted, flushed). */
  async #eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    const sha = createHash('sha1').update(script).digest('hex')
    const command = ['EVALSHA', sha, String(keys.length), ...keys, ...args]
    if (this.#loaded.has(sha)) {
      try {
        return await this.#client.sendCommand(command)
      } catch (error) {
        if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw error
      }
    }
    await this.#client.sendCommand(['SCRIPT', 'LOAD', script])
    this.#loaded.add(sha)
    return this.#client.sendCommand(command)
  }

  #key(key: string): string {
    if (typeof key !== 'string') throw new TypeError('RedisStore: a key must be a string')
    return this.#prefix + key
  }
}

/** `text` matched literally by a `SCAN MATCH` pattern: its glob characters escaped. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}
