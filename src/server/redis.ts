/**
 * `mcp-resumable-http/server/redis`: a {@link RedisEventLog} for `ResumableEventStore` (`mcp-resumable-http/server`),
 * so that a server restarted (or another process of it) still replays a session's streams. Needs a Redis client: the
 * optional peer dependency `redis` (node-redis), `npm install redis`. No Node built-in.
 * @packageDocumentation
 */
import {eventOverhead, newNonce, type Appended, type EventBounds, type EventLog, type Lookup} from './event-log.ts'

/**
 * The one method of a Redis client the log uses: a node-redis client (`createClient()` of `redis`, connected)
 * has it as is. Replies as RESP2 gives them: strings, numbers, null and arrays of them; an error reply rejects.
 */
export interface RedisCommands {
  sendCommand(args: string[]): Promise<unknown>
}

export interface RedisEventLogOptions {
  /** A connected client; the log never connects nor quits it: the app owns its lifetime, and may share it. */
  client: RedisCommands
  /**
   * What names this log's events in Redis: the same key in a restarted process finds them again. The session ID
   * is the natural one (make it before the transport: `sessionIdGenerator: () => sessionId`); it stays in Redis,
   * never in an event ID.
   */
  key: string
  /**
   * Put before every key the log writes, so that it shares a Redis database with other data safely.
   * @defaultValue `'mcp-events:'`
   */
  prefix?: string | undefined
}

// [Redis] A Lua script runs atomically: no command of another client runs between its reads and its writes.
// Keys, from `base` = prefix + key: `base` a hash (field `nonce`, `streams` the last stream number, `bytes` the
// weight held, `id:<streamId>` its number, `name:<n>` and `last:<n>` a stream's ID and last event number),
// `base:order` the held events oldest first (`<n>:<seq>:<at>:<weight>`), `base:s:<n>` a stream's held events
// (`<seq>:<at>:<data>`). Each expires `maxAgeMs` after the last append: by then every event in it is too old.
const evict = `
local function evict(base, now, maxBytes, maxAge)
  local evicted = 0
  while true do
    local head = redis.call('LINDEX', base .. ':order', 0)
    if not head then break end
    local number, at, weight = string.match(head, '^(%d+):%d+:(%d+):(%d+)$')
    local bytes = tonumber(redis.call('HGET', base, 'bytes') or '0')
    if bytes <= maxBytes and now - tonumber(at) <= maxAge then break end
    redis.call('LPOP', base .. ':order')
    redis.call('HINCRBY', base, 'bytes', -tonumber(weight))
    evicted = evicted + 1
    local list = base .. ':s:' .. number
    redis.call('LPOP', list)
    if redis.call('LLEN', list) == 0 then
      local streamId = redis.call('HGET', base, 'name:' .. number)
      redis.call('HDEL', base, 'name:' .. number, 'last:' .. number)
      if streamId then redis.call('HDEL', base, 'id:' .. streamId) end
    end
  end
  return evicted
end
`
// ARGV: base, streamId, data, now, maxBytes, maxAgeMs, a nonce to take if the log has none. Returns
// {nonce, stream, seq, evicted}.
const appendScript = `${evict}
local base, streamId, data, now, maxBytes, maxAge = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('HSETNX', base, 'nonce', ARGV[7])
local number = redis.call('HGET', base, 'id:' .. streamId)
if not number then
  number = tostring(redis.call('HINCRBY', base, 'streams', 1))
  redis.call('HSET', base, 'id:' .. streamId, number, 'name:' .. number, streamId)
end
local seq = redis.call('HINCRBY', base, 'last:' .. number, 1)
local weight = string.len(data) + ${eventOverhead}
local list = base .. ':s:' .. number
redis.call('RPUSH', list, seq .. ':' .. ARGV[4] .. ':' .. data)
redis.call('RPUSH', base .. ':order', number .. ':' .. seq .. ':' .. ARGV[4] .. ':' .. weight)
redis.call('HINCRBY', base, 'bytes', weight)
local evicted = evict(base, now, maxBytes, maxAge)
for _, key in ipairs({base, base .. ':order', list}) do redis.call('PEXPIRE', key, ARGV[6]) end
return {redis.call('HGET', base, 'nonce'), tonumber(number), seq, evicted}`
// ARGV: base, stream number, seq, now, maxBytes, maxAgeMs, 1 for the events. Returns {nonce or false, evicted,
// streamId or false, the entries after seq...}.
const afterScript = `${evict}
local base, number, seq = ARGV[1], ARGV[2], tonumber(ARGV[3])
local evicted = evict(base, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
local nonce = redis.call('HGET', base, 'nonce')
local streamId = redis.call('HGET', base, 'name:' .. number)
if not streamId then return {nonce, evicted, false} end
local list = base .. ':s:' .. number
local oldest = redis.call('LINDEX', list, 0)
-- Expired by its TTL (Redis's clock) before the sweep saw its events as old (the app's clock).
if not oldest then return {nonce, evicted, false} end
local first = tonumber(string.match(oldest, '^(%d+):'))
local last = tonumber(redis.call('HGET', base, 'last:' .. number))
if seq < first - 1 or seq > last then return {nonce, evicted, false} end
local reply = {nonce, evicted, streamId}
if ARGV[7] == '1' then
  for _, entry in ipairs(redis.call('LRANGE', list, seq - first + 1, -1)) do table.insert(reply, entry) end
end
return reply`

/**
 * An {@link EventLog} in Redis: one store's events under `prefix` + `key`, kept across process restarts (and
 * shared by every process that names the same key). Appends and look-ups are Lua scripts, atomic; every key
 * expires `maxAgeMs` after the last append. One Redis server (or a primary and its replicas); Redis Cluster is
 * not supported (a script reaches keys it computes).
 *
 * @example
 * ```ts
 * import {createClient} from 'redis'
 * import {ResumableEventStore} from 'mcp-resumable-http/server'
 * import {RedisEventLog} from 'mcp-resumable-http/server/redis'
 * const client = await createClient({url: process.env.REDIS_URL}).connect()
 * const sessionId = crypto.randomUUID()
 * const eventStore = new ResumableEventStore({log: new RedisEventLog({client, key: sessionId})})
 * ```
 */
export class RedisEventLog implements EventLog {
  readonly #client: RedisCommands
  readonly #base: string
  /** Each script's digest, as `SCRIPT LOAD` gave it: scripts go by digest (EVALSHA), whole only when Redis lacks them. */
  readonly #loaded = new Map<string, string>()

  constructor(options: RedisEventLogOptions) {
    const {
      client,
      key,
      prefix = 'mcp-events:',
    } = (options as RedisEventLogOptions | undefined) ?? ({} as Partial<RedisEventLogOptions>)
    if (typeof client?.sendCommand !== 'function') {
      throw new TypeError(
        "RedisEventLog: options.client must be a connected Redis client (createClient() of 'redis', then connect())",
      )
    }
    if (typeof key !== 'string' || key === '')
      throw new TypeError('RedisEventLog: options.key must be a non-empty string (the session ID, say)')
    if (typeof prefix !== 'string') throw new TypeError('RedisEventLog: options.prefix must be a string')
    this.#client = client
    this.#base = prefix + key
  }

  async append(streamId: string, data: string, now: number, bounds: EventBounds): Promise<Appended> {
    const reply = await this.#eval(appendScript, [
      this.#base,
      streamId,
      data,
      String(now),
      String(bounds.maxBytes),
      String(bounds.maxAgeMs),
      newNonce(),
    ])
    const [nonce, stream, seq, evicted] = reply as [string, number, number, number]
    return {nonce, stream, seq, evicted}
  }

  async after(stream: number, seq: number, now: number, bounds: EventBounds, withEvents: boolean): Promise<Lookup> {
    const args = [
      this.#base,
      String(stream),
      String(seq),
      String(now),
      String(bounds.maxBytes),
      String(bounds.maxAgeMs),
      withEvents ? '1' : '0',
    ]
    const [nonce, evicted, streamId, ...entries] = (await this.#eval(afterScript, args)) as [
      string | null,
      number,
      string | null,
      ...string[],
    ]
    if (streamId === null) return {nonce: nonce ?? undefined, held: undefined, evicted}
    const events = entries.map((entry) => {
      const [number = '', , ...data] = entry.split(':')
      return {seq: Number(number), data: data.join(':')}
    })
    return {nonce: nonce ?? undefined, held: {streamId, events}, evicted}
  }

  async clear(): Promise<void> {
    let cursor = '0'
    do {
      const [next, keys] = (await this.#client.sendCommand([
        'SCAN',
        cursor,
        'MATCH',
        `${escapeGlob(this.#base)}:*`,
        'COUNT',
        '500',
      ])) as [string, string[]]
      cursor = next
      if (keys.length > 0) await this.#client.sendCommand(['DEL', ...keys])
    } while (cursor !== '0')
    await this.#client.sendCommand(['DEL', this.#base])
  }

  /** Runs `script` by its digest, loading it first when the server does not have it (new, restarted, flushed). */
  async #eval(script: string, args: string[]): Promise<unknown> {
    const known = this.#loaded.get(script)
    if (known !== undefined) {
      try {
        return await this.#client.sendCommand(['EVALSHA', known, '0', ...args])
      } catch (error) {
        if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw error
      }
    }
    const digest = String(await this.#client.sendCommand(['SCRIPT', 'LOAD', script]))
    this.#loaded.set(script, digest)
    return this.#client.sendCommand(['EVALSHA', digest, '0', ...args])
  }
}

/** `text` matched literally by a `SCAN MATCH` pattern: its glob characters escaped. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}
