// Checked by Deno's type checker (`deno check`) against the installed package: the types of every entry point a
// Deno app uses, as it uses them. The SDK stays out: Deno does not resolve its subpath exports (TS2307).
import {
  isTransportError,
  MemoryStore,
  ResumableHTTPClientTransport,
  type ResumptionStore,
  type TransportEvent,
} from 'mcp-resumable-http'
import {DurableObjectStore, type DurableObjectStorageLike} from 'mcp-resumable-http/cloudflare'
import {FileStore, type FileStoreOptions} from 'mcp-resumable-http/node'
import {createReferenceServer, listen, type ListenOptions} from 'mcp-resumable-http/testing/node'

const options: FileStoreOptions = {staleLockMs: 5_000}
const stores: ResumptionStore[] = [new MemoryStore(), new FileStore('.mcp-session.json', options)]
const storage: DurableObjectStorageLike = {
  get: () => Promise.resolve(undefined),
  put: () => Promise.resolve(),
  delete: () => Promise.resolve(false),
  list: () => Promise.resolve(new Map()),
}
stores.push(new DurableObjectStore(storage))
const where: ListenOptions = {host: '127.0.0.1'}
const listening = await listen(createReferenceServer(), where)
const transport = new ResumableHTTPClientTransport(new URL(listening.url), {
  store: stores[0]!,
  onEvent: (event: TransportEvent) => {
    if (event.type === 'store-error' && isTransportError(event.error)) console.log(event.error.code)
  },
})
export const sessionId: string | undefined = transport.sessionId
