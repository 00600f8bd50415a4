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
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as CurrentRequest from "./CurrentRequest.ts"
import * as Inbound from "./internal/inbound.ts"
import { type Pending, PendingTable, type TimeoutReason, type Timing } from "./internal/pending.ts"
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

export interface Options {
  /** Default timeout of outgoing requests. Default 60 seconds. */
  readonly requestTimeout?: Duration.Input | undefined
  /** Maximum incoming requests served at once; the rest wait. Default unbounded. */
  readonly maxConcurrentRequests?: number | undefined
  /** Ping the other side on this schedule; a ping that fails or times out closes the Peer. */
  readonly keepalive?: { readonly schedule: Schedule.Schedule<unknown>; readonly timeout: Duration.Input } | undefined
}

export interface CallOptions {
  /** Overrides the Peer's default timeout for this call. */
  readonly timeout?: Duration.Input | undefined
  /** Each progress notification restarts the timeout. */
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

export type CallError =
  | McpError.McpError
  | PeerError.RequestTimeout
  | PeerError.SessionClosed
  | Transport.TransportError

/** An element of a request made "with progress": updates, then the result. */
export type ProgressEvent<A = unknown> =
  | { readonly _tag: "Progress"; readonly update: CurrentRequest.ProgressUpdate }
  | { readonly _tag: "Result"; readonly value: A }

export interface Peer {
  readonly request: (
    method: string,
    params?: object | undefined,
    options?: CallOptions
  ) => Effect.Effect<unknown, CallError>
  /** The request as a Stream of progress updates that ends with the result. */
  readonly requestWithProgress: (
    method: string,
    params?: object | undefined,
    options?: Omit<CallOptions, "onProgress">
  ) => Stream.Stream<ProgressEvent, CallError>
  readonly notify: (
    method: string,
    params?: object | undefined,
    options?: Transport.SendOptions
  ) => Effect.Effect<void, Transport.TransportError>
  readonly ping: (options?: CallOptions) => Effect.Effect<void, CallError>
  /** Completes when the Peer has closed: transport end, failure, keepalive loss or scope close. */
  readonly closed: Effect.Effect<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>
  /** Number of incoming requests being served (for tests and metrics). */
  readonly inFlight: () => number
}

interface InFlight extends Served {
  readonly method: string
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  responded: boolean
}

const defaultTimeout = Duration.seconds(60)

/**
 * Starts a Peer over a transport. The read loop and every request fiber live
 * in the given scope: closing it interrupts them (finalizers run) and fails
 * pending outgoing requests with `SessionClosed`.
 */
export const make = Effect.fnUntraced(function* (
  transport: Transport.TransportShape,
  dispatcher: Dispatcher,
  options?: Options
): Effect.fn.Return<Peer, never, Scope.Scope> {
  const context = yield* Effect.context<never>()
  const clock = yield* Clock.Clock
  const runFork = Effect.runForkWith(context)
  const semaphore =
    options?.maxConcurrentRequests === undefined ? undefined : Semaphore.makeUnsafe(options.maxConcurrentRequests)
  const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options?.requestTimeout ?? defaultTimeout))
  // One Clock timer for every pending request's timeout, run in the Peer's context.
  const pending = new PendingTable({
    now: () => clock.currentTimeMillisUnsafe(),
    schedule: (delayMs, f) => {
      const fiber = runFork(Effect.andThen(clock.sleep(Duration.millis(delayMs)), Effect.sync(f)))
      return () => fiber.interruptUnsafe()
    },
    onTimeout: (entry, now, reason) => {
      Deferred.doneUnsafe(entry.deferred, timedOut(entry, now, reason))
    }
  })
  const inflight = new Map<JsonRpc.RequestId, InFlight>()
  const closedSignal = Deferred.makeUnsafe<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>()
  let closeReason: string | undefined

  const send = (frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId) =>
    relatedRequestId === undefined ? transport.send(frame) : transport.send(frame, { relatedRequestId })

  const sendQuietly = (frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId) =>
    Effect.ignore(send(frame, relatedRequestId))

  // ---- incoming requests -------------------------------------------------

  const requestContext = (request: JsonRpc.Request, entry: InFlight): CurrentRequest.CurrentRequestShape => {
    const progressToken = Inbound.progressTokenOf(request.params)
    let last = Number.NEGATIVE_INFINITY
    return {
      id: request.id,
      method: request.method,
      progressToken,
      progress: (update) =>
        Effect.suspend(() => {
          if (progressToken === undefined || entry.responded) return Effect.void
          if (!(update.progress > last)) {
            return Effect.logDebug(`dropped non-increasing progress ${update.progress} for request ${request.id}`)
          }
          last = update.progress
          return sendQuietly(
            JsonRpc.notification(
              "notifications/progress",
              Inbound.progressParams(progressToken, update) as JsonRpc.Params
            ),
            request.id
          )
        }),
      notify: (method, params) =>
        sendQuietly(JsonRpc.notification(method, params as JsonRpc.Params | undefined), request.id)
    }
  }

  /**
   * Serves one request in its own fiber. `respond` receives the response
   * unless the fiber is interrupted (cancelled): then nothing is answered.
   */
  const serve = (request: JsonRpc.Request, respond: (response: JsonRpc.Response) => Effect.Effect<void>) => {
    if (inflight.has(request.id)) {
      return respond(
        JsonRpc.failure(
          request.id,
          McpError.toErrorObject(
            new McpError.InvalidRequest({ message: `request id ${String(request.id)} is already in flight` })
          )
        )
      )
    }
    const entry: InFlight = { method: request.method, fiber: undefined, responded: false, revision: undefined }
    const current = requestContext(request, entry)
    let handler = Effect.matchCauseEffect(dispatcher.request(request, entry), {
      onSuccess: (result) => {
        entry.responded = true
        return respond(JsonRpc.success(request.id, result))
      },
      onFailure: (cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.void
        entry.responded = true
        return respond(JsonRpc.failure(request.id, Inbound.errorObjectOf(cause, entry.revision)))
      }
    })
    if (semaphore !== undefined) handler = semaphore.withPermit(handler)
    // The fiber registers itself as its first step: a handler may resume other
    // fibers synchronously (completing a Deferred) before runFork returns.
    inflight.set(request.id, entry)
    // The fiber starts with CurrentRequest in its context (cheaper than providing it).
    const fiber = Effect.runForkWith(Context.add(context, CurrentRequest.CurrentRequest, current))(
      Effect.withFiber((self) => {
        entry.fiber = self
        return handler
      })
    )
    fiber.addObserver(() => {
      if (inflight.get(request.id) === entry) inflight.delete(request.id)
    })
    return Effect.void
  }

  const respondSingle = (response: JsonRpc.Response) =>
    Effect.uninterruptible(sendQuietly(response, response.id ?? undefined))

  const serveBatch = (entries: JsonRpcCodec.DecodedBatch) => {
    const responses: Array<JsonRpc.Response> = []
    const finish = () => (responses.length === 0 ? Effect.void : sendQuietly(responses))
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
        serve(item, collect)
        const running = inflight.get(item.id)?.fiber
        if (running !== undefined) fibers.push(running)
      } else {
        // Notifications and responses inside a batch need no reply.
        const effect = onSingle(item)
        if (effect !== undefined) fibers.push(runFork(effect))
      }
    }
    if (fibers.length === 0) return finish()
    return Effect.andThen(Fiber.awaitAll(fibers), Effect.suspend(finish))
  }

  // ---- outgoing requests -------------------------------------------------

  const cancelNotice = (entry: Pending, reason: string) =>
    sendQuietly(
      JsonRpc.notification("notifications/cancelled", { requestId: entry.id, reason }),
      entry.relatedRequestId
    )

  const timing = (options: CallOptions | undefined): Timing => ({
    idleMs: options?.timeout === undefined ? timeoutMs : Duration.toMillis(Duration.fromInputUnsafe(options.timeout)),
    totalMs:
      options?.maxTotalTimeout === undefined
        ? Number.POSITIVE_INFINITY
        : Duration.toMillis(Duration.fromInputUnsafe(options.maxTotalTimeout)),
    resetOnProgress: options?.resetTimeoutOnProgress === true
  })
  const defaultTiming = timing(undefined)

  // The waiting caller runs this effect: it tells the other side, then fails.
  const timedOut = (entry: Pending, now: number, reason: TimeoutReason) =>
    Effect.andThen(
      cancelNotice(entry, "timeout"),
      Effect.fail(
        new PeerError.RequestTimeout({
          method: entry.method,
          requestId: entry.id,
          elapsedMs: now - entry.start,
          reason
        })
      )
    )

  const awaitResponse = (entry: Pending) =>
    Effect.suspend(() => {
      pending.startTimer(entry)
      return Deferred.await(entry.deferred)
    })

  const request = (method: string, params?: object, options?: CallOptions): Effect.Effect<unknown, CallError> =>
    Effect.suspend(() => {
      if (closeReason !== undefined) return Effect.fail(new PeerError.SessionClosed({ method, reason: closeReason }))
      const entry = pending.open(
        method,
        options?.relatedRequestId,
        options === undefined ? defaultTiming : timing(options)
      )
      options?.onRequestId?.(entry.id)
      if (options?.onProgress !== undefined) {
        entry.onProgress = options.onProgress
        params = Inbound.withProgressToken(params, entry.id)
      }
      return Effect.onExit(
        Effect.andThen(
          send(JsonRpc.request(entry.id, method, params as JsonRpc.Params | undefined), options?.relatedRequestId),
          awaitResponse(entry)
        ),
        (exit) => {
          // An interrupted caller tells the other side, unless a response or timeout came first.
          if (!entry.settled && Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)) {
            return Effect.ensuring(
              cancelNotice(entry, "request interrupted by caller"),
              Effect.sync(() => pending.remove(entry))
            )
          }
          pending.remove(entry)
          return Effect.void
        }
      )
    })

  const requestWithProgress = (method: string, params?: object, options?: Omit<CallOptions, "onProgress">) =>
    Stream.callback<ProgressEvent, CallError>((queue) =>
      request(method, params, {
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

  // ---- incoming frames -----------------------------------------------------

  const onResponse = (response: JsonRpc.Response): Effect.Effect<void> | undefined => {
    const entry = response.id === null ? undefined : pending.get(response.id)
    // A response for a request we gave up on (cancelled, timed out) is dropped.
    if (entry === undefined || entry.settled) return undefined
    entry.settled = true
    Deferred.doneUnsafe(
      entry.deferred,
      JsonRpc.isSuccess(response) ? Exit.succeed(response.result) : Exit.fail(McpError.fromErrorObject(response.error))
    )
    return undefined
  }

  const onCancelled = (params: unknown): undefined => {
    const requestId = Inbound.cancelledRequestId(params)
    if (requestId === undefined) return undefined
    const entry = inflight.get(requestId)
    // Unknown or finished ids are ignored, as the spec asks.
    if (entry === undefined || entry.responded || !dispatcher.cancellable(entry.method)) return undefined
    inflight.delete(requestId)
    entry.fiber?.interruptUnsafe()
    return undefined
  }

  const onProgress = (params: unknown): Effect.Effect<void> | undefined => {
    const parsed = Inbound.progressOf(params)
    if (parsed === undefined) return undefined
    const entry = pending.get(parsed.token)
    if (entry === undefined || entry.settled || entry.onProgress === undefined) return undefined
    if (!(parsed.update.progress > entry.lastProgress)) {
      return Effect.logDebug(`dropped non-increasing progress ${parsed.update.progress} for request ${entry.id}`)
    }
    // Synchronous, so an update is delivered before a response in the same chunk.
    entry.lastProgress = parsed.update.progress
    entry.lastProgressAt = clock.currentTimeMillisUnsafe()
    entry.onProgress(parsed.update)
    return undefined
  }

  const onSingle = (message: JsonRpc.Message): Effect.Effect<void> | undefined => {
    if (JsonRpc.isRequest(message)) return serve(message, respondSingle)
    if (JsonRpc.isNotification(message)) {
      switch (message.method) {
        case "notifications/cancelled":
          return onCancelled(message.params)
        case "notifications/progress":
          return onProgress(message.params)
        default:
          return dispatcher.notification(message)
      }
    }
    return onResponse(message)
  }

  const onFrame = (frame: Transport.Incoming): Effect.Effect<void> | undefined => {
    if (Result.isFailure(frame)) return sendQuietly(frame.failure.toResponse())
    const decoded = frame.success
    if (!JsonRpcCodec.isBatch(decoded)) return onSingle(decoded)
    if (!dispatcher.acceptsBatch()) {
      return sendQuietly(
        JsonRpc.failure(
          null,
          McpError.toErrorObject(new McpError.InvalidRequest({ message: "batches are not supported by this revision" }))
        )
      )
    }
    return serveBatch(decoded)
  }

  // ---- lifecycle -------------------------------------------------------------

  // Every caller of shutdown (read loop end, scope finalizer) waits for the same
  // handler fibers to finish, so a scope close returns only after their finalizers ran.
  let stopping: ReadonlyArray<Fiber.Fiber<unknown, unknown>> = []
  const shutdown = (reason: string, exit: Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>) =>
    Effect.suspend(() => {
      if (closeReason === undefined) {
        closeReason = reason
        pending.failAll((entry) => new PeerError.SessionClosed({ method: entry.method, reason }))
        const fibers: Array<Fiber.Fiber<unknown, unknown>> = []
        for (const entry of inflight.values()) if (entry.fiber !== undefined) fibers.push(entry.fiber)
        inflight.clear()
        stopping = fibers
        Deferred.doneUnsafe(closedSignal, Effect.succeed(exit))
      }
      return Fiber.interruptAll(stopping)
    })

  // Frames are handled synchronously where possible; an effectful one (a
  // notification handler, a batch) completes before the next frame is read, so
  // arrival order is kept.
  const handleFrom = (frames: ReadonlyArray<Transport.Incoming>, start: number): Effect.Effect<void> => {
    for (let i = start; i < frames.length; i++) {
      const effect = onFrame(frames[i]!)
      if (effect !== undefined)
        return Effect.andThen(
          effect,
          Effect.suspend(() => handleFrom(frames, i + 1))
        )
    }
    return Effect.void
  }
  const readLoop = Stream.runForEachArray(transport.incoming, (frames) => handleFrom(frames, 0))

  yield* readLoop.pipe(
    Effect.exit,
    Effect.flatMap((exit) => shutdown(Exit.isSuccess(exit) ? "transport ended" : "transport failed", exit)),
    Effect.forkScoped
  )
  yield* Effect.addFinalizer(() => shutdown("session scope closed", Exit.void))

  const ping = (callOptions?: CallOptions) => Effect.asVoid(request("ping", undefined, callOptions))

  if (options?.keepalive !== undefined) {
    const keepalive = options.keepalive
    let missed = 0
    let first = true
    // The first run is skipped so pings start one schedule step after the session does.
    const step = Effect.suspend(() =>
      first ? Effect.sync(() => (first = false)) : ping({ timeout: keepalive.timeout })
    )
    yield* step.pipe(
      Effect.tap(() => Effect.sync(() => (missed = 0))),
      Effect.tapError(() => Effect.sync(() => missed++)),
      Effect.repeat(keepalive.schedule),
      Effect.catch(() => shutdown("keepalive failed", Exit.fail(new PeerError.KeepaliveFailed({ missed })))),
      Effect.forkScoped
    )
  }

  return {
    request,
    requestWithProgress,
    notify: (method, params, sendOptions) =>
      transport.send(JsonRpc.notification(method, params as JsonRpc.Params | undefined), sendOptions),
    ping,
    closed: Deferred.await(closedSignal),
    inFlight: () => inflight.size
  } satisfies Peer
})

/** The Peer of the current session, for code that needs raw JSON-RPC access. */
export class CurrentPeer extends Context.Service<CurrentPeer, Peer>()("@effect-mcp/engine/CurrentPeer") {}
