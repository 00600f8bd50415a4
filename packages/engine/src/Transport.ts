/**
 * The transport contract: a scoped connection that delivers decoded frames and
 * sends messages. Closing the scope that built it closes the connection. The
 * same contract serves clients and servers; the Peer on top never knows which
 * transport it runs over.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as NetCause from "./NetCause.ts"

/**
 * One received frame: a message or a batch, or the reason it could not be
 * decoded (the Peer answers those with the matching JSON-RPC error).
 */
export type Incoming = Result.Result<JsonRpcCodec.Decoded, JsonRpcCodec.DecodeFailure>

/** One frame to send: a message or a batch. */
export type Outgoing = JsonRpc.Message | ReadonlyArray<JsonRpc.Message>

/**
 * Extra routing information for a sent frame. Transports that multiplex
 * (Streamable HTTP answers a POST on that POST's stream) use it; others ignore it.
 */
export interface SendOptions {
  /** The incoming request this frame belongs to (a response, or progress/log for it). */
  readonly relatedRequestId?: JsonRpc.RequestId | undefined
}

/** A transport failed: closed, an I/O error, a frame over the size limit, or a framing error. */
export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  reason: Schema.Literals(["Closed", "Io", "FrameTooLarge", "Protocol"]),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * The system error code behind a failure (`ECONNREFUSED`, `ENOTFOUND`,
 * `ENOENT`, a TLS certificate code, undici's `UND_ERR_*`), found along its
 * chain of causes: what a caller matches on to tell "nothing listens" from
 * "no such host" (the messages say it in words).
 */
export const systemErrorCode: (error: unknown) => string | undefined = NetCause.codeOf

/** Whom a transport authenticated the other side as (an HTTP server's `authentication` hook decides). */
export interface Authenticated {
  /**
   * A stable key for the principal: two requests with the same owner are the
   * same caller (e.g. issuer, subject and client of an OAuth token). Sessions
   * are bound to it and the per-client quota counts it.
   */
  readonly owner: string
  /** The scopes the request's credentials grant. */
  readonly scopes: ReadonlyArray<string>
  /** What the hook verified (an OAuth principal, say), given to handlers through `CurrentRequest.principal`. */
  readonly value: unknown
}

/** A connection to the other side: frames in as a Stream, frames out with `send`. */
export interface TransportShape {
  /** Frames from the other side, in order; ends when the other side closes. */
  readonly incoming: Stream.Stream<Incoming, TransportError>
  /** Sends one frame; suspends while the transport's bounded outgoing buffer is full. */
  readonly send: (frame: Outgoing, options?: SendOptions) => Effect.Effect<void, TransportError>
  /**
   * Optional fast path: sends `frame` as a plain call when that needs no wait
   * (the outgoing buffer has room and nothing waits ahead of it), so the
   * sender needs no effect (and no fiber) to send. False when nothing was
   * sent: the sender goes through `send`, which waits or fails. It must keep
   * `send`'s guarantees: the same order (a frame it takes goes behind every
   * frame `send` took before) and the same routing (`relatedRequestId` as in
   * `SendOptions`; a response is routed by its own id).
   *
   * A wrapper that changes `send` must not copy `trySend` (nor `attach` when
   * it changes `incoming`): the memory transport's are not enumerable, so a
   * wrapper made by spreading an end keeps neither.
   */
  readonly trySend?: ((frame: Outgoing, relatedRequestId?: JsonRpc.RequestId) => boolean) | undefined
  /**
   * Push delivery, for transports that hold many idle connections: the
   * receiver attaches itself once and the transport hands it every frame
   * instead of being read through `incoming` (which the receiver then never
   * runs), so an idle connection costs no waiting reader. The transport hands
   * frames over with the receiver's `push` when it has one and delivers from
   * its own turn, or with `offer`. False when the transport cannot push (it
   * was read already, or it needs a `push` the receiver lacks): the receiver
   * reads `incoming`.
   */
  readonly attach?: ((receiver: Receiver) => boolean) | undefined
  /**
   * Optional, for transports whose other side can end the session (a
   * Streamable HTTP server answering 404 for the session id): `incoming` then
   * fails with `Closed` whose `cause` is tagged `SessionExpired`, and `renew`
   * readies the transport for a new session: `incoming` can be read again and
   * the next frame (a new `initialize`) goes without the old session's id.
   * Does nothing when the session did not expire.
   */
  readonly renew?: Effect.Effect<void> | undefined
  /**
   * Optional, for transports with a session of their own (the Streamable
   * HTTP client's `Mcp-Session-Id`): its id, read when a request's span is
   * annotated (`mcp.session.id`), only with tracing on.
   */
  readonly sessionId?: (() => string | undefined) | undefined
  /**
   * Optional, for transports that authenticate the other side (the HTTP
   * servers with an `authentication` hook): whom the latest request came from.
   * A session's handlers read it as `CurrentRequest.principal`.
   */
  readonly principal?: (() => Authenticated | undefined) | undefined
  /**
   * Optional: false when the transport cannot carry the stateless revisions
   * (2026-07-28, which a client opens with `server/discover`); missing means
   * it can. The legacy HTTP+SSE transport says false, and so does a
   * Streamable HTTP client once it fell back to it: a client session then
   * opens with `initialize` (from 2025-03-26 initialization MUST be the first
   * interaction). Read before the handshake and again when its first request
   * failed on the transport.
   */
  readonly carriesStateless?: (() => boolean) | undefined
}

/** A transport pushing frames to a `Receiver`: it pauses when `push` says so, until `resume`. */
export interface PushSource {
  /** The receiver takes frames again. */
  readonly resume: () => void
}

/** The receiving end of push delivery (see `TransportShape.attach`). */
export interface Receiver {
  /**
   * Hands one frame over; frames are handled in the order offered. Suspends
   * while the receiver's bounded backlog is full; false once the input ended.
   */
  readonly offer: (frame: Incoming) => Effect.Effect<boolean>
  /**
   * Optional: `offer`, succeeding only once the frame was handed to the
   * session (its handling started; a request whose handler needs no wait was
   * answered by then). A transport that shapes its reply by whether the
   * answer is already there (the Streamable HTTP server) waits for this, a
   * rule, instead of a scheduler turn.
   */
  readonly offerHandedOver?: ((frame: Incoming) => Effect.Effect<boolean>) | undefined
  /**
   * Ends the input, as the end of `incoming` would: the frames offered so far
   * are still handled, then the receiver closes. With an error: the transport failed.
   */
  readonly end: (error?: TransportError) => void
  /** Completes once the input ended and every frame offered before was handled. */
  readonly drained: Effect.Effect<void>
  /**
   * Optional fast path for transports that deliver from their own turn (in
   * process): hands one frame over as a plain call, handled in order with
   * offered frames. False when the frame's handling goes on (in a fiber):
   * the transport must hold every later frame until `source.resume()` is
   * called; that pause is its backpressure. Frames pushed after the receiver
   * stopped are dropped.
   */
  readonly push?: ((frame: Incoming, source: PushSource) => boolean) | undefined
}

/** The current transport, as a service; each transport module provides it. */
export class Transport extends Context.Service<Transport, TransportShape>()("@effect-mcp/engine/Transport") {}
