/**
 * The stream tables of a Streamable HTTP session on the server: its streams
 * by id (each POST's reply stream and the GET stream), the stream answering
 * each request in flight, the `initialize` requests whose responses teach
 * the negotiated revision, and the GET stream's events kept while it has no
 * connection. Only some sessions need any of them, so they live in one
 * object made when the first is set and dropped when the last is unset: an
 * idle session keeps one field for the five. Forgetting a stream (or all of
 * a session's) tells the event store too. The send line (`SendLine`) extends
 * this class.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import type * as EventStore from "../EventStore.ts"
import * as Streams from "./httpServerStream.ts"
import type { LogicalStream, Settings } from "./httpServerStream.ts"
import { Lock } from "./lock.ts"

/** A session's tables that only some sessions need (see `StreamTables.tables`). */
class Tables {
  /** The stream answering each request in flight. */
  byRequestMap: Map<JsonRpc.RequestId, LogicalStream> | undefined = undefined
  /** The listed streams, by id. */
  streamMap: Map<string, LogicalStream> | undefined = undefined
  /** The `initialize` requests in flight (their responses teach the negotiated revision). */
  initializeIds: Set<JsonRpc.RequestId> | undefined = undefined
  /** The GET stream, once made. */
  standaloneStream: LogicalStream | undefined = undefined
  /** Events of the GET stream sent while it had no connection, for the next one to take. */
  undelivered: Array<string> | undefined = undefined

  isEmpty(): boolean {
    return (
      this.byRequestMap === undefined &&
      this.streamMap === undefined &&
      this.initializeIds === undefined &&
      this.standaloneStream === undefined &&
      this.undelivered === undefined
    )
  }
}

/**
 * The tables of one session; the lock every change of them is made under
 * (`SendLine` holds it to write) comes with them.
 */
export abstract class StreamTables extends Lock {
  /** The `Mcp-Session-Id`; undefined for a per-request (stateless) session. */
  readonly id: string | undefined
  /** Prefix of this session's stream ids in the EventStore. */
  protected abstract readonly key: string
  protected readonly settings: Settings
  protected counter = 0
  // The tables only a session with streams (or an `initialize` in flight) needs, in one object made when the
  // first is set and dropped when the last is unset: an idle session keeps one field for the five.
  private tables: Tables | undefined = undefined

  constructor(id: string | undefined, settings: Settings) {
    super()
    this.id = id
    this.settings = settings
  }

  private setTable<K extends keyof Tables>(key: K, value: Tables[K]): void {
    let tables = this.tables
    if (tables === undefined) {
      if (value === undefined) return
      tables = this.tables = new Tables()
    }
    tables[key] = value
    if (value === undefined && tables.isEmpty()) this.tables = undefined
  }

  protected get byRequestMap(): Map<JsonRpc.RequestId, LogicalStream> | undefined {
    return this.tables?.byRequestMap
  }
  protected set byRequestMap(value: Map<JsonRpc.RequestId, LogicalStream> | undefined) {
    this.setTable("byRequestMap", value)
  }

  protected get streamMap(): Map<string, LogicalStream> | undefined {
    return this.tables?.streamMap
  }
  protected set streamMap(value: Map<string, LogicalStream> | undefined) {
    this.setTable("streamMap", value)
  }

  protected get initializeIds(): Set<JsonRpc.RequestId> | undefined {
    return this.tables?.initializeIds
  }
  protected set initializeIds(value: Set<JsonRpc.RequestId> | undefined) {
    this.setTable("initializeIds", value)
  }

  protected get standaloneStream(): LogicalStream | undefined {
    return this.tables?.standaloneStream
  }
  protected set standaloneStream(value: LogicalStream | undefined) {
    this.setTable("standaloneStream", value)
  }

  protected get undelivered(): Array<string> | undefined {
    return this.tables?.undelivered
  }
  protected set undelivered(value: Array<string> | undefined) {
    this.setTable("undelivered", value)
  }

  protected get store(): EventStore.EventStoreShape | undefined {
    return this.id === undefined ? undefined : this.settings.store
  }

  protected get streams(): Map<string, LogicalStream> {
    if (this.streamMap === undefined) this.streamMap = new Map()
    return this.streamMap
  }

  protected get byRequest(): Map<JsonRpc.RequestId, LogicalStream> {
    if (this.byRequestMap === undefined) this.byRequestMap = new Map()
    return this.byRequestMap
  }

  /**
   * Whether the session has a GET stream, the one channel for what the server sends outside a request: a
   * stateless request's session has none, nor has any when the server offers none (`standaloneStream: false`).
   */
  get carriesUnsolicited(): boolean {
    return this.id !== undefined && this.settings.standalone
  }

  /** The GET stream, made when first needed; undefined when the session has none. */
  protected get standalone(): LogicalStream | undefined {
    if (this.standaloneStream === undefined && this.carriesUnsolicited) {
      this.standaloneStream = this.newStream(true, undefined)
    }
    return this.standaloneStream
  }

  /** Whether a request id is already being answered. */
  isPending(id: JsonRpc.RequestId): boolean {
    return this.byRequestMap?.has(id) === true
  }

  /** Remembers that `id` is an `initialize`, so its response teaches the negotiated revision. */
  trackInitialize(id: JsonRpc.RequestId): void {
    if (this.initializeIds === undefined) this.initializeIds = new Set()
    this.initializeIds.add(id)
  }

  protected newStream(standalone: boolean, collected: Array<JsonRpc.Message> | undefined): LogicalStream {
    const stream = Streams.makeStream(`${this.key}_${standalone ? "get" : this.counter++}`, standalone, collected)
    this.streams.set(stream.id, stream)
    return stream
  }

  /** A stream delivered in full, remade to carry the replay of a resume. */
  protected retired(id: string): LogicalStream {
    return Streams.makeStream(id, false, undefined, true)
  }

  /** Drops a stream from the table; an empty table is dropped too (an idle session keeps none). */
  protected unlist(stream: LogicalStream): void {
    const streams = this.streamMap
    if (streams?.delete(stream.id) && streams.size === 0) this.streamMap = undefined
  }

  protected forget(stream: LogicalStream): Effect.Effect<void> {
    this.unlist(stream)
    const store = this.store
    return store === undefined ? Effect.void : Effect.ignore(store.forget(stream.id), { log: "Warn" })
  }

  /**
   * Forgets every stream of a session that ended (deleted, expired: not one
   * let go to go on in another process, which keeps its events in a shared
   * store, see `HttpSession.end`). A stream delivered in full is no longer
   * listed but its events stay stored (for a client that resumes it), so
   * only the store can say which streams the session still has there: it
   * drops them all by the session's key, shared or not. Left to a shared
   * store's own retention, they would be replayed to a `Last-Event-ID` on any
   * process sharing it (which cannot tell an ended session from one another
   * process holds) for that long. A store without `forgetSession` is told of
   * the listed streams only.
   */
  protected forgetAll(streams: ReadonlyArray<LogicalStream>): Effect.Effect<void> {
    const store = this.store
    if (store?.forgetSession === undefined) {
      return Effect.forEach(streams, (stream) => this.forget(stream), { discard: true })
    }
    for (const stream of streams) this.unlist(stream)
    return Effect.ignore(store.forgetSession(this.key), { log: "Warn" })
  }
}
