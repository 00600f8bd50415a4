/**
 * A third-party transport written only against the public contract
 * (`Transport.TransportShape`, effect's Queue): its fast paths, `trySend` and
 * push delivery, are the documented optional members, nothing private. The
 * contract suite holds it to the same ordering and backpressure guarantees as
 * the built-in transports, and a client and server session run over it.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import { assert, describe, it } from "@effect/vitest"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type * as TransportContract from "../src/TransportContract.ts"
import * as Contract from "../src/TransportContract.ts"

type Pipe = Queue.Queue<Transport.Incoming, Cause.Done>

const closed = new Transport.TransportError({ reason: "Closed", message: "contract-only transport closed" })

/** One end of a pair. */
const makeEnd = (inbox: Pipe, outbox: Pipe): TransportContract.End => {
  let isClosed = false
  let mode: "none" | "read" | "push" = "none"
  let delivery: { readonly interrupt: () => void } | undefined
  const frameOf = (frame: Transport.Outgoing): Transport.Incoming => Result.succeed(frame as JsonRpcCodec.Decoded)
  return {
    incoming: Stream.unwrap(
      Effect.sync(() => {
        if (mode === "none") mode = "read"
        return mode === "push" ? Stream.never : Stream.fromQueue(inbox)
      })
    ),
    send: (frame) =>
      Effect.suspend(() =>
        isClosed
          ? Effect.fail(closed)
          : Effect.flatMap(Queue.offer(outbox, frameOf(frame)), (ok) => (ok ? Effect.void : Effect.fail(closed)))
      ),
    trySend: (frame) => {
      if (isClosed) return false
      return Queue.offerUnsafe(outbox, frameOf(frame))
    },
    attach: (receiver) => {
      const push = receiver.push
      if (mode !== "none" || push === undefined) return false
      mode = "push"
      // A delivery fiber hands frames over one by one and waits whenever `push` says so.
      let resumed = Deferred.makeUnsafe<void>()
      const source: Transport.PushSource = { resume: () => Deferred.doneUnsafe(resumed, Exit.void) }
      const loop: Effect.Effect<void> = Effect.gen(function* () {
        for (;;) {
          const taken = yield* Effect.exit(Queue.take(inbox))
          if (Exit.isFailure(taken)) return receiver.end()
          resumed = Deferred.makeUnsafe<void>()
          if (!push.call(receiver, taken.value, source)) yield* Deferred.await(resumed)
        }
      })
      const fiber = Effect.runFork(loop)
      delivery = { interrupt: () => fiber.interruptUnsafe() }
      return true
    },
    close: Effect.suspend(() => {
      if (isClosed) return Effect.void
      isClosed = true
      return Effect.andThen(Queue.end(outbox), Queue.end(inbox)).pipe(
        Effect.andThen(
          Effect.sync(() => {
            if (mode !== "push") delivery?.interrupt()
          })
        )
      )
    })
  }
}

const makePair = (capacity: number): TransportContract.MakePair =>
  Effect.gen(function* () {
    const ab = yield* Queue.bounded<Transport.Incoming, Cause.Done>(capacity)
    const ba = yield* Queue.bounded<Transport.Incoming, Cause.Done>(capacity)
    const a = makeEnd(ba, ab)
    const b = makeEnd(ab, ba)
    yield* Effect.addFinalizer(() => Effect.andThen(a.close, b.close))
    return [a, b] as const
  })

Contract.suite("a transport written against the public contract only", makePair(64), {
  fastPaths: { trySend: true, push: true }
})

describe("a transport written against the public contract only", () => {
  it.effect("a client and a server session over it: 200 concurrent calls, each answered once", () =>
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* makePair(8)
      const echo: Session.Handler = (params) => Effect.succeed({ echoed: params })
      yield* ServerSession.make({
        serverInfo: { name: "s", version: "1" },
        capabilities: { tools: {} },
        handlers: new Map([["tools/call", echo]])
      }).pipe(Effect.provideService(Transport.Transport, serverEnd))
      const client = yield* ClientSession.make({
        clientInfo: { name: "c", version: "1" },
        capabilities: {},
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provideService(Transport.Transport, clientEnd))
      const results = yield* Effect.forEach(
        Array.from({ length: 200 }, (_, i) => i),
        (i) => client.request("tools/call", { name: "echo", arguments: { i } }),
        { concurrency: "unbounded" }
      )
      results.forEach((result, i) => {
        assert.deepStrictEqual((result as { echoed: { arguments: unknown } }).echoed.arguments, { i })
      })
    })
  )
})
