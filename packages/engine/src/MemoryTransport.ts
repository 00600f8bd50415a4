/**
 * An in-process transport: two linked ends, for tests and in-process hosts.
 * Messages cross as objects (no JSON round trip) unless `codec` asks for the
 * full encode/decode path, which tests use to exercise the codec.
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Mailbox } from "./internal/mailbox.ts"
import * as Transport from "./Transport.ts"

export interface Options {
  /** Frames buffered per direction before `send` suspends (backpressure). Default 1024. */
  readonly capacity?: number | undefined
  /** Encode every frame to JSON text and decode it on the other side. Default false. */
  readonly codec?: boolean | undefined
}

/** One end of a memory pair: a transport plus a way to close just this end. */
export interface End extends Transport.TransportShape {
  /** Closes this end: the other end sees end-of-stream, later sends fail with `Closed`. */
  readonly close: Effect.Effect<void>
}

type Inbox = Mailbox<Transport.Incoming>

const closedError = new Transport.TransportError({ reason: "Closed", message: "memory transport closed" })

const makeEnd = (inbox: Inbox, outbox: Inbox, codec: boolean): End => {
  let closed = false
  const deliver = codec
    ? (frame: Transport.Outgoing): Transport.Incoming => JsonRpcCodec.decode(JsonRpcCodec.encode(frame))
    : (frame: Transport.Outgoing): Transport.Incoming => Result.succeed(frame as JsonRpcCodec.Decoded)
  return {
    incoming: Stream.fromPull(Effect.succeed(inbox.take)),
    send: (frame) =>
      Effect.suspend(() => {
        if (closed) return Effect.fail(closedError)
        return Effect.flatMap(outbox.offer(deliver(frame)), (accepted) =>
          accepted ? Effect.void : Effect.fail(closedError)
        )
      }),
    close: Effect.sync(() => {
      if (closed) return
      closed = true
      outbox.close()
      inbox.close()
    })
  }
}

/**
 * Makes a linked pair of ends. Closing the enclosing scope closes both.
 */
export const makePair = (options?: Options): Effect.Effect<readonly [End, End], never, Scope.Scope> =>
  Effect.gen(function* () {
    const capacity = options?.capacity ?? 1024
    const aInbox = new Mailbox<Transport.Incoming>(capacity)
    const bInbox = new Mailbox<Transport.Incoming>(capacity)
    const a = makeEnd(aInbox, bInbox, options?.codec === true)
    const b = makeEnd(bInbox, aInbox, options?.codec === true)
    yield* Effect.addFinalizer(() => Effect.andThen(a.close, b.close))
    return [a, b] as const
  })

/** Provides `Transport` from one end of a pair; releasing the layer closes that end. */
export const layer = (end: End): Layer.Layer<Transport.Transport> =>
  Layer.effect(
    Transport.Transport,
    Effect.acquireRelease(Effect.succeed(Transport.Transport.of(end)), () => end.close)
  )
