/**
 * The Peer's incoming requests: each is served in a fiber of its own, kept in
 * a table while in flight (so `notifications/cancelled` can interrupt it), and
 * answered when its fiber ends, unless it was interrupted. One object per
 * request is both its table entry and its `CurrentRequest`.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Semaphore from "effect/Semaphore"
import * as Tracer from "effect/Tracer"
import * as CurrentRequest from "../CurrentRequest.ts"
import * as Defect from "../Defect.ts"
import type * as Peer from "../Peer.ts"
import type * as Transport from "../Transport.ts"
import * as McpMetrics from "../McpMetrics.ts"
import * as Tracing from "../Tracing.ts"
import { IdTable } from "./idTable.ts"
import * as Inbound from "./inbound.ts"
import { PeerInput } from "./peerInput.ts"

/** `Host.observe` bit: requests are served under spans. */
export const TRACING = 1
/** `Host.observe` bit: requests are timed. */
export const METRICS = 2

/** What serving requests needs from the Peer. */
export interface Host {
  readonly context: Context.Context<never>
  readonly dispatcher: Peer.Dispatcher
  readonly semaphore: Semaphore.Semaphore | undefined
  /**
   * What is observed of requests, decided once per session: `TRACING` (spans,
   * Tracing.enabled) and `METRICS` (McpMetrics.Enabled) bits; 0, the one
   * branch a request costs.
   */
  readonly observe: number
  /** Adds the session's attributes to a request's span (session id, protocol version). */
  readonly annotateSpan: (span: Tracer.Span, params: unknown) => void
  /** The transport the requests come over (whom it authenticated, its session id). */
  readonly transport: Transport.TransportShape
  /** Sends a frame; fails as the transport's `send` does. */
  readonly send: (
    frame: Transport.Outgoing,
    relatedRequestId?: JsonRpc.RequestId
  ) => Effect.Effect<void, Transport.TransportError>
  /** Sends a frame; a failure to send is dropped (the transport's end closes the Peer). */
  readonly sendQuietly: (frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId) => Effect.Effect<void>
  /** Handles a notification or response (inside a batch). */
  readonly onSingle: (message: JsonRpc.Message) => Effect.Effect<void> | undefined
}

/**
 * One request being served: its table entry and, with its behaviour on the
 * prototype, the `CurrentRequest` its handler sees.
 */
class Served implements CurrentRequest.CurrentRequestShape {
  readonly request: JsonRpc.Request
  // A field, not a getter of the request's: the IdTable reads it on every lookup.
  readonly id: JsonRpc.RequestId
  private readonly host: Host
  fiber: Fiber.Fiber<unknown, unknown> | undefined = undefined
  responded = false
  private last = Number.NEGATIVE_INFINITY

  constructor(host: Host, request: JsonRpc.Request) {
    this.host = host
    this.request = request
    this.id = request.id
  }

  get method(): string {
    return this.request.method
  }

  get principal(): Transport.Authenticated | undefined {
    return this.host.transport.principal?.()
  }

  get sessionId(): string | undefined {
    return this.host.transport.sessionId?.()
  }

  // Read from the params when asked: most requests never report progress.
  get progressToken(): CurrentRequest.ProgressToken | undefined {
    return Inbound.progressTokenOf(this.request.params)
  }

  progress(update: CurrentRequest.ProgressUpdate): Effect.Effect<void> {
    return Effect.suspend(() => {
      const progressToken = this.progressToken
      if (progressToken === undefined || this.responded) return Effect.void
      if (!(update.progress > this.last)) {
        return Effect.logDebug(`dropped non-increasing progress ${update.progress} for request ${this.id}`)
      }
      this.last = update.progress
      return this.send("notifications/progress", Inbound.progressParams(progressToken, update))
    })
  }

  notify(method: string, params?: object): Effect.Effect<void> {
    return this.send(method, params)
  }

  // Traced, a notification about the request carries the span context of the fiber sending it (the request's
  // span, or one of the handler's own under it), as a request would.
  private send(method: string, params: object | undefined): Effect.Effect<void> {
    if ((this.host.observe & TRACING) === 0) {
      return this.host.sendQuietly(JsonRpc.notification(method, params as JsonRpc.Params | undefined), this.id)
    }
    return Effect.withFiber((fiber) => {
      const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
      const traced = span === undefined ? params : Tracing.withTraceContext(params, span)
      return this.host.sendQuietly(JsonRpc.notification(method, traced as JsonRpc.Params | undefined), this.id)
    })
  }
}

const tooLarge = (error: Transport.TransportError): JsonRpc.ErrorObject =>
  McpError.toErrorObject(new McpError.InternalError({ message: `the response could not be sent: ${error.message}` }))

const refusal = (id: JsonRpc.RequestId | null, error: McpError.McpError): JsonRpc.Response =>
  JsonRpc.failure(id, McpError.toErrorObject(error))

/**
 * The requests a Peer serves: a base class of the Peer (which is the `Host`),
 * not an object of its own, as a server keeps a Peer per idle session and a
 * separate object cost each one 40 bytes. It extends the Peer's pushed input
 * for the same reason.
 */
export abstract class IncomingRequests extends PeerInput implements Host {
  abstract readonly dispatcher: Peer.Dispatcher
  abstract readonly semaphore: Semaphore.Semaphore | undefined
  abstract readonly observe: number
  abstract readonly transport: Transport.TransportShape
  abstract annotateSpan(span: Tracer.Span, params: unknown): void
  abstract send(
    frame: Transport.Outgoing,
    relatedRequestId?: JsonRpc.RequestId
  ): Effect.Effect<void, Transport.TransportError>
  abstract sendQuietly(frame: Transport.Outgoing, relatedRequestId?: JsonRpc.RequestId): Effect.Effect<void>
  abstract onSingle(message: JsonRpc.Message): Effect.Effect<void> | undefined
  abstract onUndecodable(failure: JsonRpcCodec.DecodeFailure): Effect.Effect<void> | undefined

  private readonly served = new IdTable<Served>()

  /** Number of incoming requests being served. */
  inFlight(): number {
    return this.served.size
  }

  /** `notifications/cancelled` for `id`: its fiber is interrupted and nothing is answered. */
  cancelIncoming(id: JsonRpc.RequestId): void {
    const entry = this.served.get(id)
    // Unknown or finished ids are ignored, as the spec asks.
    if (entry === undefined || entry.responded || !this.dispatcher.cancellable(entry.request.method)) return
    this.served.remove(entry)
    entry.fiber?.interruptUnsafe()
  }

  /** Empties the table (the Peer is closing): the fibers still serving, to interrupt. */
  takeFibers(into: Array<Fiber.Fiber<unknown, unknown>>): void {
    for (const entry of this.served.takeAll()) if (entry.fiber !== undefined) into.push(entry.fiber)
  }

  /** The JSON-RPC error a failed handler is answered with; a defect is logged, never sent. */
  private errorObject(request: JsonRpc.Request, cause: Cause.Cause<McpError.McpError>): JsonRpc.ErrorObject {
    const failure = cause.reasons.find(Cause.isFailReason)
    if (failure !== undefined && McpError.isMcpError(failure.error)) {
      return this.dispatcher.errorObject(request, failure.error)
    }
    return McpError.toErrorObject(Defect.reportUnsafe(this.context, cause, request.method))
  }

  /**
   * Serves one request in its own fiber. The response goes to `respond` (to
   * the transport when undefined) unless the fiber is interrupted
   * (cancelled): then nothing is answered. Returns the effect that answers a
   * request refused at once (its id is already in flight).
   */
  serve(
    request: JsonRpc.Request,
    respond: ((response: JsonRpc.Response) => Effect.Effect<void>) | undefined
  ): Effect.Effect<void> | undefined {
    if (this.served.get(request.id) !== undefined) {
      const response = refusal(
        request.id,
        new McpError.InvalidRequest({ message: `request id ${String(request.id)} is already in flight` })
      )
      return respond === undefined ? this.sendQuietly(response, request.id) : respond(response)
    }
    // In process the response is taken as a plain call when the fiber ends, so
    // the fiber runs the handler alone; otherwise the fiber sends it itself.
    // The transport's `trySend` is called on it, not kept bound: a server keeps a Peer per idle session.
    const sendsNow = respond === undefined && this.transport.trySend !== undefined
    let handler: Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest>
    const dispatcher = this.dispatcher
    // The limit bounds handlers at work: a liveness check is answered at once however busy they are (a
    // keepalive that waited behind a long call closed a healthy session), and so is a request whose outcome
    // is known without running anything (a refusal, a handler that is already a result).
    let semaphore = request.method === "ping" ? undefined : this.semaphore
    const atOnce = sendsNow && this.observe === 0
    if ((atOnce || semaphore !== undefined) && dispatcher.requestNow !== undefined) {
      // Built here: a request refused, or whose handler had nothing to run (most tool calls), is answered now,
      // with no fiber (a fiber, its context and its run loop were a twentieth of a stdio server's CPU per call).
      handler = dispatcher.requestNow(request)
      if (Exit.isExit(handler)) {
        if (atOnce) {
          const exit = handler as Exit.Exit<unknown, McpError.McpError>
          // An interruption is answered by nobody, as that of a fiber.
          if (Exit.isSuccess(exit) || !Cause.hasInterruptsOnly(exit.cause)) this.answerNow(request, exit)
          return undefined
        }
        semaphore = undefined
      }
    } else {
      handler = dispatcher.request(request)
    }
    const entry = new Served(this, request)
    if (this.observe !== 0) {
      if ((this.observe & TRACING) !== 0) handler = Tracing.incoming(request, this, handler)
      if ((this.observe & METRICS) !== 0) handler = McpMetrics.timed("server", request.method, request.params, handler)
    }
    if (!sendsNow) {
      handler = Effect.matchCauseEffect(handler, {
        onSuccess: (result) => {
          entry.responded = true
          const response = JsonRpc.success(request.id, result)
          return respond === undefined ? this.respondSingle(response) : respond(response)
        },
        onFailure: (cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.void
          entry.responded = true
          const response = JsonRpc.failure(request.id, this.errorObject(request, cause))
          return respond === undefined ? this.respondSingle(response) : respond(response)
        }
      })
    }
    if (semaphore !== undefined) handler = semaphore.withPermit(handler)
    this.served.add(entry)
    // The fiber starts with CurrentRequest in its context (cheaper than providing
    // it), and records itself as its first step: a handler may resume other
    // fibers synchronously (completing a Deferred) before runFork returns.
    const fiber = Effect.runForkWith(Context.add(this.context, CurrentRequest.CurrentRequest, entry))(
      Effect.withFiber((self) => {
        entry.fiber = self
        return handler
      })
    )
    // A handler that ended before runFork returned (most do: nothing to wait for) is finished here,
    // as `addObserver` would at once, without a closure. Through `addObserver` the call site is
    // shared with every other fiber's observers: at 64 calls in flight the in-process pair took
    // up to 0.5 µs more per call (lower this way in 5 paired runs of 6).
    const ended = fiber.pollUnsafe()
    if (ended === undefined) {
      fiber.addObserver(sendsNow ? (exit) => this.answer(entry, exit) : () => this.served.remove(entry))
    } else if (sendsNow) {
      this.answer(entry, ended)
    } else {
      this.served.remove(entry)
    }
    return undefined
  }

  private respondSingle(response: JsonRpc.Response): Effect.Effect<void> {
    return Effect.uninterruptible(this.respond(response, response.id ?? undefined))
  }

  /**
   * Sends responses. One the transport refuses as larger than its frame limit
   * is answered with an error that names the limit instead, so the requester
   * learns at once rather than at its timeout.
   */
  private respond(frame: JsonRpc.Response | ReadonlyArray<JsonRpc.Response>, related?: JsonRpc.RequestId) {
    return Effect.catch(this.send(frame, related), (error) => {
      if (error.reason !== "FrameTooLarge") return Effect.void
      const failed = (Array.isArray(frame) ? frame : [frame as JsonRpc.Response])
        .filter((response) => response.id !== null)
        .map((response) => JsonRpc.failure(response.id, tooLarge(error)))
      if (failed.length === 0) return Effect.void
      return this.sendQuietly(Array.isArray(frame) ? failed : failed[0]!, related)
    })
  }

  /** Answers a request whose fiber ended, unless it was interrupted (cancelled). */
  private answer(entry: Served, exit: Exit.Exit<unknown, McpError.McpError>): void {
    this.served.remove(entry)
    if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return
    entry.responded = true
    this.answerNow(entry.request, exit)
  }

  /** Sends the response of a request that came to `exit` (which is not an interruption). */
  private answerNow(request: JsonRpc.Request, exit: Exit.Exit<unknown, McpError.McpError>): void {
    const id = request.id
    const response = Exit.isSuccess(exit)
      ? JsonRpc.success(id, exit.value)
      : JsonRpc.failure(id, this.errorObject(request, exit.cause))
    // No room: the response waits for it in a fiber of its own, behind the frames already waiting.
    if (!this.transport.trySend!(response)) Effect.runForkWith(this.context)(this.respondSingle(response))
  }

  /**
   * Serves a batch's entries concurrently and answers with one batch of their
   * responses. The returned effect waits for the batch's notifications only,
   * as for notifications sent alone, so arrival order is kept; the answer
   * waits for the requests in a fiber of its own, so the frames after the
   * batch (a cancel of one of its requests, a ping) are read meanwhile, as
   * after a single request.
   */
  serveBatch(entries: JsonRpcCodec.DecodedBatch): Effect.Effect<void> | undefined {
    const responses: Array<JsonRpc.Response> = []
    const finish = () => (responses.length === 0 ? Effect.void : this.respond(responses))
    const collect = (response: JsonRpc.Response) =>
      Effect.sync(() => {
        responses.push(response)
      })
    const requests: Array<Fiber.Fiber<unknown, unknown>> = []
    const notifications: Array<Fiber.Fiber<unknown, unknown>> = []
    for (const item of entries) {
      if (JsonRpcCodec.isDecodeFailure(item)) {
        // A malformed response fails the request it answered; no response answers it.
        if (item.responseId === undefined) responses.push(item.toResponse())
        else this.onUndecodable(item)
      } else if (JsonRpc.isRequest(item)) {
        const refused = this.dispatcher.refuseInBatch(item)
        if (refused !== undefined) {
          responses.push(JsonRpc.failure(item.id, this.dispatcher.errorObject(item, refused)))
          continue
        }
        const answered = this.serve(item, collect)
        if (answered !== undefined) requests.push(Effect.runForkWith(this.context)(answered))
        const running = this.served.get(item.id)?.fiber
        if (running !== undefined) requests.push(running)
      } else {
        // Notifications and responses inside a batch need no reply.
        const effect = this.onSingle(item)
        if (effect !== undefined) notifications.push(Effect.runForkWith(this.context)(effect))
      }
    }
    const answer = requests.length === 0 ? finish() : undefined
    if (answer === undefined) {
      Effect.runForkWith(this.context)(Effect.andThen(Fiber.awaitAll(requests), Effect.suspend(finish)))
    }
    if (notifications.length === 0) return answer
    const handled = Fiber.awaitAll(notifications)
    return answer === undefined ? Effect.asVoid(handled) : Effect.andThen(handled, answer)
  }
}
