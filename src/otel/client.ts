import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {
  ResumableHTTPClientTransport,
  type ResumableHTTPClientTransportOptions,
  type SendOptions,
  type TransportEvent,
} from '../index.ts'
import {ClientTelemetry} from './client-telemetry.ts'
import type {ClientTelemetryOptions} from './options.ts'

export interface InstrumentedHTTPClientTransportOptions extends ResumableHTTPClientTransportOptions {
  /** Where the spans and metrics go, and how session IDs are recorded: see {@link ClientTelemetryOptions}. */
  telemetry?: ClientTelemetryOptions | undefined
}

/**
 * {@link ResumableHTTPClientTransport} with OpenTelemetry traces and metrics
 * ([telemetry](https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/docs/telemetry.md)): a span per
 * request by the MCP semantic conventions, from its POST to its answer across every reconnect of its stream, with a
 * span event for each; a span for the standalone stream; the conventions' histograms and this package's counters.
 * Trace context goes in each request's `params._meta`, unless the Client put one there. It reaches the transport
 * through its public API only: `send`, `onmessage`, `onEvent` (the app's runs too) and `fetch` (the app's too).
 */
export class InstrumentedHTTPClientTransport extends ResumableHTTPClientTransport {
  readonly #telemetry: ClientTelemetry

  constructor(url: URL, options?: InstrumentedHTTPClientTransportOptions) {
    // What a JavaScript caller may pass, whatever the types say.
    const given: unknown = options
    const plain = typeof given === 'object' && given !== null
    const {telemetry: telemetryOptions, ...rest} = plain ? (given as InstrumentedHTTPClientTransportOptions) : {}
    const telemetry = new ClientTelemetry(url, telemetryOptions)
    const {onEvent, fetch} = rest
    // Values the transport refuses go to it as they are, for its TypeError to name them.
    super(
      url,
      plain
        ? {
            ...rest,
            fetch: fetch === undefined || typeof fetch === 'function' ? telemetry.fetch(fetch) : fetch,
            onEvent:
              onEvent === undefined || typeof onEvent === 'function'
                ? (event: TransportEvent) => {
                    try {
                      telemetry.event(event)
                    } finally {
                      onEvent?.(event)
                    }
                  }
                : onEvent,
          }
        : options,
    )
    telemetry.attach({
      sessionId: () => this.sessionId,
      protocolVersion: () => this.protocolVersion,
      metrics: () => this.metrics,
    })
    this.#telemetry = telemetry
  }

  override get onmessage(): Transport['onmessage'] {
    return super.onmessage
  }

  /** Each callback as assigned, after the telemetry has seen the message (a Client's own wrapper included). */
  override set onmessage(callback: Transport['onmessage']) {
    super.onmessage =
      callback === undefined
        ? undefined
        : (message, extra) => {
            try {
              this.#telemetry.received(message)
            } finally {
              callback(message, extra)
            }
          }
  }

  override async start(): Promise<void> {
    await super.start()
    this.#telemetry.started()
  }

  override send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    return this.#telemetry.send(message, options?.requestSignal, (sent) => super.send(sent, options))
  }

  override async close(): Promise<void> {
    await super.close()
    this.#telemetry.closed()
  }
}
