/**
 * The JSON-RPC endpoint both roles share: outgoing requests with deadlines,
 * progress and cancellation, and one fiber per incoming request
 * (cancellation interrupts it). What a request means, and the protocol's
 * rules about it, are the Dispatcher's business: the Peer has no idea
 * whether it is a client or a server. The implementation is
 * `internal/peerImpl.ts`.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as McpError from "@effect-mcp/protocol/McpError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type * as CurrentRequest from "./CurrentRequest.ts"
import * as PeerConfig from "./internal/peerConfig.ts"
import { PeerImpl } from "./internal/peerImpl.ts"
import * as PeerError from "./PeerError.ts"
import type * as ProgressStream from "./ProgressStream.ts"
import type * as Tracing from "./Tracing.ts"
import type * as Transport from "./Transport.ts"

/**
 * What the session above the Peer decides: what a request or notification
 * means, and the protocol's rules the Peer applies without knowing them
 * (which requests may be batched or cancelled, how errors are encoded).
 */
export interface Dispatcher {
  /** Serves one incoming request; runs in the request's own fiber. */
  readonly request: (
    request: JsonRpc.Request
  ) => Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest>
  /**
   * `request`'s effect built now, in the caller rather than in the request's
   * fiber. When it is already an outcome (an `Exit`: the request was refused,
   * or its handler had nothing to run) the Peer answers it at once, with no
   * fiber; otherwise the effect runs in the request's fiber as `request`'s
   * would. Optional: without it every request gets its fiber.
   */
  readonly requestNow?:
    | ((request: JsonRpc.Request) => Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest>)
    | undefined
  /**
   * The error object a request that failed with `error` is answered with
   * (the code can depend on the revision the request was served in).
   */
  readonly errorObject: (request: JsonRpc.Request, error: McpError.McpError) => JsonRpc.ErrorObject
  /** Handles one incoming notification (other than cancellation and progress), in arrival order. */
  readonly notification: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /** Why a batch frame is refused now (the negotiated revision has no batches); undefined to serve it. */
  readonly refuseBatch: () => McpError.McpError | undefined
  /** Why a request may not be served inside a batch (`initialize`); undefined to serve it. */
  readonly refuseInBatch: (request: JsonRpc.Request) => McpError.McpError | undefined
  /**
   * Whether `notifications/cancelled` may refer to a request of this method,
   * in either direction (`initialize` may not be cancelled): an incoming one
   * is not interrupted, an outgoing one that times out or is abandoned is not
   * announced.
   */
  readonly cancellable: (method: string) => boolean
  /**
   * Adds what the session knows (protocol version, session id) to the span
   * of a request in either direction; called only when tracing is on.
   */
  readonly annotateSpan?: ((span: Tracer.Span, params: unknown) => void) | undefined
  /**
   * The target an incoming request's span is named after (`Tracing.SpanTarget`): one the serving side has.
   * Asked only when tracing is on; without it, an incoming request's span is named by its method alone.
   */
  readonly spanTarget?: Tracing.SpanTarget | undefined
  /**
   * The request a keepalive sends: by default `ping`; a session of a revision without `ping` (2026-07-28) sends
   * `server/discover`, with what that revision's requests carry.
   */
  readonly keepalive?: (() => { readonly method: string; readonly params: object | undefined }) | undefined
  /** The id of the first outgoing request (a session continued elsewhere goes on from its last). Default 1. */
  readonly firstRequestId?: (() => number) | undefined
  /** Told each outgoing request id as it is taken (a session reserves ids ahead for its snapshot). */
  readonly requestIdTaken?: ((id: number) => void) | undefined
}

/** The timeout of an outgoing request when `Options.requestTimeout` does not say. */
export const defaultRequestTimeout: Duration.Duration = PeerConfig.defaultRequestTimeout

/** Settings of a Peer: request timeout, concurrency of incoming requests, keepalive. */
export interface Options {
  /** Default timeout of outgoing requests. Default 60 seconds (`defaultRequestTimeout`). */
  readonly requestTimeout?: Duration.Input | undefined
  /**
   * Maximum incoming requests served at once; the rest wait. A `ping`, and a
   * request whose outcome is known without running anything (a refusal, a
   * handler that is already a result), is answered at once. Default unbounded.
   */
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
export type ProgressEvent<A = unknown> = ProgressStream.ProgressEvent<A>

/** A JSON-RPC endpoint, the same for clients and servers: outgoing requests with deadlines and progress, incoming requests each in a fiber of its own. */
export interface Peer {
  /** Sends a request and waits for its result; interrupting the wait sends `notifications/cancelled`. */
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
  /**
   * Calls `hook` once when the Peer closes (at once if it has), with the
   * Peer: what the owner of a session forgets about it. Cheaper than a
   * finalizer of its own in the session's scope, which then keeps a map of
   * two (a server holds many idle sessions), and one hook may serve every
   * Peer (it is told which closed). The hook is synchronous and must not throw.
   */
  readonly onClose: (hook: (peer: Peer) => void) => void
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
  // The Peer is its own input (PeerInput is its base class).
  if (transport.attach === undefined || !transport.attach(peer)) {
    yield* Stream.runForEachArray(transport.incoming, (frames) => peer.handleFrom(frames, 0)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => peer.shutdown(Exit.isSuccess(exit) ? "transport ended" : "transport failed", exit)),
      Effect.forkScoped
    )
  }
  // Bound, not a closure over the session's services, and without bound arguments (a list of them costs
  // 32 bytes more): a server holds many idle sessions.
  yield* Scope.addFinalizerExit(yield* Scope.Scope, peer.scopeClosed.bind(peer))

  if (options?.keepalive !== undefined) {
    const keepalive = options.keepalive
    let missed = 0
    let first = true
    // The first run is skipped so pings start one schedule step after the session does.
    const step = Effect.suspend(() => {
      if (first) return Effect.sync(() => (first = false))
      const ping = dispatcher.keepalive?.()
      return ping === undefined
        ? peer.ping({ timeout: keepalive.timeout })
        : peer.request(ping.method, ping.params, { timeout: keepalive.timeout })
    })
    yield* step.pipe(
      Effect.tap(() => Effect.sync(() => (missed = 0))),
      Effect.tapError(() => Effect.sync(() => missed++)),
      Effect.repeat(keepalive.schedule),
      Effect.catch((cause) =>
        peer.shutdown("keepalive failed", Exit.fail(new PeerError.KeepaliveFailed({ missed, cause })))
      ),
      Effect.forkScoped
    )
  }

  return peer
})
