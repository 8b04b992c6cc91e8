/**
 * `mcp-resumable-http/idb`: a store in IndexedDB, for browsers (pages, workers, extensions).
 * @packageDocumentation
 * @module mcp-resumable-http/idb
 */
export {IdbStore, type IdbStoreOptions} from './persistence/idb-store.ts'
