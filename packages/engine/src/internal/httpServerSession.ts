/**
 * One Streamable HTTP session on the server: the transport its MCP session
 * runs over, and the routing of everything that session sends to the HTTP
 * exchange it belongs to. A response (and progress or logs sent for a
 * request) goes to the stream of the POST that carried the request; anything
 * else goes to the session's GET stream. Each message goes to exactly one
 * stream.
 *
 * A stream is logical: its HTTP connection may drop and be replaced by a GET
 * carrying `Last-Event-ID`; events sent meanwhile wait in the EventStore.
 *
 * A connection buffers a bounded number of events: when its client reads
 * slowly, `send` suspends, and suspended senders are served strictly in
 * arrival order (a new sender queues behind them). A frame becomes an event
 * (stored, numbered, queued) only when it is its turn, so an interrupted
 * sender leaves nothing behind.
 *
 * No send waits on one peer for long: an idempotent notification (a
 * list_changed, a resources/updated for a URI) that is still unread on its
 * stream is not sent again, and never waits (it holds its place in the line
 * without its sender); a connection whose reader takes nothing for the write
 * timeout while events wait is closed (the client resumes it), and counted.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as EventStore from "../EventStore.ts"
import * as Transport from "../Transport.ts"
import { formatEvent } from "./httpWire.ts"
import { cancelledIdsOf, idempotencyKeyOf, messagesOf, responseIdsOf } from "./jsonRpcSniff.ts"
import { Lock } from "./lock.ts"

/** What every session of one server shares. */
export interface Settings {
  readonly clock: Clock.Clock
  /** When the server started: activity is kept relative to it (a small integer, not a boxed number). */
  readonly epoch: number
  /** Present when the streams of stateful sessions are resumable. */
  readonly store: EventStore.EventStoreShape | undefined
  /** The `retry` sent with priming events, in milliseconds. */
  readonly retryMs: number | undefined
  /** Whether stateful sessions offer a GET stream for messages unrelated to a request. */
  readonly standalone: boolean
  /** Events a connection buffers before `send` suspends. */
  readonly maxBuffered: number
  /** A connection whose reader takes nothing for this long while events wait is closed, in milliseconds. */
  readonly writeTimeoutMs: number
  /** What the server counts across its sessions. */
  readonly counters: Counters
}

/** What a server counts across its sessions; read by users through `StreamableHttpServer.stats`. */
export interface Counters {
  /** Connections closed because their reader stalled past the write timeout. */
  evicted: number
  /** Idempotent notifications not sent because the same one was still unread. */
  coalesced: number
}

export type Connection = Queue.Queue<string, Cause.Done>

/** The input of a session that reads `incoming` instead of attaching itself. */
interface Pull {
  readonly queue: Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>
  readonly drained: Deferred.Deferred<void>
}

/** A send waiting for room on its stream; `done` completes once its event is queued (or dropped). */
interface Waiter {
  readonly data: string
  readonly ids: ReadonlyArray<JsonRpc.RequestId>
  readonly head: JsonRpc.Message | undefined
  readonly done: Deferred.Deferred<void, Transport.TransportError>
  /** The idempotency key of a notification whose sender does not wait. */
  readonly key: string | undefined
}

export interface LogicalStream {
  readonly id: string
  readonly standalone: boolean
  /** Requests whose responses this stream carries; the stream completes when none is left. */
  readonly pending: Set<JsonRpc.RequestId>
  /** JSON-response mode: the responses collected for the POST reply. */
  readonly collected: Array<JsonRpc.Message> | undefined
  /** Completes when every pending response was sent (or the session closed). */
  readonly done: Deferred.Deferred<void>
  /**
   * The first message sent on this stream, or undefined when it ended without
   * one; lets a reply hold its status line back until it is known.
   */
  readonly first: Deferred.Deferred<JsonRpc.Message | undefined>
  /** Sends waiting for room on the connection, in arrival order. */
  readonly waiting: Array<Waiter>
  connection: Connection | undefined
  complete: boolean
  /** When the reader of the connection last took events (or the connection opened), in server time. */
  takenAt: number
  /**
   * Idempotent notifications not yet read: key -> the event text queued on
   * the connection, or "" while the notification waits in the line.
   */
  unread: Map<string, string> | undefined
}

const closedError = new Transport.TransportError({ reason: "Closed", message: "HTTP session closed" })

// An SSE comment: opens a reply's stream without an event (clients skip comments).
const ACCEPTED = ":\n\n"

// An SSE comment sent on a silent connection, so proxies keep it and a dead reader shows.
const KEEPALIVE = ":keepalive\n\n"

// Messages for the GET stream while no GET is open wait for the next GET, up to this many.
const maxUndelivered = 1024

const sessionClosedResponse = (id: JsonRpc.RequestId): JsonRpc.Message =>
  JsonRpc.failure(
    id,
    McpError.toErrorObject(new McpError.InternalError({ message: "the session closed before the request completed" }))
  )

/**
 * One HTTP session: its own transport (`transport` is the session itself).
 * A server holds many idle sessions, so behaviour lives on the prototype and
 * every part only some sessions need (the stream tables, the GET stream, the
 * messages waiting for it, the queue of a reading session) is made on first
 * use; an idle session is this object and its `send`.
 */
export class HttpSession extends Lock implements Transport.TransportShape {
  /** The `Mcp-Session-Id`; undefined for a per-request (stateless) session. */
  readonly id: string | undefined
  /** Prefix of this session's stream ids in the EventStore. */
  private readonly key: string
  private readonly settings: Settings
  /** The scope the MCP session runs in; closing the HTTP session closes it. */
  readonly scope: Scope.Closeable
  /** Bound: transports hand `send` around on its own. */
  readonly send: (
    frame: Transport.Outgoing,
    options?: Transport.SendOptions
  ) => Effect.Effect<void, Transport.TransportError>
  /** The negotiated revision, learned from the `initialize` response. */
  protocolVersion: string | undefined = undefined
  /** When the session was last active, in milliseconds since `settings.epoch`. */
  private activeAt: number
  /**
   * POST exchanges being served (their replies included); idle expiry waits
   * for zero. A GET stream does not count: a client that holds one open and
   * says nothing is idle (the events it reads count as activity).
   */
  private active = 0
  /** Who opened the session (see the server's `clientOf`), for per-client quotas. */
  readonly client: string | undefined
  private closed = false
  private counter = 0
  // The MCP session attaches itself (push delivery: no reader waits while the
  // session is idle), or else reads `incoming`, whose queue is made then.
  private receiver: Transport.Receiver | undefined = undefined
  private pull: Pull | undefined = undefined
  private byRequestMap: Map<JsonRpc.RequestId, LogicalStream> | undefined = undefined
  private streamMap: Map<string, LogicalStream> | undefined = undefined
  private initializeIds: Set<JsonRpc.RequestId> | undefined = undefined
  private standaloneStream: LogicalStream | undefined = undefined
  private undelivered: Array<string> | undefined = undefined

  constructor(
    id: string | undefined,
    key: string,
    settings: Settings,
    scope: Scope.Closeable,
    client?: string | undefined
  ) {
    super()
    this.id = id
    this.client = client
    this.key = key
    this.settings = settings
    this.scope = scope
    this.send = this.sendFrame.bind(this)
    this.activeAt = settings.clock.currentTimeMillisUnsafe() - settings.epoch
  }

  // ---- the transport ---------------------------------------------------------

  get incoming(): Stream.Stream<Transport.Incoming, Transport.TransportError> {
    return Stream.unwrap(
      Effect.map(this.pulled(), (p) =>
        Stream.fromQueue(p.queue).pipe(Stream.ensuring(Deferred.done(p.drained, Exit.void)))
      )
    )
  }

  attach(receiver: Transport.Receiver): boolean {
    if (this.pull !== undefined || this.receiver !== undefined) return false
    this.receiver = receiver
    return true
  }

  private pulled(): Effect.Effect<Pull> {
    return this.pull === undefined
      ? Effect.map(Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(256), (queue) => {
          this.pull ??= { queue, drained: Deferred.makeUnsafe<void>() }
          return this.pull
        })
      : Effect.succeed(this.pull)
  }

  /** Completes once the MCP session read every frame offered so far and the input ended. */
  get drained(): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.receiver === undefined
        ? Effect.flatMap(this.pulled(), (p) => Deferred.await(p.drained))
        : this.receiver.drained
    )
  }

  /** Hands a frame to the MCP session. */
  offer(frame: JsonRpcCodec.Decoded): Effect.Effect<boolean> {
    if (this.closed) return Effect.succeed(false)
    const receiver = this.receiver
    return Effect.tap(
      receiver === undefined
        ? Effect.flatMap(this.pulled(), (p) => Queue.offer(p.queue, Result.succeed(frame)))
        : receiver.offer(Result.succeed(frame)),
      (accepted) => (accepted ? this.releaseCancelled(frame) : Effect.void)
    )
  }

  /** Ends the input: the MCP session sees end-of-stream after the frames already offered. */
  get endInput(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.receiver === undefined) return Effect.flatMap(this.pulled(), (p) => Effect.asVoid(Queue.end(p.queue)))
      this.receiver.end()
      return Effect.void
    })
  }

  isClosed(): boolean {
    return this.closed
  }

  /** A POST exchange starts: the session is busy (and active) until `endExchange`. */
  beginExchange(): void {
    this.active++
    this.touch()
  }

  /** A POST exchange (its reply included) ended. */
  endExchange(): void {
    this.active--
    this.touch()
  }

  /** Whether an exchange is being served. */
  isBusy(): boolean {
    return this.active > 0
  }

  /** Records activity now. */
  touch(): void {
    this.activeAt = this.settings.clock.currentTimeMillisUnsafe() - this.settings.epoch
  }

  /** How long the session has been without activity at `now`, in milliseconds. */
  idleFor(now: number): number {
    return now - this.settings.epoch - this.activeAt
  }

  // ---- the stream tables -------------------------------------------------------

  private get store(): EventStore.EventStoreShape | undefined {
    return this.id === undefined ? undefined : this.settings.store
  }

  private get streams(): Map<string, LogicalStream> {
    if (this.streamMap === undefined) this.streamMap = new Map()
    return this.streamMap
  }

  private get byRequest(): Map<JsonRpc.RequestId, LogicalStream> {
    if (this.byRequestMap === undefined) this.byRequestMap = new Map()
    return this.byRequestMap
  }

  /** The GET stream, made when first needed; undefined when the session has none. */
  private get standalone(): LogicalStream | undefined {
    if (this.standaloneStream === undefined && this.id !== undefined && this.settings.standalone) {
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

  private newStream(standalone: boolean, collected: Array<JsonRpc.Message> | undefined): LogicalStream {
    const stream: LogicalStream = {
      id: `${this.key}_${standalone ? "get" : this.counter++}`,
      standalone,
      pending: new Set(),
      collected,
      done: Deferred.makeUnsafe<void>(),
      first: Deferred.makeUnsafe<JsonRpc.Message | undefined>(),
      waiting: [],
      connection: undefined,
      complete: false,
      takenAt: 0,
      unread: undefined
    }
    this.streams.set(stream.id, stream)
    return stream
  }

  /** A stream delivered in full, remade to carry the replay of a resume. */
  private retired(id: string): LogicalStream {
    return {
      id,
      standalone: false,
      pending: new Set(),
      collected: undefined,
      done: Deferred.makeUnsafe<void>(),
      first: Deferred.makeUnsafe<JsonRpc.Message | undefined>(),
      waiting: [],
      connection: undefined,
      complete: true,
      takenAt: 0,
      unread: undefined
    }
  }

  /** Drops a stream from the table; an empty table is dropped too (an idle session keeps none). */
  private unlist(stream: LogicalStream): void {
    const streams = this.streamMap
    if (streams?.delete(stream.id) && streams.size === 0) this.streamMap = undefined
  }

  private forget(stream: LogicalStream): Effect.Effect<void> {
    this.unlist(stream)
    const store = this.store
    return store === undefined ? Effect.void : Effect.ignore(store.forget(stream.id), { log: "Warn" })
  }

  /** Stores (when resumable) and writes one event; callers hold the lock so event order is send order. */
  private write(stream: LogicalStream, data: string, retryMs?: number, key?: string): Effect.Effect<void> {
    const store = this.store
    if (store === undefined) return Effect.sync(() => this.writeText(stream, data, undefined, retryMs, key))
    return Effect.map(
      store
        .append(stream.id, data)
        .pipe(
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`event not stored, it cannot be resumed: ${error.message}`), undefined)
          )
        ),
      (id) => this.writeText(stream, data, id, retryMs, key)
    )
  }

  private writeText(
    stream: LogicalStream,
    data: string,
    id: string | undefined,
    retryMs: number | undefined,
    key?: string
  ): void {
    const text = formatEvent({ id, event: data === "" ? undefined : "message", data, retryMs })
    if (stream.connection !== undefined) {
      Queue.offerUnsafe(stream.connection, text)
      if (key !== undefined) (stream.unread ??= new Map()).set(key, text)
    } else if (stream.standalone && data !== "") {
      if (this.undelivered === undefined) this.undelivered = []
      this.undelivered.push(text)
      if (this.undelivered.length > maxUndelivered) this.undelivered.shift()
    }
  }

  /** Ends the waits of a stream's suspended senders; their frames are never sent. */
  private static release(stream: LogicalStream, exit: Exit.Exit<void, Transport.TransportError>): void {
    for (const waiter of stream.waiting.splice(0, stream.waiting.length)) Deferred.doneUnsafe(waiter.done, exit)
  }

  private finish(stream: LogicalStream): void {
    stream.complete = true
    // A JSON reply is never resumed.
    if (stream.collected !== undefined) this.unlist(stream)
    if (stream.connection !== undefined) Queue.endUnsafe(stream.connection)
    // What still waits was sent for requests that are answered or cancelled: nobody reads it.
    HttpSession.release(stream, Exit.void)
    Deferred.doneUnsafe(stream.first, Exit.succeed(undefined))
    Deferred.doneUnsafe(stream.done, Exit.void)
  }

  private settle(stream: LogicalStream, ids: ReadonlyArray<JsonRpc.RequestId>): void {
    const byRequest = this.byRequestMap
    for (const id of ids) {
      stream.pending.delete(id)
      if (byRequest?.get(id) === stream) byRequest.delete(id)
    }
    if (byRequest?.size === 0) this.byRequestMap = undefined
    if (stream.pending.size === 0 && !stream.standalone) this.finish(stream)
  }

  private learnVersion(frame: Transport.Outgoing): void {
    const initializeIds = this.initializeIds
    if (initializeIds === undefined) return
    for (const message of messagesOf(frame)) {
      if (!JsonRpc.isSuccess(message) || !initializeIds.has(message.id)) continue
      initializeIds.delete(message.id)
      const version = (message.result as { readonly protocolVersion?: unknown } | null)?.protocolVersion
      if (typeof version === "string") this.protocolVersion = version
    }
    if (initializeIds.size === 0) this.initializeIds = undefined
  }

  private route(frame: Transport.Outgoing, related: JsonRpc.RequestId | undefined): LogicalStream | undefined {
    const ids = responseIdsOf(frame)
    const byRequest = this.byRequestMap
    if (ids.length > 0) {
      if (byRequest === undefined) return undefined
      for (const id of ids) {
        const stream = byRequest.get(id)
        if (stream !== undefined) return stream
      }
      return undefined
    }
    if (related !== undefined) {
      const stream = byRequest?.get(related)
      // A JSON reply carries only responses; what a handler sends meanwhile goes to the GET stream.
      if (stream !== undefined && stream.collected === undefined) return stream
    }
    return this.standalone
  }

  private hasRoom(stream: LogicalStream): boolean {
    return stream.connection === undefined || Queue.sizeUnsafe(stream.connection) < this.settings.maxBuffered
  }

  /** Makes a frame an event of its stream (or drops it); callers hold the lock. */
  private admit(
    stream: LogicalStream,
    data: string,
    ids: ReadonlyArray<JsonRpc.RequestId>,
    head: JsonRpc.Message | undefined,
    key: string | undefined
  ): Effect.Effect<void> {
    if (key !== undefined) stream.unread?.delete(key)
    if (!stream.standalone) Deferred.doneUnsafe(stream.first, Exit.succeed(head))
    if (stream.connection === undefined && this.store === undefined && !stream.standalone) {
      this.settle(stream, ids)
      return Effect.logDebug("dropped a message: its stream has no connection and no event store")
    }
    if (this.store === undefined) {
      this.writeText(stream, data, undefined, undefined, key)
      this.settle(stream, ids)
      return Effect.void
    }
    return Effect.andThen(
      this.write(stream, data, undefined, key),
      Effect.sync(() => this.settle(stream, ids))
    )
  }

  /** Admits waiting senders, first come first served, while their stream has room. */
  private pump(stream: LogicalStream): Effect.Effect<void> {
    return Effect.suspend(() =>
      stream.waiting.length === 0
        ? Effect.void
        : this.withLock(
            Effect.whileLoop({
              while: () => !this.closed && stream.waiting.length > 0 && this.hasRoom(stream),
              body: () => {
                // Out of the list first: an interrupt arriving meanwhile finds it taken.
                const waiter = stream.waiting.shift()!
                return Effect.as(this.admit(stream, waiter.data, waiter.ids, waiter.head, waiter.key), waiter)
              },
              step: (waiter) => Deferred.doneUnsafe(waiter.done, Exit.void)
            })
          ).pipe(Effect.uninterruptible)
    )
  }

  /**
   * Routes and admits a frame at once when its stream has room and nobody
   * waits ahead of it; otherwise returns the waiter that holds its place.
   */
  private enqueue(
    frame: Transport.Outgoing,
    related: JsonRpc.RequestId | undefined
  ): Effect.Effect<readonly [LogicalStream, Waiter] | undefined> {
    return Effect.suspend((): Effect.Effect<readonly [LogicalStream, Waiter] | undefined> => {
      const stream = this.route(frame, related)
      if (stream === undefined) {
        return Effect.as(Effect.logDebug("dropped a message with no stream to carry it"), undefined)
      }
      const ids = responseIdsOf(frame)
      const head = messagesOf(frame)[0]
      if (stream.collected !== undefined) {
        Deferred.doneUnsafe(stream.first, Exit.succeed(head))
        stream.collected.push(...messagesOf(frame))
        this.settle(stream, ids)
        return Effect.succeed(undefined)
      }
      // Only a notification can be idempotent: a response or request never pays for the look.
      const key = ids.length === 0 && stream.connection !== undefined ? idempotencyKeyOf(frame) : undefined
      if (key !== undefined && stream.unread?.has(key) === true) {
        // The same notification is still unread: the client will act on that one.
        this.settings.counters.coalesced++
        return Effect.succeed(undefined)
      }
      const data = JsonRpcCodec.encode(frame)
      if (stream.waiting.length === 0 && this.hasRoom(stream)) {
        return Effect.as(this.admit(stream, data, ids, head, key), undefined)
      }
      const waiter: Waiter = { data, ids, head, done: Deferred.makeUnsafe(), key }
      stream.waiting.push(waiter)
      if (key !== undefined) {
        // It holds its place without its sender: a broadcast never waits on this peer.
        ;(stream.unread ??= new Map()).set(key, "")
        return Effect.succeed(undefined)
      }
      return Effect.succeed([stream, waiter] as const)
    })
  }

  private sendFrame(
    frame: Transport.Outgoing,
    options?: Transport.SendOptions
  ): Effect.Effect<void, Transport.TransportError> {
    return Effect.suspend((): Effect.Effect<void, Transport.TransportError> => {
      if (this.closed) return Effect.fail(closedError)
      this.learnVersion(frame)
      // Holding a place in the line and leaving it are atomic; only the wait is interruptible.
      return Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(this.withLock(this.enqueue(frame, options?.relatedRequestId)), (queued) => {
          if (queued === undefined) return Effect.void
          const [stream, waiter] = queued
          return restore(Deferred.await(waiter.done)).pipe(
            Effect.onInterrupt(() =>
              Effect.sync(() => {
                const index = stream.waiting.indexOf(waiter)
                if (index >= 0) stream.waiting.splice(index, 1)
              })
            )
          )
        })
      )
    })
  }

  /**
   * A cancelled request is never answered: its stream stops waiting for it
   * (and ends when nothing else is pending). A late response is dropped.
   */
  private releaseCancelled(frame: JsonRpcCodec.Decoded): Effect.Effect<void> {
    const ids = cancelledIdsOf(frame)
    if (ids === undefined) return Effect.void
    const cancelled = ids
    return this.withLock(
      Effect.sync(() => {
        for (const id of cancelled) {
          const stream = this.byRequestMap?.get(id)
          if (stream !== undefined && stream.collected === undefined) this.settle(stream, [id])
        }
      })
    )
  }

  private now(): number {
    return this.settings.clock.currentTimeMillisUnsafe() - this.settings.epoch
  }

  /** The reader took `texts`: the notifications among them are read, and the connection is alive. */
  private taken(stream: LogicalStream, texts: ReadonlyArray<string>): void {
    stream.takenAt = this.now()
    // Events the client reads are activity; keepalives it happens to take are not.
    if (texts.length > 1 || texts[0] !== KEEPALIVE) this.activeAt = stream.takenAt
    const unread = stream.unread
    if (unread === undefined) return
    for (const [key, text] of unread) if (text !== "" && texts.includes(text)) unread.delete(key)
  }

  /** A connection's queued notifications are gone with it (waiting ones keep their place). */
  private forgetUnread(stream: LogicalStream): void {
    const unread = stream.unread
    if (unread === undefined) return
    for (const [key, text] of unread) if (text !== "") unread.delete(key)
  }

  /**
   * Closes the connections whose reader took nothing for the write timeout
   * while events waited for it, and sends the others a keepalive comment
   * when they have nothing queued; returns how many were closed. Run by the
   * server on a timer.
   */
  watch(keepalive: boolean): Effect.Effect<number> {
    return Effect.suspend(() => {
      const streams = this.streamMap
      if (streams === undefined || this.closed) return Effect.succeed(0)
      const now = this.now()
      const stalled: Array<LogicalStream> = []
      for (const stream of streams.values()) {
        const connection = stream.connection
        if (connection === undefined) continue
        const queued = Queue.sizeUnsafe(connection)
        if ((queued > 0 || stream.waiting.length > 0) && now - stream.takenAt >= this.settings.writeTimeoutMs) {
          stalled.push(stream)
        } else if (keepalive && queued === 0) {
          Queue.offerUnsafe(connection, KEEPALIVE)
        }
      }
      return Effect.as(
        Effect.forEach(stalled, (stream) => this.evict(stream), { discard: true }),
        stalled.length
      )
    })
  }

  /** Closes a stalled connection: its waiting senders go to the store (or the next GET), and the client resumes. */
  private evict(stream: LogicalStream): Effect.Effect<void> {
    const connection = stream.connection
    if (connection === undefined) return Effect.void
    stream.connection = undefined
    this.forgetUnread(stream)
    this.settings.counters.evicted++
    Queue.shutdownUnsafe(connection)
    return Effect.andThen(Effect.logDebug(`closed a stalled SSE connection of stream ${stream.id}`), this.pump(stream))
  }

  // ---- the HTTP side -------------------------------------------------------------

  private attachTo(stream: LogicalStream): Effect.Effect<Connection> {
    return Effect.map(Queue.unbounded<string, Cause.Done>(), (connection) => {
      if (stream.connection !== undefined) Queue.endUnsafe(stream.connection)
      stream.connection = connection
      stream.takenAt = this.now()
      this.forgetUnread(stream)
      return connection
    })
  }

  /** Opens the stream answering a POST's requests. */
  openPost(
    requestIds: ReadonlyArray<JsonRpc.RequestId>,
    mode: "sse" | "json",
    priming: boolean
  ): Effect.Effect<LogicalStream> {
    return this.withLock(
      Effect.suspend(() => {
        const stream = this.newStream(false, mode === "json" ? [] : undefined)
        if (requestIds.length > 0) {
          const byRequest = this.byRequest
          for (const id of requestIds) {
            stream.pending.add(id)
            byRequest.set(id, stream)
          }
        }
        if (mode === "json") return Effect.succeed(stream)
        return this.attachTo(stream).pipe(Effect.andThen(this.startReply(stream, priming)), Effect.as(stream))
      })
    )
  }

  /**
   * The whole SSE text of a stream already complete on `connection`, which it
   * then ends and unlists (delivered in full; its events stay resumable until
   * the store drops them); undefined while it is not.
   */
  completeText(stream: LogicalStream, connection: Connection): Effect.Effect<string | undefined> {
    return Effect.suspend(() => {
      // Only a stream complete on the connection it opened with is delivered in full by one body.
      if (!stream.complete || stream.connection !== connection) return Effect.succeed(undefined)
      stream.connection = undefined
      return Effect.flatMap(Queue.clear(connection), (texts) => {
        Queue.shutdownUnsafe(connection)
        this.touch()
        this.unlist(stream)
        return Effect.succeed(texts.join(""))
      })
    })
  }

  /** The SSE body of a connection of a stream (by default its current one). */
  body(stream: LogicalStream, connection = stream.connection): Stream.Stream<Uint8Array> {
    if (connection === undefined) return Stream.empty
    // A POST's reply keeps the session busy; a GET stream does not (see `active`).
    const exchange = !stream.standalone
    if (exchange) this.active++
    return Stream.fromQueue(connection).pipe(
      // Taking events makes room for the senders waiting on this stream.
      Stream.mapArrayEffect((texts) => {
        if (stream.connection === connection) this.taken(stream, texts)
        return Effect.as(this.pump(stream), texts)
      }),
      Stream.encodeText,
      Stream.onExit((exit) =>
        Effect.suspend(() => {
          if (exchange) this.active--
          this.touch()
          // Still the stream's connection: it was not cut off (closed early or replaced).
          const current = stream.connection === connection
          if (current) stream.connection = undefined
          Queue.shutdownUnsafe(connection)
          // Delivered in full: unlisted, but its events stay in the store for as
          // long as it keeps them, so a client whose connection dropped before it
          // read them all resumes as often as it needs.
          if (current && stream.complete && Exit.isSuccess(exit)) this.unlist(stream)
          // Without a connection the waiting senders go to the store (or the next GET).
          return this.pump(stream)
        })
      )
    )
  }

  /**
   * Starts a POST's reply at once, so the client learns that its message was
   * taken (in order) before it sends the next: a priming event, or else a comment.
   */
  private startReply(stream: LogicalStream, priming: boolean): Effect.Effect<void> {
    return priming && this.store !== undefined
      ? this.write(stream, "", this.settings.retryMs)
      : Effect.sync(() => {
          if (stream.connection !== undefined) Queue.offerUnsafe(stream.connection, ACCEPTED)
        })
  }

  /** Attaches a connection to the GET stream; undefined when one is attached already. */
  openStandalone(priming: boolean): Effect.Effect<LogicalStream | undefined> {
    return this.withLock(
      Effect.suspend(() => {
        const standalone = this.standalone
        if (standalone === undefined || standalone.connection !== undefined) return Effect.succeed(undefined)
        return this.attachTo(standalone).pipe(
          Effect.andThen(
            priming && this.store !== undefined ? this.write(standalone, "", this.settings.retryMs) : Effect.void
          ),
          Effect.andThen(
            Effect.sync(() => {
              const undelivered = this.undelivered
              this.undelivered = undefined
              if (undelivered !== undefined)
                for (const text of undelivered) Queue.offerUnsafe(standalone.connection!, text)
            })
          ),
          Effect.as(standalone)
        )
      })
    )
  }

  /** Attaches a new connection to the stream of `lastEventId`, replaying what followed it. */
  resume(lastEventId: string): Effect.Effect<LogicalStream | undefined> {
    return this.withLock(
      Effect.suspend(() => {
        const store = this.store
        if (store === undefined) return Effect.succeed(undefined)
        return store.replayAfter(lastEventId).pipe(
          Effect.catch((error) => Effect.as(Effect.logWarning(error.message), undefined)),
          Effect.flatMap((replay) => {
            // The event must belong to this session: ids are not capabilities.
            if (replay === undefined || !replay.streamId.startsWith(`${this.key}_`)) return Effect.succeed(undefined)
            // A stream delivered in full is no longer listed: its replay is all that is left of it.
            const stream = this.streamMap?.get(replay.streamId) ?? this.retired(replay.streamId)
            return Effect.map(this.attachTo(stream), (connection) => {
              // The replay covers what the GET stream missed.
              if (stream.standalone) this.undelivered = undefined
              for (const event of replay.events) {
                Queue.offerUnsafe(
                  connection,
                  formatEvent({ id: event.id, event: event.data === "" ? undefined : "message", data: event.data })
                )
              }
              if (stream.complete) Queue.endUnsafe(connection)
              return stream
            })
          })
        )
      })
    )
  }

  private endConnection(stream: LogicalStream | undefined): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (stream === undefined) return Effect.void
      // Without a store the client could not get the rest: keep the connection.
      if (stream.connection !== undefined && this.store !== undefined) {
        Queue.endUnsafe(stream.connection)
        stream.connection = undefined
      }
      // Without a connection the waiting senders go to the store.
      return this.pump(stream)
    })
  }

  /** Ends the connection of the stream carrying `requestId`; the client resumes it. */
  closeRequestStream(requestId: JsonRpc.RequestId): Effect.Effect<void> {
    return Effect.suspend(() => this.endConnection(this.byRequestMap?.get(requestId)))
  }

  get closeStandaloneStream(): Effect.Effect<void> {
    return Effect.suspend(() => this.endConnection(this.standaloneStream))
  }

  /** Marks the session closed, ends every connection and forgets its events. */
  get shutdown(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.closed) return Effect.void
      this.closed = true
      const streams = this.streamMap === undefined ? [] : [...this.streamMap.values()]
      for (const stream of streams) {
        if (stream.collected !== undefined) {
          for (const id of stream.pending) stream.collected.push(sessionClosedResponse(id))
        }
        if (stream.connection !== undefined) Queue.endUnsafe(stream.connection)
        HttpSession.release(stream, Exit.fail(closedError))
        Deferred.doneUnsafe(stream.first, Exit.succeed(undefined))
        Deferred.doneUnsafe(stream.done, Exit.void)
      }
      this.byRequestMap = undefined
      if (this.receiver !== undefined) this.receiver.end()
      else if (this.pull !== undefined) Queue.endUnsafe(this.pull.queue)
      return Effect.forEach(streams, (stream) => this.forget(stream), { discard: true })
    })
  }
}
