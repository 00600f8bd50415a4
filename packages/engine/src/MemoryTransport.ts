/**
 * An in-process transport: two linked ends, for tests and in-process hosts.
 * Messages cross as objects (no JSON round trip) unless `codec` asks for the
 * full encode/decode path, which tests use to exercise the codec.
 *
 * A Peer attaches itself to its end (push delivery): frames are handed to it
 * on a microtask after they are sent, with no reader fiber to resume.
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { PushQueue } from "./PushQueue.ts"
import * as Transport from "./Transport.ts"

/** Settings of a memory pair. */
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

type Inbox = PushQueue<Transport.Incoming>

const closedError = new Transport.TransportError({ reason: "Closed", message: "memory transport closed" })

const makeEnd = (inbox: Inbox, outbox: Inbox, codec: boolean): End => {
  let closed = false
  // `incoming` and push delivery exclude each other: whichever comes first wins.
  let reading = false
  let attached = false
  const deliver = codec
    ? (frame: Transport.Outgoing): Transport.Incoming => JsonRpcCodec.decode(JsonRpcCodec.encode(frame))
    : (frame: Transport.Outgoing): Transport.Incoming => Result.succeed(frame as JsonRpcCodec.Decoded)
  const end: End = {
    incoming: Stream.fromPull(
      Effect.sync(() => {
        reading = true
        return attached ? Effect.never : inbox.take
      })
    ),
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
  // Push delivery and plain-call sends are not enumerable: a wrapper made by
  // spreading an end (`{ ...end, incoming }`) keeps neither, so a Peer over
  // it reads and sends through the wrapper.
  Object.defineProperty(end, "attach", {
    value: (receiver: Transport.Receiver): boolean => {
      const push = receiver.push
      if (reading || attached || push === undefined) return false
      attached = true
      inbox.attach({ push: (frame) => push.call(receiver, frame, inbox), end: () => receiver.end() })
      return true
    }
  })
  // A frame that fits is taken as a plain call (the Peer then needs no effect to send it).
  Object.defineProperty(end, "trySend", {
    value: (frame: Transport.Outgoing): boolean => {
      if (closed || !outbox.hasRoom()) return false
      outbox.offerNow(deliver(frame))
      return true
    }
  })
  return end
}

/**
 * Makes a linked pair of ends. Closing the enclosing scope closes both.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
 * import * as Transport from "@effect-mcp/engine/Transport"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Effect from "effect/Effect"
 *
 * const Server = McpServer.layer({ name: "in-memory", version: "1.0.0" })
 *
 * // A server and a client in one process; both end when the scope closes.
 * export const connected = Effect.gen(function* () {
 *   const [serverEnd, clientEnd] = yield* MemoryTransport.makePair()
 *   yield* McpServer.serve.pipe(
 *     Effect.provideService(Transport.Transport, serverEnd),
 *     Effect.provide(Server),
 *     Effect.forkScoped
 *   )
 *   return yield* McpClient.make({ clientInfo: { name: "test", version: "1.0.0" } }).pipe(
 *     Effect.provideService(Transport.Transport, clientEnd)
 *   )
 * })
 * ```
 */
export const makePair = (options?: Options): Effect.Effect<readonly [End, End], never, Scope.Scope> =>
  Effect.gen(function* () {
    const capacity = options?.capacity ?? 1024
    const aInbox = new PushQueue<Transport.Incoming>(capacity)
    const bInbox = new PushQueue<Transport.Incoming>(capacity)
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
