/**
 * The Peer's implementation (the contract is in Peer.ts): request ids, the
 * table of pending outgoing requests (timeouts, progress, cancellation), the
 * frames coming in, and closing. Incoming requests are served by
 * `IncomingRequests`; what a request means is the Dispatcher's business.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import type * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type * as Peer from "../Peer.ts"
import * as PeerError from "../PeerError.ts"
import * as ProgressStream from "../ProgressStream.ts"
import type * as Transport from "../Transport.ts"
import * as Inbound from "./inbound.ts"
import * as McpMetrics from "../McpMetrics.ts"
import * as Tracing from "../Tracing.ts"
import * as Incoming from "./incomingRequests.ts"
import type * as PeerInput from "./peerInput.ts"
import { type Config, sharedConfig, timingOf } from "./peerConfig.ts"
import { type Outcome, type Pending, PendingTable, type TimeoutReason, type Timer } from "./pending.ts"

type ClosedExit = PeerInput.ClosedExit

/** The progress callback of a request that asked for progress only to restart its timeout. */
const ignoreProgress = (): void => {}

const noFibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>> = []

/** How a Peer closed. */
class Closing {
  readonly reason: string
  readonly exit: ClosedExit
  // Every caller of shutdown waits for the same handler fibers to finish, so
  // a scope close returns only after their finalizers ran.
  stopping: ReadonlyArray<Fiber.Fiber<unknown, unknown>> = noFibers
  constructor(reason: string, exit: ClosedExit) {
    this.reason = reason
    this.exit = exit
  }
}

/**
 * The Peer: one object whose behaviour is on the prototype (the requests it
 * serves and its pushed input are its base classes). What only some
 * sessions need (the table of outgoing requests and its timer, the table of
 * requests in flight, the close signal) is made when first needed, so an idle
 * session costs little.
 */
export class PeerImpl extends Incoming.IncomingRequests implements Peer.Peer, Timer {
  readonly transport: Transport.TransportShape
  readonly dispatcher: Peer.Dispatcher
  readonly context: Context.Context<never>
  private readonly config: Config
  readonly semaphore: Semaphore.Semaphore | undefined
  private table: PendingTable | undefined = undefined
  // While open, the signal `closed` waits on (made by its first waiter); once closed, how (made as it
  // closes). One field for both: a server keeps many idle sessions.
  private ending: Deferred.Deferred<ClosedExit> | Closing | undefined = undefined
  // What to call once closed (Peer.onClose): one slot, an array only for a second hook.
  private closeHooks: ((peer: PeerImpl) => void) | Array<(peer: PeerImpl) => void> | undefined = undefined

  constructor(
    transport: Transport.TransportShape,
    dispatcher: Peer.Dispatcher,
    context: Context.Context<never>,
    options: Peer.Options | undefined
  ) {
    super()
    this.transport = transport
    this.dispatcher = dispatcher
    this.context = context
    // Decided once per session (a tracer other than the default one; McpMetrics.Enabled): when neither is
    // on, a request costs the one branch on `observe`.
    const observe =
      (Tracing.enabled(context) ? Incoming.TRACING : 0) |
      (Context.get(context, McpMetrics.Enabled) ? Incoming.METRICS : 0)
    this.config = sharedConfig(options, Context.get(context, Clock.Clock), observe)
    this.semaphore =
      options?.maxConcurrentRequests === undefined ? undefined : Semaphore.makeUnsafe(options.maxConcurrentRequests)
  }

  // ---- spans (Tracing.Annotate, when tracing is on) ------------------------------

  annotateSpan(span: Tracer.Span, params: unknown): void {
    // The transport's session: the Streamable HTTP session a server-side Peer serves, or a client's.
    const sessionId = this.transport.sessionId?.()
    if (sessionId !== undefined) span.attribute(Tracing.Attributes.sessionId, sessionId)
    this.dispatcher.annotateSpan?.(span, params)
  }

  annotateEnd(span: Tracer.Span): void {
    // A client's transport session (Streamable HTTP) is known once `initialize` was answered: read again at the end.
    const sessionId = this.transport.sessionId?.()
    if (sessionId !== undefined) span.attribute(Tracing.Attributes.sessionId, sessionId)
  }

  // ---- the shared response timer (Timer, for the PendingTable) --------------

  // The clock of its context and what is observed of its requests: kept in its shared config, two fields
  // fewer in each idle session.
  private get clock(): Clock.Clock {
    return this.config.clock
  }
  get observe(): number {
    return this.config.observe
  }

  now(): number {
    return this.clock.currentTimeMillisUnsafe()
  }

  schedule(delayMs: number, f: () => void): () => void {
    // One Clock timer for every pending request's timeout, run in the Peer's context.
    const fiber = Effect.runForkWith(this.context)(
      Effect.andThen(this.clock.sleep(Duration.millis(delayMs)), Effect.sync(f))
    )
    return () => fiber.interruptUnsafe()
  }

  onTimeout(entry: Pending, now: number, reason: TimeoutReason): Outcome {
    return this.timedOut(entry, now, reason)
  }

  private get pending(): PendingTable {
    if (this.table === undefined) {
      const dispatcher = this.dispatcher
      const taken = dispatcher.requestIdTaken === undefined ? undefined : (id: number) => dispatcher.requestIdTaken!(id)
      this.table = new PendingTable(this, dispatcher.firstRequestId?.() ?? 1, taken)
    }
    return this.table
  }

  // ---- sending ---------------------------------------------------------------

  send(frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId): Effect.Effect<void, Transport.TransportError> {
    return relatedRequestId === undefined
      ? this.transport.send(frame)
      : this.transport.send(frame, { relatedRequestId })
  }

  sendQuietly(frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId): Effect.Effect<void> {
    // A frame the transport takes as a plain call (Transport.trySend) is sent at once.
    const transport = this.transport
    if (transport.trySend === undefined) return Effect.ignore(this.send(frame, relatedRequestId))
    return Effect.suspend(() =>
      transport.trySend!(frame, relatedRequestId) ? Effect.void : Effect.ignore(this.send(frame, relatedRequestId))
    )
  }

  // ---- outgoing requests -------------------------------------------------

  // The other side is told a request was given up, unless its method may not be
  // cancelled (the lifecycle forbids cancelling `initialize`). The caller never waits on
  // the peer for it: a transport that takes the frame as a plain call sends it at once;
  // otherwise it goes on a fiber of its own, bounded by the Peer's request timeout (an
  // HTTP server that stopped answering would hold a POST of the notice forever).
  private cancelNotice(entry: Pending, reason: string): Effect.Effect<void> {
    if (!this.dispatcher.cancellable(entry.method)) return Effect.void
    const frame = JsonRpc.notification("notifications/cancelled", { requestId: entry.id, reason })
    return Effect.suspend(() => {
      if (this.transport.trySend?.(frame, entry.relatedRequestId) === true) return Effect.void
      return Effect.asVoid(
        Effect.forkDetach(
          Effect.ignore(Effect.timeoutOption(this.send(frame, entry.relatedRequestId), this.config.timeoutMs))
        )
      )
    })
  }

  // The waiting caller runs this effect: it tells the other side, then fails.
  private timedOut(entry: Pending, now: number, reason: TimeoutReason) {
    return Effect.andThen(
      this.cancelNotice(entry, "timeout"),
      Effect.fail(
        new PeerError.RequestTimeout({
          method: entry.method,
          requestId: entry.id,
          elapsedMs: now - entry.start,
          reason
        })
      )
    )
  }

  request(method: string, params?: object, options?: Peer.CallOptions): Effect.Effect<unknown, Peer.CallError> {
    return Effect.suspend(() => this.requestNow(method, params, options))
  }

  /**
   * Starts a request now, in the running caller: sends it and returns the
   * wait for its outcome. Over a transport that takes the frame as a plain
   * call, the wait is a single suspension; the caller being interrupted
   * while it waits tells the other side (unless a response or timeout came first).
   */
  requestNow(
    method: string,
    params: object | undefined,
    options: Peer.CallOptions | undefined
  ): Effect.Effect<unknown, Peer.CallError> {
    if (this.observe !== 0) return this.observedRequest(method, params, options)
    return this.start(method, params, options, undefined)
  }

  /** A request under its span and/or timed, as tracing and metrics are on. */
  private observedRequest(
    method: string,
    params: object | undefined,
    options: Peer.CallOptions | undefined
  ): Effect.Effect<unknown, Peer.CallError> {
    const request =
      (this.observe & Incoming.TRACING) !== 0
        ? Tracing.outgoing(method, params, this, (traced, span) =>
            Effect.suspend(() => this.start(method, traced, options, span))
          )
        : Effect.suspend(() => this.start(method, params, options, undefined))
    return (this.observe & Incoming.METRICS) !== 0 ? McpMetrics.timed("client", method, params, request) : request
  }

  private start(
    method: string,
    params: object | undefined,
    options: Peer.CallOptions | undefined,
    span: Tracer.Span | undefined
  ): Effect.Effect<unknown, Peer.CallError> {
    if (this.closing !== undefined) {
      return Effect.fail(this.closedError(method))
    }
    const pending = this.pending
    const entry = pending.open(
      method,
      options?.relatedRequestId,
      options === undefined ? this.config.defaultTiming : timingOf(this.config.timeoutMs, options)
    )
    options?.onRequestId?.(entry.id)
    if (span !== undefined) Tracing.recordRequestId(span, entry.id)
    // Progress that may restart the timeout must be asked for, so the request carries a token even when
    // nobody reads the updates.
    const onProgress = options?.onProgress ?? (options?.resetTimeoutOnProgress === true ? ignoreProgress : undefined)
    if (onProgress !== undefined) {
      entry.onProgress = onProgress
      params = Inbound.withProgressToken(params, entry.id)
    }
    const frame = JsonRpc.request(entry.id, method, params as JsonRpc.Params | undefined)
    const abandon = Effect.suspend(() => this.abandon(entry))
    if (this.transport.trySend?.(frame, options?.relatedRequestId) === true) {
      // Sent as a plain call: no time passed since the request started.
      pending.startTimer(entry)
      return pending.wait(entry, abandon)
    }
    return this.sendAndWait(entry, frame, options?.relatedRequestId, abandon)
  }

  /**
   * A request whose send may take time (an HTTP POST, a write to a child that
   * stopped reading): the deadline starts before the first byte is written and
   * covers the send. The send runs on a fiber of its own so that the caller
   * leaves when the request settles (timed out, the session closed) or is
   * interrupted, whatever the send is waiting on; a send that fails settles
   * the request with its error.
   */
  private sendAndWait(
    entry: Pending,
    frame: Transport.Outgoing,
    relatedRequestId: JsonRpc.RequestId | undefined,
    abandon: Effect.Effect<void>
  ): Effect.Effect<unknown, Peer.CallError> {
    const pending = this.pending
    pending.startTimer(entry)
    if (entry.settled) return pending.wait(entry, abandon)
    const sending = Effect.catch(this.send(frame, relatedRequestId), (error) =>
      Effect.sync(() => {
        pending.settle(entry, Effect.fail(error))
      })
    )
    // Started at once, in this turn: the frame goes out as early as a send in the caller would.
    return Effect.flatMap(Effect.forkDetach(sending, { startImmediately: true }), (fiber) =>
      Effect.onExit(
        pending.wait(
          entry,
          Effect.andThen(
            Effect.sync(() => fiber.interruptUnsafe()),
            abandon
          )
        ),
        // A request that ended without its answer (timed out, the session closed) stops its send.
        (exit) => (Exit.isFailure(exit) ? Effect.sync(() => fiber.interruptUnsafe()) : Effect.void)
      )
    )
  }

  /** The caller gave up: the request leaves the table, and the other side is told unless it was decided. */
  private abandon(entry: Pending): Effect.Effect<void> {
    return this.pending.abandon(entry) ? this.cancelNotice(entry, "request interrupted by caller") : Effect.void
  }

  requestWithProgress(
    method: string,
    params?: object,
    options?: Omit<Peer.CallOptions, "onProgress">
  ): Stream.Stream<Peer.ProgressEvent, Peer.CallError> {
    return ProgressStream.make((onProgress) => this.request(method, params, { ...options, onProgress }))
  }

  notify(
    method: string,
    params?: object,
    options?: Transport.SendOptions
  ): Effect.Effect<void, Transport.TransportError> {
    return this.transport.send(JsonRpc.notification(method, params as JsonRpc.Params | undefined), options)
  }

  ping(options?: Peer.CallOptions): Effect.Effect<void, Peer.CallError> {
    return Effect.asVoid(this.request("ping", undefined, options))
  }

  get closed(): Effect.Effect<ClosedExit> {
    return Effect.suspend(() => {
      const ending = this.ending
      if (ending instanceof Closing) return Effect.succeed(ending.exit)
      const signal = ending ?? Deferred.makeUnsafe<ClosedExit>()
      this.ending = signal
      return Deferred.await(signal)
    })
  }

  /** How the Peer closed; undefined while it is open. */
  private get closing(): Closing | undefined {
    const ending = this.ending
    return ending instanceof Closing ? ending : undefined
  }

  // ---- incoming frames -----------------------------------------------------

  private onResponse(response: JsonRpc.Response): undefined {
    const table = this.table
    const entry = response.id === null ? undefined : table?.get(response.id)
    // A response for a request we gave up on (cancelled, timed out) is dropped.
    if (entry === undefined || entry.settled) return undefined
    table!.settle(
      entry,
      JsonRpc.isSuccess(response) ? Exit.succeed(response.result) : Exit.fail(McpError.fromErrorObject(response.error))
    )
    return undefined
  }

  private onCancelled(params: unknown): undefined {
    const requestId = Inbound.cancelledRequestId(params)
    if (requestId !== undefined) this.cancelIncoming(requestId)
    return undefined
  }

  private onProgress(params: unknown): Effect.Effect<void> | undefined {
    const parsed = Inbound.progressOf(params)
    if (parsed === undefined) return undefined
    const entry = this.table?.get(parsed.token)
    if (entry === undefined || entry.settled || entry.onProgress === undefined) return undefined
    if (!(parsed.update.progress > entry.lastProgress)) {
      return Effect.logDebug(`dropped non-increasing progress ${parsed.update.progress} for request ${entry.id}`)
    }
    // Synchronous, so an update is delivered before a response in the same chunk.
    entry.lastProgress = parsed.update.progress
    entry.lastProgressAt = this.clock.currentTimeMillisUnsafe()
    entry.onProgress(parsed.update)
    return undefined
  }

  onSingle(message: JsonRpc.Message): Effect.Effect<void> | undefined {
    if (JsonRpc.isRequest(message)) return this.serve(message, undefined)
    if (JsonRpc.isNotification(message)) {
      switch (message.method) {
        case "notifications/cancelled":
          return this.onCancelled(message.params)
        case "notifications/progress":
          return this.onProgress(message.params)
        default:
          return this.dispatcher.notification(message)
      }
    }
    return this.onResponse(message)
  }

  /**
   * A frame that could not be decoded is answered with its error, unless it
   * was a response too large to take: the request it answered fails at once,
   * naming the limit, and nothing is sent back.
   */
  private onUndecodable(failure: JsonRpcCodec.DecodeFailure): Effect.Effect<void> | undefined {
    const responseId = failure.responseId
    if (responseId === undefined) return this.sendQuietly(failure.toResponse())
    const entry = this.table?.get(responseId)
    if (entry !== undefined && !entry.settled) {
      const error = new McpError.InternalError({
        message: `the response to ${entry.method} could not be received: ${failure.message}`
      })
      this.table!.settle(entry, Exit.fail(error))
    }
    return undefined
  }

  onFrame(frame: Transport.Incoming): Effect.Effect<void> | undefined {
    if (Result.isFailure(frame)) return this.onUndecodable(frame.failure)
    const decoded = frame.success
    if (!JsonRpcCodec.isBatch(decoded)) return this.onSingle(decoded)
    const refused = this.dispatcher.refuseBatch()
    if (refused !== undefined) return this.sendQuietly(JsonRpc.failure(null, McpError.toErrorObject(refused)))
    return this.serveBatch(decoded)
  }

  /**
   * Handles frames in order. Frames are handled synchronously where possible;
   * an effectful one (a notification handler, a batch) completes before the
   * next is handled, so arrival order is kept.
   */
  handleFrom(frames: ReadonlyArray<Transport.Incoming>, start: number): Effect.Effect<void> {
    for (let i = start; i < frames.length; i++) {
      const effect = this.onFrame(frames[i]!)
      if (effect !== undefined)
        return Effect.andThen(
          effect,
          Effect.suspend(() => this.handleFrom(frames, i + 1))
        )
    }
    return Effect.void
  }

  // ---- lifecycle -------------------------------------------------------------

  /** What a request learns when the session is closed: the reason, and the transport's failure if it failed. */
  private closedError(method: string): PeerError.SessionClosed {
    const exit = this.closing?.exit
    const failure = exit === undefined || Exit.isSuccess(exit) ? undefined : Cause.findErrorOption(exit.cause)
    const reason = this.closing?.reason ?? "closed"
    return failure === undefined || failure._tag === "None"
      ? new PeerError.SessionClosed({ method, reason })
      : new PeerError.SessionClosed({ method, reason, cause: failure.value })
  }

  /** Closes at once: pending calls fail, handlers are told to stop (`stopping`), waiters learn the exit. */
  private close(reason: string, exit: ClosedExit): void {
    const signal = this.ending
    if (signal instanceof Closing) return
    const closing = new Closing(reason, exit)
    this.ending = closing
    this.table?.failAll((entry) => this.closedError(entry.method))
    const fibers: Array<Fiber.Fiber<unknown, unknown>> = []
    this.takeFibers(fibers)
    // Pushed frames stop with the Peer, as a read loop would (a Peer read by its loop has none).
    const drainer = this.stopInput(exit)
    if (drainer !== undefined) fibers.push(drainer)
    closing.stopping = fibers
    // Before the waiters of `closed` learn it: a waiter may resume at once and expect the owner to know.
    const hooks = this.closeHooks
    this.closeHooks = undefined
    if (typeof hooks === "function") hooks(this)
    else if (hooks !== undefined) for (const hook of hooks) hook(this)
    if (signal !== undefined) Deferred.doneUnsafe(signal, Exit.succeed(exit))
  }

  onClose(hook: (peer: PeerImpl) => void): void {
    if (this.closing !== undefined) {
      hook(this)
      return
    }
    const hooks = this.closeHooks
    this.closeHooks = hooks === undefined ? hook : typeof hooks === "function" ? [hooks, hook] : [...hooks, hook]
  }

  inputFinished(exit: ClosedExit): void {
    this.close(Exit.isSuccess(exit) ? "transport ended" : "transport failed", exit)
    for (const fiber of this.closing!.stopping) fiber.interruptUnsafe()
  }

  /** The finalizer of the scope the Peer was made in. */
  scopeClosed(): Effect.Effect<void> {
    return this.shutdown("session scope closed", Exit.void)
  }

  // Every caller of shutdown (read loop end, scope finalizer) waits for the same
  // handler fibers to finish, so a scope close returns only after their finalizers ran.
  shutdown(reason: string, exit: ClosedExit): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.close(reason, exit)
      const stopping = this.closing!.stopping
      return stopping.length === 0 ? Effect.void : Fiber.interruptAll(stopping)
    })
  }
}
