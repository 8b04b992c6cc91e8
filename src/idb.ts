/**
 * `mcp-resumable-http/idb`: a store in IndexedDB, for browsers (pages, workers, extensions).
 * @packageDocumentation
 */
export {IdbStore, type IdbStoreOptions} from './persistence/idb-store.ts'
