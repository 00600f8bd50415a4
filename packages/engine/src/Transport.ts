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

/** A connection to the other side: frames in as a Stream, frames out with `send`. */
export interface TransportShape {
  /** Frames from the other side, in order; ends when the other side closes. */
  readonly incoming: Stream.Stream<Incoming, TransportError>
  /** Sends one frame; suspends while the transport's bounded outgoing buffer is full. */
  readonly send: (frame: Outgoing, options?: SendOptions) => Effect.Effect<void, TransportError>
  /**
   * Push delivery, for transports that hold many idle connections: the
   * receiver attaches itself once and the transport hands it every frame
   * instead of being read through `incoming` (which the receiver then never
   * runs), so an idle connection costs no waiting reader. False when the
   * transport cannot push (it was read already): the receiver reads `incoming`.
   */
  readonly attach?: ((receiver: Receiver) => boolean) | undefined
}

/** The receiving end of push delivery (see `TransportShape.attach`). */
export interface Receiver {
  /**
   * Hands one frame over; frames are handled in the order offered. Suspends
   * while the receiver's bounded backlog is full; false once the input ended.
   */
  readonly offer: (frame: Incoming) => Effect.Effect<boolean>
  /**
   * Ends the input, as the end of `incoming` would: the frames offered so far
   * are still handled, then the receiver closes. With an error: the transport failed.
   */
  readonly end: (error?: TransportError) => void
  /** Completes once the input ended and every frame offered before was handled. */
  readonly drained: Effect.Effect<void>
}

/** The current transport, as a service; each transport module provides it. */
export class Transport extends Context.Service<Transport, TransportShape>()("@effect-mcp/engine/Transport") {}
