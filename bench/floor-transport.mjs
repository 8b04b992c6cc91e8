// The least a Streamable HTTP client transport must do to deliver the sweep's calls, as a floor to compare with:
// each message POSTed, the answer read (JSON, or SSE through eventsource-parser), each message parsed and handed
// to the Client. No resumption, persistence, de-duplication, ordering guarantees, limits or standalone stream.
// It is the bench's yardstick, not a transport to use.
import {createParser} from 'eventsource-parser'

const accept = 'application/json, text/event-stream'

export class FloorTransport {
  #url
  #sessionId
  #protocolVersion
  #closing = new AbortController()

  /** @param {URL} url */
  constructor(url) {
    this.#url = url
  }

  async start() {}

  setProtocolVersion(version) {
    this.#protocolVersion = version
  }

  async send(message) {
    const headers = {accept, 'content-type': 'application/json'}
    if (this.#sessionId !== undefined) headers['mcp-session-id'] = this.#sessionId
    if (this.#protocolVersion !== undefined) headers['mcp-protocol-version'] = this.#protocolVersion
    const response = await fetch(this.#url, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      signal: this.#closing.signal,
    })
    this.#sessionId = response.headers.get('mcp-session-id') ?? this.#sessionId
    if (!response.ok) throw new Error(`floor transport: HTTP ${response.status}`)
    if (response.status === 202 || response.body === null) return
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) void this.#read(response.body)
    else this.onmessage?.(await response.json())
  }

  async #read(body) {
    let messages = []
    const parser = createParser({onEvent: ({data}) => data !== '' && messages.push(JSON.parse(data))})
    const decoder = new TextDecoder()
    try {
      for await (const chunk of body) {
        parser.feed(decoder.decode(chunk, {stream: true}))
        const arrived = messages
        messages = []
        for (const [index, message] of arrived.entries()) {
          // The SDK Client handles a notification a turn after it gets it, a response at once: without this turn,
          // a response that follows a progress notification would overtake it.
          if (index > 0 && message.method === undefined) await Promise.resolve()
          this.onmessage?.(message)
        }
      }
    } catch (error) {
      if (!this.#closing.signal.aborted) this.onerror?.(error)
    }
  }

  async close() {
    this.#closing.abort()
    this.onclose?.()
  }
}
