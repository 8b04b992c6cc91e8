/**
 * The page of test/security/browser-redirects.test.ts, bundled by Vite and run in headless Chromium: connects an
 * SDK Client over the transport to an endpoint of the page's origin and says how it ended.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {isTransportError, ResumableHTTPClientTransport} from '../../../src/index.ts'

export interface ConnectOutcome {
  connected: boolean
  code: string | undefined
  message: string | undefined
}

declare global {
  interface Window {
    /** Connects to `path` of this origin with an app credential header, then closes. */
    connectTo: (path: string) => Promise<ConnectOutcome>
  }
}

window.connectTo = async (path) => {
  const transport = new ResumableHTTPClientTransport(new URL(path, location.href), {
    requestInit: {headers: {'x-api-key': 'page-credential-5e6f'}},
  })
  const client = new Client({name: 'page', version: '1.0.0'})
  try {
    await client.connect(transport)
    await client.close()
    return {connected: true, code: undefined, message: undefined}
  } catch (error) {
    await client.close()
    return {
      connected: false,
      code: isTransportError(error) ? error.code : undefined,
      message: error instanceof Error ? error.message : String(error),
    }
  }
}
