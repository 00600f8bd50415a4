/**
 * The Peer's implementation (the contract is in Peer.ts): sending, the frames
 * coming in, and closing. Its base classes hold the rest: the requests it
 * sends (`OutgoingRequests`), those it serves (`IncomingRequests`) and its
 * pushed input (`PeerInput`); what a request means is the Dispatcher's
 * business.
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
import type * as Tracer from "effect/Tracer"
import type * as Peer from "../Peer.ts"
import * as PeerError from "../PeerError.ts"
import * as Transport from "../Transport.ts"
import * as Inbound from "./inbound.ts"
import * as McpMetrics from "../McpMetrics.ts"
import * as Tracing from "../Tracing.ts"
import * as Incoming from "./incomingRequests.ts"
import type * as PeerInput from "./peerInput.ts"
import { OutgoingRequests } from "./outgoingRequests.ts"
import { type Config, sharedConfig } from "./peerConfig.ts"

type ClosedExit = PeerInput.ClosedExit

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
 * sends and serves and its pushed input are its base classes). What only some
 * sessions need (the table of outgoing requests and its timer, the table of
 * requests in flight, the close signal) is made when first needed, so an idle
 * session costs little.
 */
export class PeerImpl extends OutgoingRequests implements Peer.Peer {
  readonly transport: Transport.TransportShape
  readonly dispatcher: Peer.Dispatcher
  readonly context: Context.Context<never>
  protected readonly config: Config
  readonly semaphore: Semaphore.Semaphore | undefined
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

  // Bounded as a request is, by the Peer's request timeout: a transport that cannot hand the frame over (an HTTP
  // server that never answers a notification's POST, a stdio peer that stopped reading) holds the caller no longer.
  notify(
    method: string,
    params?: object,
    options?: Transport.SendOptions
  ): Effect.Effect<void, Transport.TransportError> {
    const timeoutMs = this.config.timeoutMs
    return Effect.timeoutOrElse(
      this.transport.send(JsonRpc.notification(method, params as JsonRpc.Params | undefined), options),
      {
        duration: Duration.millis(timeoutMs),
        orElse: () => {
          const message = `${method} was not taken within ${Duration.format(Duration.millis(timeoutMs))}`
          // The cause says it was the deadline, for a caller with a deadline of its own (the handshake's).
          return Effect.fail(
            new Transport.TransportError({ reason: "Io", message, cause: new Cause.TimeoutError(message) })
          )
        }
      }
    )
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

  private onCancelled(params: unknown): undefined {
    const requestId = Inbound.cancelledRequestId(params)
    if (requestId !== undefined) this.cancelIncoming(requestId)
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
   * was a response (malformed, or too large to take): the request it answered
   * fails at once, saying why, and nothing is sent back.
   */
  onUndecodable(failure: JsonRpcCodec.DecodeFailure): Effect.Effect<void> | undefined {
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

  protected refusal(method: string): PeerError.SessionClosed | undefined {
    return this.closing === undefined ? undefined : this.closedError(method)
  }

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
