/**
 * The JSON-RPC endpoint both roles share. It owns request ids, the table of
 * pending outgoing requests (timeouts, progress, cancellation), and one fiber
 * per incoming request (cancellation interrupts it). What a request means is
 * the Dispatcher's business: the Peer has no idea whether it is a client or a
 * server.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as CurrentRequest from "./CurrentRequest.ts"
import * as Inbound from "./internal/inbound.ts"
import * as PeerInput from "./internal/peerInput.ts"
import {
  type Outcome,
  type Pending,
  PendingTable,
  type TimeoutReason,
  type Timer,
  type Timing
} from "./internal/pending.ts"
import * as PeerError from "./PeerError.ts"
import type * as Transport from "./Transport.ts"

/** What the session above the Peer decides for each incoming message. */
export interface Dispatcher {
  /**
   * Serves one incoming request; runs in the request's own fiber. `served`
   * belongs to the request: the dispatcher records in it the revision the
   * request is served in, so an error takes that revision's code.
   */
  readonly request: (
    request: JsonRpc.Request,
    served: Served
  ) => Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest>
  /** Handles one incoming notification (other than cancellation and progress), in arrival order. */
  readonly notification: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /** Whether a batch frame is acceptable now (the negotiated revision allows batches). */
  readonly acceptsBatch: () => boolean
  /** Whether `notifications/cancelled` may interrupt a request of this method (`initialize` may not). */
  readonly cancellable: (method: string) => boolean
}

/** What a dispatcher records about a request it serves. */
export interface Served {
  revision: ProtocolVersion | undefined
}

/** Settings of a Peer: request timeout, concurrency of incoming requests, keepalive. */
export interface Options {
  /** Default timeout of outgoing requests. Default 60 seconds. */
  readonly requestTimeout?: Duration.Input | undefined
  /** Maximum incoming requests served at once; the rest wait. Default unbounded. */
  readonly maxConcurrentRequests?: number | undefined
  /** Ping the other side on this schedule; a ping that fails or times out closes the Peer. */
  readonly keepalive?: { readonly schedule: Schedule.Schedule<unknown>; readonly timeout: Duration.Input } | undefined
}

/** Settings of one outgoing request. */
export interface CallOptions {
  /** Overrides the Peer's default timeout for this call. */
  readonly timeout?: Duration.Input | undefined
  /** Each progress notification restarts the timeout (the request then carries a progress token). */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** An upper bound that progress cannot extend. */
  readonly maxTotalTimeout?: Duration.Input | undefined
  /** Receives increasing progress updates; asking for them adds a progress token to the request. */
  readonly onProgress?: ((update: CurrentRequest.ProgressUpdate) => void) | undefined
  /** Routing hint for transports (the incoming request this one is made on behalf of). */
  readonly relatedRequestId?: JsonRpc.RequestId | undefined
  /** Learns the id the request is sent with (to match notifications that refer to it). */
  readonly onRequestId?: ((id: JsonRpc.RequestId) => void) | undefined
}

/** What an outgoing request can fail with. */
export type CallError =
  | McpError.McpError
  | PeerError.RequestTimeout
  | PeerError.SessionClosed
  | Transport.TransportError

/** An element of a request made "with progress": updates, then the result. */
export type ProgressEvent<A = unknown> =
  | { readonly _tag: "Progress"; readonly update: CurrentRequest.ProgressUpdate }
  | { readonly _tag: "Result"; readonly value: A }

/** A JSON-RPC endpoint, the same for clients and servers: outgoing requests with deadlines and progress, incoming requests each in a fiber of its own. */
export interface Peer {
  /** Sends a request and waits for its result; interrupting the wait sends `notifications/cancelled`. */
  readonly request: (
    method: string,
    params?: object | undefined,
    options?: CallOptions
  ) => Effect.Effect<unknown, CallError>
  /**
   * `request`, started when called rather than when run: for callers already
   * running in the requesting fiber (inside `Effect.suspend`), one step cheaper.
   * The returned effect waits for the outcome; run it once.
   */
  readonly requestNow: (
    method: string,
    params: object | undefined,
    options: CallOptions | undefined
  ) => Effect.Effect<unknown, CallError>
  /** The request as a Stream of progress updates that ends with the result. */
  readonly requestWithProgress: (
    method: string,
    params?: object | undefined,
    options?: Omit<CallOptions, "onProgress">
  ) => Stream.Stream<ProgressEvent, CallError>
  /** Sends a notification. */
  readonly notify: (
    method: string,
    params?: object | undefined,
    options?: Transport.SendOptions
  ) => Effect.Effect<void, Transport.TransportError>
  /** Sends `ping` and waits for the answer. */
  readonly ping: (options?: CallOptions) => Effect.Effect<void, CallError>
  /** Completes when the Peer has closed: transport end, failure, keepalive loss or scope close. */
  readonly closed: Effect.Effect<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>
  /** Number of incoming requests being served (for tests and metrics). */
  readonly inFlight: () => number
}

interface InFlight extends Served {
  readonly id: JsonRpc.RequestId
  readonly method: string
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  responded: boolean
}

type ClosedExit = PeerInput.ClosedExit

type SendNow = (frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId) => boolean

const defaultTimeout = Duration.seconds(60)

/** The progress callback of a request that asked for progress only to restart its timeout. */
const ignoreProgress = (): void => {}

/** What a Peer derives from its options: the same for every Peer made with the same options. */
interface Config {
  readonly timeoutMs: number
  readonly defaultTiming: Timing
}
const timingOf = (timeoutMs: number, options: CallOptions | undefined): Timing => ({
  idleMs: options?.timeout === undefined ? timeoutMs : Duration.toMillis(Duration.fromInputUnsafe(options.timeout)),
  totalMs:
    options?.maxTotalTimeout === undefined
      ? Number.POSITIVE_INFINITY
      : Duration.toMillis(Duration.fromInputUnsafe(options.maxTotalTimeout)),
  resetOnProgress: options?.resetTimeoutOnProgress === true
})
const configOf = (options: Options | undefined): Config => {
  const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options?.requestTimeout ?? defaultTimeout))
  return { timeoutMs, defaultTiming: timingOf(timeoutMs, undefined) }
}
const defaultConfig = configOf(undefined)
const configs = new WeakMap<Options, Config>()
const sharedConfig = (options: Options | undefined): Config => {
  if (options === undefined) return defaultConfig
  let config = configs.get(options)
  if (config === undefined) {
    config = configOf(options)
    configs.set(options, config)
  }
  return config
}

const noFibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>> = []

/** One incoming request's `CurrentRequest`: its behaviour on the prototype. */
class Current implements CurrentRequest.CurrentRequestShape {
  readonly id: JsonRpc.RequestId
  readonly method: string
  private readonly peer: PeerImpl
  private readonly entry: InFlight
  private readonly params: JsonRpc.Request["params"]
  private last = Number.NEGATIVE_INFINITY

  constructor(peer: PeerImpl, request: JsonRpc.Request, entry: InFlight) {
    this.peer = peer
    this.entry = entry
    this.id = request.id
    this.method = request.method
    this.params = request.params
  }

  // Read from the params when asked: most requests never report progress.
  get progressToken(): CurrentRequest.ProgressToken | undefined {
    return Inbound.progressTokenOf(this.params)
  }

  progress(update: CurrentRequest.ProgressUpdate): Effect.Effect<void> {
    return Effect.suspend(() => {
      const progressToken = this.progressToken
      if (progressToken === undefined || this.entry.responded) return Effect.void
      if (!(update.progress > this.last)) {
        return Effect.logDebug(`dropped non-increasing progress ${update.progress} for request ${this.id}`)
      }
      this.last = update.progress
      return this.peer.sendQuietly(
        JsonRpc.notification("notifications/progress", Inbound.progressParams(progressToken, update) as JsonRpc.Params),
        this.id
      )
    })
  }

  notify(method: string, params?: object): Effect.Effect<void> {
    return this.peer.sendQuietly(JsonRpc.notification(method, params as JsonRpc.Params | undefined), this.id)
  }
}

/**
 * The Peer: one object whose behaviour is on the prototype. What only some
 * sessions need (the table of outgoing requests and its timer, the table of
 * requests in flight, the close signal) is made when first needed, so an idle
 * session costs little.
 */
class PeerImpl implements Peer, Timer, PeerInput.Host {
  private readonly transport: Transport.TransportShape
  private readonly dispatcher: Dispatcher
  readonly context: Context.Context<never>
  private readonly clock: Clock.Clock
  private readonly config: Config
  private readonly semaphore: Semaphore.Semaphore | undefined
  // Sends a frame as a plain call, when the transport can (Transport.trySend).
  private readonly sendNow: SendNow | undefined
  private table: PendingTable | undefined = undefined
  // Requests in flight: most sessions serve one at a time, so the first needs no table.
  private solo: InFlight | undefined = undefined
  private inflight: Map<JsonRpc.RequestId, InFlight> | undefined = undefined
  private signal: Deferred.Deferred<ClosedExit> | undefined = undefined
  private closedExit: ClosedExit | undefined = undefined
  private closeReason: string | undefined = undefined
  // Every caller of shutdown waits for the same handler fibers to finish, so
  // a scope close returns only after their finalizers ran.
  private stopping: ReadonlyArray<Fiber.Fiber<unknown, unknown>> = noFibers
  // The pushed input, when the transport pushes frames (Transport.attach).
  input: PeerInput.PeerInput | undefined = undefined

  constructor(
    transport: Transport.TransportShape,
    dispatcher: Dispatcher,
    context: Context.Context<never>,
    options: Options | undefined
  ) {
    this.transport = transport
    this.dispatcher = dispatcher
    this.context = context
    this.clock = Context.get(context, Clock.Clock)
    this.config = sharedConfig(options)
    this.sendNow = transport.trySend === undefined ? undefined : transport.trySend.bind(transport)
    this.semaphore =
      options?.maxConcurrentRequests === undefined ? undefined : Semaphore.makeUnsafe(options.maxConcurrentRequests)
  }

  // ---- the shared response timer (Timer, for the PendingTable) --------------

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
    if (this.table === undefined) this.table = new PendingTable(this)
    return this.table
  }

  // ---- sending ---------------------------------------------------------------

  send(frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId): Effect.Effect<void, Transport.TransportError> {
    return relatedRequestId === undefined
      ? this.transport.send(frame)
      : this.transport.send(frame, { relatedRequestId })
  }

  sendQuietly(frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId): Effect.Effect<void> {
    const sendNow = this.sendNow
    if (sendNow === undefined) return Effect.ignore(this.send(frame, relatedRequestId))
    return Effect.suspend(() =>
      sendNow(frame, relatedRequestId) ? Effect.void : Effect.ignore(this.send(frame, relatedRequestId))
    )
  }

  private respondSingle(response: JsonRpc.Response): Effect.Effect<void> {
    return Effect.uninterruptible(this.sendQuietly(response, response.id ?? undefined))
  }

  // ---- incoming requests -------------------------------------------------

  private lookup(id: JsonRpc.RequestId): InFlight | undefined {
    const solo = this.solo
    return solo !== undefined && solo.id === id ? solo : this.inflight?.get(id)
  }

  private register(entry: InFlight): void {
    if (this.solo === undefined) this.solo = entry
    else {
      if (this.inflight === undefined) this.inflight = new Map()
      this.inflight.set(entry.id, entry)
    }
  }

  private unregister(entry: InFlight): void {
    if (this.solo === entry) this.solo = undefined
    else if (this.inflight?.get(entry.id) === entry) this.inflight.delete(entry.id)
  }

  /**
   * Serves one request in its own fiber. The response goes to `respond` (to
   * the transport when undefined) unless the fiber is interrupted
   * (cancelled): then nothing is answered.
   */
  private serve(
    request: JsonRpc.Request,
    respond: ((response: JsonRpc.Response) => Effect.Effect<void>) | undefined
  ): Effect.Effect<void> | undefined {
    if (this.lookup(request.id) !== undefined) {
      const refusal = JsonRpc.failure(
        request.id,
        McpError.toErrorObject(
          new McpError.InvalidRequest({ message: `request id ${String(request.id)} is already in flight` })
        )
      )
      return respond === undefined ? this.respondSingle(refusal) : respond(refusal)
    }
    const entry: InFlight = {
      id: request.id,
      method: request.method,
      fiber: undefined,
      responded: false,
      revision: undefined
    }
    const current = new Current(this, request, entry)
    // In process the response is taken as a plain call when the fiber ends, so
    // the fiber runs the handler alone; otherwise the fiber sends it itself.
    const sendNow = respond === undefined ? this.sendNow : undefined
    let handler = this.dispatcher.request(request, entry)
    if (sendNow === undefined)
      handler = Effect.matchCauseEffect(handler, {
        onSuccess: (result) => {
          entry.responded = true
          const response = JsonRpc.success(request.id, result)
          return respond === undefined ? this.respondSingle(response) : respond(response)
        },
        onFailure: (cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.void
          entry.responded = true
          const response = JsonRpc.failure(
            request.id,
            Inbound.errorObjectOf(cause, entry.revision, request.method, this.context)
          )
          return respond === undefined ? this.respondSingle(response) : respond(response)
        }
      })
    if (this.semaphore !== undefined) handler = this.semaphore.withPermit(handler)
    // The fiber registers itself as its first step: a handler may resume other
    // fibers synchronously (completing a Deferred) before runFork returns.
    this.register(entry)
    // The fiber starts with CurrentRequest in its context (cheaper than providing it).
    const fiber = Effect.runForkWith(Context.add(this.context, CurrentRequest.CurrentRequest, current))(
      Effect.withFiber((self) => {
        entry.fiber = self
        return handler
      })
    )
    fiber.addObserver(
      sendNow === undefined ? () => this.unregister(entry) : (exit) => this.answer(entry, exit, sendNow)
    )
    return undefined
  }

  /** Answers a request whose fiber ended, unless it was interrupted (cancelled). */
  private answer(entry: InFlight, exit: Exit.Exit<unknown, McpError.McpError>, sendNow: SendNow): void {
    this.unregister(entry)
    if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return
    entry.responded = true
    const response = Exit.isSuccess(exit)
      ? JsonRpc.success(entry.id, exit.value)
      : JsonRpc.failure(entry.id, Inbound.errorObjectOf(exit.cause, entry.revision, entry.method, this.context))
    // No room: the response waits for it in a fiber of its own, behind the frames already waiting.
    if (!sendNow(response)) Effect.runForkWith(this.context)(this.respondSingle(response))
  }

  private serveBatch(entries: JsonRpcCodec.DecodedBatch): Effect.Effect<void> {
    const responses: Array<JsonRpc.Response> = []
    const finish = () => (responses.length === 0 ? Effect.void : this.sendQuietly(responses))
    const collect = (response: JsonRpc.Response) =>
      Effect.sync(() => {
        responses.push(response)
      })
    const fibers: Array<Fiber.Fiber<unknown, unknown>> = []
    for (const item of entries) {
      if (JsonRpcCodec.isDecodeFailure(item)) {
        responses.push(item.toResponse())
      } else if (JsonRpc.isRequest(item)) {
        if (item.method === "initialize") {
          responses.push(
            JsonRpc.failure(
              item.id,
              McpError.toErrorObject(new McpError.InvalidRequest({ message: "initialize must not be part of a batch" }))
            )
          )
          continue
        }
        const refused = this.serve(item, collect)
        if (refused !== undefined) fibers.push(Effect.runForkWith(this.context)(refused))
        const running = this.lookup(item.id)?.fiber
        if (running !== undefined) fibers.push(running)
      } else {
        // Notifications and responses inside a batch need no reply.
        const effect = this.onSingle(item)
        if (effect !== undefined) fibers.push(Effect.runForkWith(this.context)(effect))
      }
    }
    if (fibers.length === 0) return finish()
    return Effect.andThen(Fiber.awaitAll(fibers), Effect.suspend(finish))
  }

  // ---- outgoing requests -------------------------------------------------

  private cancelNotice(entry: Pending, reason: string): Effect.Effect<void> {
    return this.sendQuietly(
      JsonRpc.notification("notifications/cancelled", { requestId: entry.id, reason }),
      entry.relatedRequestId
    )
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

  request(method: string, params?: object, options?: CallOptions): Effect.Effect<unknown, CallError> {
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
    options: CallOptions | undefined
  ): Effect.Effect<unknown, CallError> {
    if (this.closeReason !== undefined) {
      return Effect.fail(this.closedError(method))
    }
    const pending = this.pending
    const entry = pending.open(
      method,
      options?.relatedRequestId,
      options === undefined ? this.config.defaultTiming : timingOf(this.config.timeoutMs, options)
    )
    options?.onRequestId?.(entry.id)
    // Progress that may restart the timeout must be asked for, so the request carries a token even when
    // nobody reads the updates.
    const onProgress = options?.onProgress ?? (options?.resetTimeoutOnProgress === true ? ignoreProgress : undefined)
    if (onProgress !== undefined) {
      entry.onProgress = onProgress
      params = Inbound.withProgressToken(params, entry.id)
    }
    const frame = JsonRpc.request(entry.id, method, params as JsonRpc.Params | undefined)
    const abandon = Effect.suspend(() => this.abandon(entry))
    if (this.sendNow?.(frame, options?.relatedRequestId) === true) {
      pending.startTimer(entry)
      return pending.wait(entry, abandon)
    }
    return Effect.onExit(
      Effect.andThen(
        this.send(frame, options?.relatedRequestId),
        Effect.suspend(() => {
          pending.startTimer(entry)
          return pending.wait(entry, abandon)
        })
      ),
      (exit) => {
        if (Exit.isSuccess(exit) || entry.settled) return Effect.void
        if (Cause.hasInterrupts(exit.cause)) return this.abandon(entry)
        pending.abandon(entry)
        return Effect.void
      }
    )
  }

  /** The caller gave up: the request leaves the table, and the other side is told unless it was decided. */
  private abandon(entry: Pending): Effect.Effect<void> {
    return this.pending.abandon(entry) ? this.cancelNotice(entry, "request interrupted by caller") : Effect.void
  }

  requestWithProgress(
    method: string,
    params?: object,
    options?: Omit<CallOptions, "onProgress">
  ): Stream.Stream<ProgressEvent, CallError> {
    return Stream.callback<ProgressEvent, CallError>((queue) =>
      this.request(method, params, {
        ...options,
        onProgress: (update) => {
          Queue.offerUnsafe(queue, { _tag: "Progress", update })
        }
      }).pipe(
        Effect.matchCauseEffect({
          onSuccess: (value) => Effect.andThen(Queue.offer(queue, { _tag: "Result", value }), Queue.end(queue)),
          onFailure: (cause) => Queue.failCause(queue, cause)
        }),
        Effect.forkScoped
      )
    )
  }

  notify(
    method: string,
    params?: object,
    options?: Transport.SendOptions
  ): Effect.Effect<void, Transport.TransportError> {
    return this.transport.send(JsonRpc.notification(method, params as JsonRpc.Params | undefined), options)
  }

  ping(options?: CallOptions): Effect.Effect<void, CallError> {
    return Effect.asVoid(this.request("ping", undefined, options))
  }

  get closed(): Effect.Effect<ClosedExit> {
    return Effect.suspend(() => {
      if (this.closedExit !== undefined) return Effect.succeed(this.closedExit)
      if (this.signal === undefined) this.signal = Deferred.makeUnsafe()
      return Deferred.await(this.signal)
    })
  }

  inFlight(): number {
    return (this.solo === undefined ? 0 : 1) + (this.inflight?.size ?? 0)
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
    if (requestId === undefined) return undefined
    const entry = this.lookup(requestId)
    // Unknown or finished ids are ignored, as the spec asks.
    if (entry === undefined || entry.responded || !this.dispatcher.cancellable(entry.method)) return undefined
    this.unregister(entry)
    entry.fiber?.interruptUnsafe()
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

  private onSingle(message: JsonRpc.Message): Effect.Effect<void> | undefined {
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

  onFrame(frame: Transport.Incoming): Effect.Effect<void> | undefined {
    if (Result.isFailure(frame)) return this.sendQuietly(frame.failure.toResponse())
    const decoded = frame.success
    if (!JsonRpcCodec.isBatch(decoded)) return this.onSingle(decoded)
    if (!this.dispatcher.acceptsBatch()) {
      return this.sendQuietly(
        JsonRpc.failure(
          null,
          McpError.toErrorObject(new McpError.InvalidRequest({ message: "batches are not supported by this revision" }))
        )
      )
    }
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

  /** Closes at once: pending calls fail, handlers are told to stop (`stopping`), waiters learn the exit. */
  /** What a request learns when the session is closed: the reason, and the transport's failure if it failed. */
  private closedError(method: string): PeerError.SessionClosed {
    const exit = this.closedExit
    const failure = exit === undefined || Exit.isSuccess(exit) ? undefined : Cause.findErrorOption(exit.cause)
    const reason = this.closeReason ?? "closed"
    return failure === undefined || failure._tag === "None"
      ? new PeerError.SessionClosed({ method, reason })
      : new PeerError.SessionClosed({ method, reason, cause: failure.value })
  }

  private close(reason: string, exit: ClosedExit): void {
    if (this.closeReason !== undefined) return
    this.closeReason = reason
    this.closedExit = exit
    this.table?.failAll((entry) => this.closedError(entry.method))
    const fibers: Array<Fiber.Fiber<unknown, unknown>> = []
    if (this.solo?.fiber !== undefined) fibers.push(this.solo.fiber)
    this.solo = undefined
    if (this.inflight !== undefined) {
      for (const entry of this.inflight.values()) if (entry.fiber !== undefined) fibers.push(entry.fiber)
      this.inflight.clear()
    }
    // Pushed frames stop with the Peer, as a read loop would.
    const drainer = this.input?.stop(exit)
    if (drainer !== undefined) fibers.push(drainer)
    this.stopping = fibers
    this.closedExit = exit
    if (this.signal !== undefined) Deferred.doneUnsafe(this.signal, Exit.succeed(exit))
  }

  inputFinished(exit: ClosedExit): void {
    this.close(Exit.isSuccess(exit) ? "transport ended" : "transport failed", exit)
    for (const fiber of this.stopping) fiber.interruptUnsafe()
  }

  // Every caller of shutdown (read loop end, scope finalizer) waits for the same
  // handler fibers to finish, so a scope close returns only after their finalizers ran.
  shutdown(reason: string, exit: ClosedExit): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.close(reason, exit)
      return this.stopping.length === 0 ? Effect.void : Fiber.interruptAll(this.stopping)
    })
  }
}

/**
 * Starts a Peer over a transport. The read loop (unless the transport pushes
 * frames) and every request fiber live in the given scope: closing it
 * interrupts them (finalizers run) and fails pending outgoing requests with
 * `SessionClosed`.
 */
export const make = Effect.fnUntraced(function* (
  transport: Transport.TransportShape,
  dispatcher: Dispatcher,
  options?: Options
): Effect.fn.Return<Peer, never, Scope.Scope> {
  const peer = new PeerImpl(transport, dispatcher, yield* Effect.context<never>(), options)

  // A transport that pushes frames needs no reader waiting while the connection is idle.
  const input = transport.attach === undefined ? undefined : new PeerInput.PeerInput(peer)
  if (input !== undefined && transport.attach!(input)) peer.input = input
  else {
    yield* Stream.runForEachArray(transport.incoming, (frames) => peer.handleFrom(frames, 0)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => peer.shutdown(Exit.isSuccess(exit) ? "transport ended" : "transport failed", exit)),
      Effect.forkScoped
    )
  }
  // Bound, not a closure over the session's services: a server holds many idle sessions.
  yield* Scope.addFinalizerExit(yield* Scope.Scope, peer.shutdown.bind(peer, "session scope closed", Exit.void))

  if (options?.keepalive !== undefined) {
    const keepalive = options.keepalive
    let missed = 0
    let first = true
    // The first run is skipped so pings start one schedule step after the session does.
    const step = Effect.suspend(() =>
      first ? Effect.sync(() => (first = false)) : peer.ping({ timeout: keepalive.timeout })
    )
    yield* step.pipe(
      Effect.tap(() => Effect.sync(() => (missed = 0))),
      Effect.tapError(() => Effect.sync(() => missed++)),
      Effect.repeat(keepalive.schedule),
      Effect.catch(() => peer.shutdown("keepalive failed", Exit.fail(new PeerError.KeepaliveFailed({ missed })))),
      Effect.forkScoped
    )
  }

  return peer as Peer
})
