// moduleResolution node10 (no `exports`): every entry point's types are found through `typesVersions`.
import type {ResumableHTTPClientTransportOptions} from 'mcp-resumable-http'
import type {DurableObjectStorageLike} from 'mcp-resumable-http/cloudflare'
import type {IdbStoreOptions} from 'mcp-resumable-http/idb'
import type {CallJournalModule} from 'mcp-resumable-http/journal'
import type {FileStoreOptions} from 'mcp-resumable-http/node'
import type {ResumableEventStoreOptions} from 'mcp-resumable-http/server'
import type {RedisEventLogOptions} from 'mcp-resumable-http/server/redis'
import type {MockMcpServerOptions} from 'mcp-resumable-http/testing'
import type {ListenOptions} from 'mcp-resumable-http/testing/node'

export type Options = [
  ResumableHTTPClientTransportOptions,
  DurableObjectStorageLike,
  IdbStoreOptions,
  CallJournalModule,
  FileStoreOptions,
  ResumableEventStoreOptions,
  RedisEventLogOptions,
  MockMcpServerOptions,
  ListenOptions,
]
