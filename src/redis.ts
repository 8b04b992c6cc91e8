/**
 * `mcp-resumable-http/redis`: a store in Redis, for fleets of workers (Node). Needs the optional peer dependency
 * `redis` (node-redis) for its client: `npm install redis`.
 * @packageDocumentation
 * @module mcp-resumable-http/redis
 */
export {RedisStore, type RedisCommander, type RedisStoreOptions} from './persistence/redis-store.ts'
