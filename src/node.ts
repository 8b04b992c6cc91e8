/**
 * `mcp-resumable-http/node`: what needs Node built-ins, kept out of the core so that it runs in browsers.
 * @packageDocumentation
 * @module mcp-resumable-http/node
 */
export {FileStore, type FileStoreOptions} from './persistence/file-store.ts'
