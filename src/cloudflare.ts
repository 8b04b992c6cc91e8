/**
 * `mcp-resumable-http/cloudflare`: a store in a Durable Object's storage, for Workers (no `nodejs_compat`).
 * @packageDocumentation
 */
export {DurableObjectStore, type DurableObjectStorageLike} from './persistence/durable-object-store.ts'
