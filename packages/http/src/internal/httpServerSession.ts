/**
 * One Streamable HTTP session on the server: the transport its MCP session
 * runs over (its input: frames the POSTs carry, handed over in order), and
 * the HTTP side of its streams (a POST's reply, the GET stream, resuming
 * with `Last-Event-ID`, the SSE bodies). What the MCP session sends is
 * routed and written by its send line (httpServerSendLine.ts).
 *
 * A stream is logical: its HTTP connection may drop and be replaced by a GET
 * carrying `Last-Event-ID`; events sent meanwhile wait in the EventStore.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Authenticated } from "../HttpAuthentication.ts"
import type * as Session from "@effect-mcp/engine/Session"
import type * as SessionRegistry from "@effect-mcp/engine/SessionRegistry"
import type * as Transport from "@effect-mcp/engine/Transport"
import { SendLine } from "./httpServerSendLine.ts"
import * as OwedAnswers from "./owedAnswers.ts"
import * as Streams from "./httpServerStream.ts"
import type { Connection, LogicalStream, Settings } from "./httpServerStream.ts"
import { formatEvent } from "./httpWire.ts"

export type { Connection, Counters, LogicalStream, Settings } from "./httpServerStream.ts"

/** The input of a session that reads `incoming` instead of attaching itself. */
class Pull {
  readonly queue: Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>
  readonly drained: Deferred.Deferred<void> = Deferred.makeUnsafe<void>()
  constructor(queue: Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>) {
    this.queue = queue
  }
}

const sessionClosedResponse = (id: JsonRpc.RequestId): JsonRpc.Message =>
  JsonRpc.failure(
    id,
    McpError.toErrorObject(new McpError.InternalError({ message: "the session closed before the request completed" }))
  )
/**
 * What every Scope Effect makes has in common (its type ids, its strategy, no
 * parent): a session that is its own scope has these on its prototype.
 */
const scopeModel: Scope.Closeable = Scope.makeUnsafe()

/**
 * One HTTP session: its own transport. A server holds many idle sessions, so
 * behaviour lives on the prototype and every part only some sessions need
 * (the stream tables, the GET stream, the messages waiting for it, the queue
 * of a reading session) is made on first use; an idle session is this object
 * and its `send`.
 */
export class HttpSession extends SendLine implements Transport.TransportShape, SessionRegistry.Held {
  /** The state of the session as its own scope (`Scope.Scope.state`). */
  state: Scope.Scope["state"] = scopeModel.state
  /**
   * Who opened the session (see the server's `clientOf`), for per-client
   * quotas; with authentication, the owner of its principal, to whom it belongs.
   */
  readonly client: string | undefined
  /**
   * The principal of the session's latest authenticated request (set only
   * when the server authenticates: declared, so a session of a server without
   * authentication has no such field).
   */
  declare authenticated: Authenticated | undefined
  /** The MCP session over it once it started (`SessionRegistry.Held.core`, the registry's to set). */
  core: Session.SessionShape | undefined = undefined
  /**
   * POST exchanges being served (their replies included); idle expiry waits
   * for zero. A GET stream does not count: a client that holds one open and
   * says nothing is idle (the events it reads count as activity).
   */
  private active = 0
  // The MCP session attaches itself (push delivery: no reader waits while the
  // session is idle), or else reads `incoming`, whose queue is made then: one
  // field for either.
  private input: Transport.Receiver | Pull | undefined = undefined

  constructor(id: string | undefined, settings: Settings, client?: string | undefined) {
    super(id, settings)
    this.client = client
  }

  /**
   * The scope the MCP session runs in; closing the HTTP session closes it.
   * A stateful session has no parent scope and is that scope itself (a Scope
   * with the constant parts on the prototype and `state` its own field): a
   * server holds many idle sessions, and a Scope object of its own costs each
   * one 56 bytes, a field naming it 8 more (a `OneShotSession` has one).
   */
  get scope(): Scope.Closeable {
    return this as unknown as Scope.Closeable
  }

  // A stateful session's streams are prefixed with its id: no field of its own (see `OneShotSession`).
  protected get key(): string {
    return this.id as string
  }

  // ---- the transport ---------------------------------------------------------

  /** The `Mcp-Session-Id` the session's requests carry (undefined for a stateless request's session). */
  sessionId(): string | undefined {
    return this.id
  }

  get incoming(): Stream.Stream<Transport.Incoming, Transport.TransportError> {
    return Stream.unwrap(
      Effect.map(this.pulled(), (p) =>
        Stream.fromQueue(p.queue).pipe(Stream.ensuring(Deferred.done(p.drained, Exit.void)))
      )
    )
  }

  attach(receiver: Transport.Receiver): boolean {
    if (this.input !== undefined) return false
    this.input = receiver
    return true
  }

  /** The attached MCP session, if it attached itself. */
  private get receiver(): Transport.Receiver | undefined {
    const input = this.input
    return input instanceof Pull ? undefined : input
  }

  /** The queue `incoming` reads, if it was made. */
  private get pull(): Pull | undefined {
    const input = this.input
    return input instanceof Pull ? input : undefined
  }

  protected pulled(): Effect.Effect<Pull> {
    const pull = this.pull
    return pull === undefined
      ? Effect.map(Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(256), (queue) => {
          // Made by the first of the readers that raced to it. With a receiver attached, frames go to it
          // and this queue is never fed (nor kept).
          const input = this.input
          if (input instanceof Pull) return input
          const fresh = new Pull(queue)
          if (input === undefined) this.input = fresh
          return fresh
        })
      : Effect.succeed(pull)
  }

  /** Completes once the MCP session read every frame offered so far and the input ended. */
  get drained(): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.receiver === undefined
        ? Effect.flatMap(this.pulled(), (p) => Deferred.await(p.drained))
        : this.receiver.drained
    )
  }

  /**
   * Hands a frame to the MCP session; with `handedOver`, succeeds only once
   * the session took it (see `Transport.Receiver.offerHandedOver`).
   */
  offer(frame: JsonRpcCodec.Decoded, handedOver = false): Effect.Effect<boolean> {
    if (this.closed) return Effect.succeed(false)
    const receiver = this.receiver
    const incoming = Result.succeed(frame)
    return Effect.tap(
      receiver === undefined
        ? Effect.flatMap(this.pulled(), (p) => Queue.offer(p.queue, incoming))
        : handedOver && receiver.offerHandedOver !== undefined
          ? receiver.offerHandedOver(incoming)
          : receiver.offer(incoming),
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

  /**
   * Numbers its next streams from `first` on: a session reopened in another
   * process must not name a stream as one it had there (their events share
   * a store, and `Last-Event-ID` names a stream).
   */
  continueStreamsFrom(first: number): void {
    this.counter = first
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

  // ---- the HTTP side -------------------------------------------------------------

  protected attachTo(stream: LogicalStream): Effect.Effect<Connection> {
    return Effect.sync(() => {
      const connection = Streams.newConnection()
      if (stream.connection !== undefined) stream.connection.close()
      stream.connection = connection
      stream.takenAt = this.now()
      Streams.forgetUnread(stream)
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
      return Effect.flatMap(Streams.takeAll(connection), (texts) => {
        connection.halt()
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
    return Streams.keptAliveTextOf(stream, connection, this.settings.keepaliveMs, () => this.now()).pipe(
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
          connection.halt()
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
  protected startReply(stream: LogicalStream, priming: boolean): Effect.Effect<void> {
    return priming && this.store !== undefined
      ? this.write(stream, "", this.settings.retryMs)
      : Effect.sync(() => {
          if (stream.connection !== undefined) Streams.push(stream.connection, Streams.ACCEPTED)
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
              if (undelivered !== undefined) for (const text of undelivered) Streams.push(standalone.connection!, text)
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
                Streams.push(
                  connection,
                  formatEvent({ id: event.id, event: event.data === "" ? undefined : "message", data: event.data })
                )
              }
              if (stream.complete) connection.close()
              return stream
            })
          })
        )
      })
    )
  }

  /**
   * Answers what the session's streams still owed where it was served before
   * (its process was lost, or let it go, with requests in flight): an
   * InternalError (-32603) per request, appended to the stream that carried
   * it, so that a client resuming that stream here or anywhere gets it. Run
   * once the session is reopened from its snapshot, before it serves a
   * request. Only with a shared store that keeps what streams owe (`owed`);
   * the answers it appends leave nothing owed, so a second run appends none.
   */
  get settleLost(): Effect.Effect<void> {
    return Effect.suspend(() => OwedAnswers.settle(this.store, this.key))
  }

  protected endConnection(stream: LogicalStream | undefined): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (stream === undefined) return Effect.void
      // Without a store the client could not get the rest: keep the connection.
      if (stream.connection !== undefined && this.store !== undefined) {
        stream.connection.close()
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

  /** The owner of the principal the session is bound to, when the server authenticates. */
  get owner(): string | undefined {
    return this.authenticated?.owner
  }

  /** Whom the session's latest request came from (the transport's `principal`), when the server authenticates. */
  principal(): Authenticated | undefined {
    return this.authenticated
  }

  /**
   * Ends the session and the MCP session over it (the registry's `Held.end`).
   * A session let go to continue elsewhere (`Released`), or left by a server
   * that stops (`Shutdown`), keeps its events in a shared store: its next
   * process writes and resumes the same streams there.
   */
  end(reason?: SessionRegistry.CloseReason): Effect.Effect<void> {
    const goesOn = (reason === "Released" || reason === "Shutdown") && this.store?.shared === true
    return Effect.andThen(this.stop(!goesOn), Scope.close(this.scope, Exit.void))
  }

  /** Marks the session closed, ends every connection and forgets its events. */
  get shutdown(): Effect.Effect<void> {
    return this.stop(true)
  }

  private stop(forgetEvents: boolean): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.closed) return Effect.void
      this.closed = true
      const streams = this.streamMap === undefined ? [] : [...this.streamMap.values()]
      for (const stream of streams) {
        if (stream.collected !== undefined) {
          for (const id of stream.pending) stream.collected.push(sessionClosedResponse(id))
        }
        if (stream.connection !== undefined) stream.connection.close()
        Streams.release(stream)
        Deferred.doneUnsafe(stream.first, Exit.succeed(undefined))
        Deferred.doneUnsafe(stream.done, Exit.void)
      }
      this.byRequestMap = undefined
      if (this.receiver !== undefined) this.receiver.end()
      else if (this.pull !== undefined) Queue.endUnsafe(this.pull.queue)
      // Its finished streams too: an ended session holds nothing in the store.
      return forgetEvents ? this.forgetAll(streams) : Effect.void
    })
  }
}

/**
 * The session of one stateless request: in no table, with no id, living in a
 * child of the server's scope. What a stateful session reads from its id and
 * itself (its key, its scope) are fields here.
 */
export class OneShotSession extends HttpSession {
  private readonly oneShotKey: string
  private readonly oneShotScope: Scope.Closeable

  constructor(key: string, settings: Settings, scope: Scope.Closeable, client?: string | undefined) {
    super(undefined, settings, client)
    this.oneShotKey = key
    this.oneShotScope = scope
  }

  override get scope(): Scope.Closeable {
    return this.oneShotScope
  }

  protected override get key(): string {
    return this.oneShotKey
  }
}

// The constant parts of a Scope, on the prototype: a session without a parent scope is its own (see `scope`).
for (const key of Reflect.ownKeys(scopeModel)) {
  if (key !== "state") Object.defineProperty(HttpSession.prototype, key, { value: Reflect.get(scopeModel, key) })
}
