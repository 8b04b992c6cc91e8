import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {TransportError} from '../errors.ts'
import {excerpt, type JsonRpcId} from '../wire/jsonrpc.ts'
import {isSessionId, sessionIdRule} from '../policy/limits.ts'
import type {OwnedStore} from '../persistence/ownership.ts'
import type {SessionRecord, SessionRecords} from '../persistence/records.ts'
import type {JsonValue} from '../wire/jsonrpc.ts'

/** Request IDs reserved per store write: a new process starts past the reservation, never reusing one. */
const wireIdBlock = 100
/** The first revision without sessions, GET streams or event IDs. */
const statelessRevision = '2026-07-28'

/**
 * The session as this transport holds it: its identity across streams and processes, the protocol version and
 * era, the server's answer to `initialize`, and the request IDs it has used on the wire (docs/design.md#session).
 * Streams, requests and their ending are the transport's business; this holds the identity and its record.
 */
export class Session {
  readonly #records: SessionRecords
  #id: string | undefined
  #protocolVersion: string | undefined
  #initializeResult: JsonValue | undefined
  #stateless = false
  /** The next request ID on the wire, and how far the store has reserved them (see {@link wireIdBlock}). */
  #nextWireId = 0
  #reservedWireIds = 0
  #reservation: Promise<void> = Promise.resolve()
  /** The session ID offered with the initialize response, taken once that response proves a success. */
  #offered: {requestId: JsonRpcId; sessionId: string} | undefined
  #expired: string | undefined
  /**
   * A stored session's answer to `initialize`, until the Client asks for it: it is given back from the store, so the
   * Client knows the server's capabilities with no request sent (docs/design.md#session).
   */
  #replay: JsonValue | undefined
  /** The replayed handshake's `notifications/initialized` is the server's already: not sent again. */
  #initializedSent = false

  readonly #owner: OwnedStore

  constructor(records: SessionRecords, owner: OwnedStore) {
    this.#records = records
    this.#owner = owner
  }

  get id(): string | undefined {
    return this.#id
  }

  /** `{kind: 'legacy'}` when the store holds a session: the era it was made in (2025, the one with sessions). */
  async storedEra(): Promise<{kind: 'legacy'} | undefined> {
    await this.#records.settled()
    return (await this.#records.loadSession()) === undefined ? undefined : {kind: 'legacy'}
  }

  /**
   * The session ID as the Client must see it: undefined while a stored session waits to give the Client its
   * `initialize` answer (the Client then initializes, and is answered from the store), the ID otherwise.
   */
  get announcedId(): string | undefined {
    return this.#replay === undefined ? this.#id : undefined
  }

  /** The stored answer to `initialize`, once: the Client's handshake is answered with it instead of the server. */
  takeReplay(): JsonValue | undefined {
    const result = this.#replay
    this.#replay = undefined
    this.#initializedSent = result !== undefined
    return result
  }

  /** True, once, for the `notifications/initialized` that follows a replayed handshake. */
  takeInitialized(): boolean {
    const sent = this.#initializedSent
    this.#initializedSent = false
    return sent
  }

  get protocolVersion(): string | undefined {
    return this.#protocolVersion
  }

  get initializeResult(): JsonValue | undefined {
    return this.#initializeResult
  }

  /**
   * The session that expired under the Client, until it initializes again: the Client still believes in it, so
   * its requests fail `session-expired` rather than reach the server without a session.
   */
  get expired(): string | undefined {
    return this.#expired
  }

  /** [spec 2026-07-28] no sessions, GET streams or event IDs in this era. */
  get stateless(): boolean {
    return this.#stateless
  }

  /**
   * Attaches to the session the app names (`requested`), else to the stored one; resolves the attached ID, or
   * undefined when there is none to attach to.
   */
  async attach(requested: string | undefined, signal: AbortSignal): Promise<string | undefined> {
    // One owner per session: the stored session read below is one no live transport holds
    // (docs/stores.md#ownership-one-session-one-owner).
    await this.#owner.claim(signal)
    const stored = await this.#records.loadSession()
    // [spec basic] wire IDs never repeat across restarts, in the era without sessions too (docs/design.md#session).
    this.#nextWireId = this.#reservedWireIds = Math.max(this.#nextWireId, await this.#records.loadWireIds())
    const sessionId = requested ?? stored?.sessionId
    if (sessionId === undefined) return undefined
    this.#id = sessionId
    if (stored?.sessionId === sessionId) {
      this.#protocolVersion = stored.protocolVersion
      this.#initializeResult = stored.initializeResult
      this.#nextWireId = this.#reservedWireIds = Math.max(this.#nextWireId, stored.requestIdsReserved)
      this.#replay = stored.initializeResult
    } else {
      // A session kept by the app: which request IDs it used is unknown, so start past any plausible one.
      this.#nextWireId = this.#reservedWireIds = Date.now() * 1000
      await this.#records.clearSession()
      await this.#records.saveSession(this.#record())
    }
    return sessionId
  }

  /** `initialize` is being sent: a new session and era will be negotiated. */
  initializing(): void {
    this.#stateless = false
    this.#expired = undefined
  }

  /**
   * The session ID the server offered with its answer to initialize request `requestId`, checked at once by the
   * rule every session ID meets (`isSessionId`). Without the header, the server keeps no session and nothing will be
   * resumable.
   */
  offer(requestId: JsonRpcId, header: string | null): void {
    if (header === null) return
    if (!isSessionId(header)) {
      throw new TransportError(
        'protocol',
        `The server sent an invalid session ID ${excerpt(header)}: only ${sessionIdRule} are allowed`,
      )
    }
    this.#offered = {requestId, sessionId: header}
  }

  /**
   * The response `responseId` reached the Client. The session ID offered with the initialize response is taken
   * only now, and only when that response is a result: an error answering initialize starts no session. Returns
   * the adopted ID.
   */
  settleOffer(responseId: JsonRpcId, result: JsonValue | undefined): string | undefined {
    const offered = this.#offered
    if (offered?.requestId !== responseId) return undefined
    this.#offered = undefined
    if (result === undefined) return undefined
    this.#id = offered.sessionId
    this.#initializeResult = result
    void this.#reserveWireIds(this.#nextWireId)
    return offered.sessionId
  }

  /** True when `version` starts the era without sessions while a session is held: end it before the switch. */
  endsSession(version: string): boolean {
    return version >= statelessRevision && this.#id !== undefined
  }

  /** The negotiated version, sent as `MCP-Protocol-Version` and kept with the session. */
  setProtocolVersion(version: string): void {
    this.#protocolVersion = version
    // [spec 2026-07-28] no sessions, GET streams or event IDs: anything of the kind the server sent is ignored.
    // The session's reservation goes with it: the endpoint's record reserves from the next wire ID on.
    if (version >= statelessRevision) [this.#stateless, this.#reservedWireIds] = [true, this.#nextWireId]
    else if (this.#id !== undefined) void this.#records.saveSession(this.#record())
  }

  /** The next request ID for the wire; a block of them is reserved in the store before any is used. */
  async nextWireId(): Promise<number> {
    const wireId = this.#nextWireId++
    // [spec basic] a request ID is never reused within a session, across processes too.
    if (wireId >= this.#reservedWireIds && (this.#id !== undefined || this.#stateless))
      void this.#reserveWireIds(wireId)
    await this.#reservation
    return wireId
  }

  /**
   * Stores server request `key`'s message (the request, or the Client's answer, `taken` once the server confirmed
   * it) with the key of the stream that brought the request; deletes it when `message` is undefined.
   */
  keep(key: string, message: JSONRPCMessage | undefined, stream?: string, taken = false): Promise<void> {
    if (this.#id === undefined) return Promise.resolve()
    return this.#records.saveServerRequest(this.#id, key, message as JsonValue | undefined, stream, taken)
  }

  /** [spec transports, session management] The server forgot the session: end it, and remember it did. */
  expire(): Promise<void> {
    this.#expired = this.#id
    return this.end()
  }

  /** Forgets the session; the returned promise resolves when its records are gone from the store too. */
  end(): Promise<void> {
    this.#replay = undefined
    this.#id = undefined
    this.#protocolVersion = undefined
    this.#initializeResult = undefined
    return this.#records.clearSession()
  }

  /** Gives the session's lease up, once its last writes are done: the next transport may take it. */
  release(): Promise<void> {
    return this.#owner.release()
  }

  /** Runs `run` under the lease of the stored session {@link Session.attach} would take: before it, or after `release()`. */
  async whileClaimed(signal: AbortSignal, run: () => Promise<void>): Promise<void> {
    await this.#owner.claim(signal)
    try {
      await run()
    } finally {
      await this.release()
    }
  }

  /** Reserves the block of wire IDs that starts at `from`, in the store, before any of them is used. */
  #reserveWireIds(from: number): Promise<void> {
    this.#reservedWireIds = from + wireIdBlock
    // A session reserves in its own record; the era without sessions, in one record of the endpoint.
    this.#reservation =
      this.#id === undefined
        ? this.#records.saveWireIds(this.#reservedWireIds)
        : this.#records.saveSession(this.#record())
    return this.#reservation
  }

  #record(): SessionRecord {
    return {
      sessionId: this.#id!,
      protocolVersion: this.#protocolVersion,
      initializeResult: this.#initializeResult,
      requestIdsReserved: this.#reservedWireIds,
    }
  }
}
