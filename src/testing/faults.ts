/**
 * Faults, armed at run time: one-shot ones taken by the next matching request or connection, and actions
 * that hit the server at once.
 */
import type {ByteCut, Cut} from './connection.ts'

/** The HTTP methods of MCP Streamable HTTP, as a fault names them. */
export type HttpMethod = 'GET' | 'POST' | 'DELETE'

/** Answers the next matching request with `status` and a JSON-RPC error, before anything else happens. */
export interface StatusFault {
  /** The HTTP method of the request that takes the fault. */
  method: HttpMethod
  /** The status to answer, e.g. 404 (an expired session, as the client sees it) or 409 (a stream already connected). */
  status: number
  /** Only a POST of this JSON-RPC method takes the fault. @defaultValue any */
  rpcMethod?: string | undefined
}

/** Holds the next matching request for `ms` before serving it. */
export interface DelayFault {
  /** How long the request waits, in milliseconds. */
  ms: number
  /** Only a request of this HTTP method. @defaultValue any */
  method?: HttpMethod | undefined
  /** Only a POST of this JSON-RPC method. @defaultValue any */
  rpcMethod?: string | undefined
}

/**
 * Corrupts the answer to the next `tools/call`: `sse` replaces it with a body that is no SSE at all (a proxy's
 * error page under `text/event-stream`; the tool does not run), `json` puts an event whose data is not JSON
 * before the real events (the tool runs).
 */
export interface CorruptFault {
  kind: 'sse' | 'json'
}

export interface ExpireOptions {
  /**
   * End the session's live connections. False leaves them open until they end by themselves (a server that
   * forgets a session without closing its sockets).
   * @defaultValue true
   */
  closeConnections?: boolean | undefined
}

export interface DisconnectOptions {
  /** `error`: a network drop; `close`: the server ends the response, as a server that polls. @defaultValue 'error' */
  how?: 'close' | 'error' | undefined
  /** Only this stream's connection (`p<n>` or `g<n>`). @defaultValue every live connection */
  stream?: string | undefined
}

/** The faults that act on the wire alone: they work in front of any MCP server ({@link createFaultProxy}). */
export interface TransportFaults {
  /**
   * Cuts the next SSE connection (of `cut.on`, if given) after `cut.after` events or `cut.afterBytes` bytes: a
   * drop, or a close with `retry`.
   */
  cutNext(cut: Cut | ByteCut): void
  /** Answers the next matching request with an HTTP error: 404 on the next POST, 409 on the next GET, ... */
  failNext(fault: StatusFault): void
  /** Delays the next matching request. */
  delayNext(fault: DelayFault): void
  /** Malformed SSE, or an event whose data is not JSON, in the answer to the next `tools/call`. */
  corruptNext(fault: CorruptFault): void
  /** Ends every live SSE connection now (`how` as in {@link DisconnectOptions}). */
  disconnect(options?: Pick<DisconnectOptions, 'how'>): void
  /** Disarms every one-shot fault. */
  clear(): void
  /** The one-shot faults still armed, in the order they will be taken. */
  readonly armed: {
    cuts: readonly (Cut | ByteCut)[]
    failures: readonly StatusFault[]
    delays: readonly DelayFault[]
    corruptions: readonly CorruptFault[]
  }
}

/** The reference server's faults: those on the wire, and those that reach into its sessions and streams. */
export interface Faults extends TransportFaults {
  /** Ends live connections now: every one, or one stream's. */
  disconnect(options?: DisconnectOptions): void
  /**
   * Forgets session `sessionId` (by default the only one), as a server that garbage-collects it: every later
   * request naming it gets 404.
   */
  expireSession(sessionId?: string, options?: ExpireOptions): void
  /**
   * Forgets every stream of session `sessionId` (by default the only one), buffers and connections, while the
   * session lives on: a later `Last-Event-ID` of them is refused, and a plain GET still gets the pending requests.
   */
  expireStreams(sessionId?: string): void
  /** Loses all state, as a restarted process: sessions, streams, pending requests. Instrumentation is kept. */
  restart(): void
}

/** What the server asks of the armed faults; each `take` disarms what it returns. */
export interface FaultTaker {
  cut(method: 'GET' | 'POST'): Cut | ByteCut | undefined
  failure(method: string, rpcMethod: string | undefined): StatusFault | undefined
  delay(method: string, rpcMethod: string | undefined): DelayFault | undefined
  corruption(): CorruptFault | undefined
}

type OneShots = Omit<TransportFaults, 'disconnect'>

/**
 * The one-shot faults, with `actions` (what acts on the server at once, `disconnect` among them) beside them.
 */
export function createFaults<Actions extends Pick<TransportFaults, 'disconnect'>>(
  actions: Actions,
): {faults: OneShots & Actions; take: FaultTaker} {
  const cuts: (Cut | ByteCut)[] = []
  const failures: StatusFault[] = []
  const delays: DelayFault[] = []
  const corruptions: CorruptFault[] = []
  const takeFirst = <T>(list: T[], matches: (item: T) => boolean): T | undefined => {
    const index = list.findIndex(matches)
    return index === -1 ? undefined : list.splice(index, 1)[0]
  }
  const matchesRpc = (wanted: string | undefined, rpcMethod: string | undefined): boolean =>
    wanted === undefined || wanted === rpcMethod
  const faults: OneShots & Actions = {
    ...actions,
    cutNext: (cut) => {
      const count = 'afterBytes' in cut ? cut.afterBytes : cut.after
      if (!(count >= 1))
        throw new TypeError(`${'afterBytes' in cut ? 'cut.afterBytes' : 'cut.after'} must be 1 or more`)
      cuts.push({...cut})
    },
    failNext: (fault) => failures.push({...fault}),
    delayNext: (fault) => delays.push({...fault}),
    corruptNext: (fault) => corruptions.push({...fault}),
    clear: () => {
      for (const list of [cuts, failures, delays, corruptions]) list.length = 0
    },
    get armed() {
      return {cuts: [...cuts], failures: [...failures], delays: [...delays], corruptions: [...corruptions]}
    },
  }
  const take: FaultTaker = {
    cut: (method) => takeFirst(cuts, (cut) => cut.on === undefined || cut.on === method),
    failure: (method, rpcMethod) =>
      takeFirst(failures, (fault) => fault.method === method && matchesRpc(fault.rpcMethod, rpcMethod)),
    delay: (method, rpcMethod) =>
      takeFirst(
        delays,
        (fault) => (fault.method === undefined || fault.method === method) && matchesRpc(fault.rpcMethod, rpcMethod),
      ),
    corruption: () => corruptions.shift(),
  }
  return {faults, take}
}
