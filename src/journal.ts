/**
 * `mcp-resumable-http/journal`: what the call journal (`callJournal`, `transport.calls`) gives the app beyond the
 * transport: the digest its records hold of a call's arguments, and the journal itself, for a transport that
 * cannot load it on first use (a service worker may not `import()`). An app without the journal never loads it.
 * @packageDocumentation
 */
export {callJournal} from './calls/call-journal.ts'
export type {CallJournalModule} from './options.ts'
export {digestArguments} from './calls/call.ts'
