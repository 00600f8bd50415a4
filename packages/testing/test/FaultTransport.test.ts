import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as FaultTransport from "../src/FaultTransport.ts"
import * as TestPeer from "../src/TestPeer.ts"

const n = (i: number) => JsonRpc.notification("n", { i })

const indexOf = (message: JsonRpc.Message): number =>
  (message as JsonRpc.Notification & { params: { i: number } }).params.i

/**
 * A TestPeer whose counterpart (the code-under-test end) is wrapped in faults.
 * That end is a bare transport that answers no request, so the peer's
 * `settle` waits only for the frames already sent (`ping: false`).
 */
const faulty = (options: FaultTransport.Options, peerOptions: TestPeer.Options = { ping: false }) =>
  Effect.gen(function* () {
    const tp = yield* TestPeer.make(peerOptions)
    const transport = yield* FaultTransport.make(tp.transport, options)
    return { tp, transport }
  })

/** Sends n(0..count-1) from the wrapped side and returns the indices the peer received. */
const sendOut = (options: FaultTransport.Options, count: number) =>
  Effect.gen(function* () {
    const { tp, transport } = yield* faulty(options)
    for (let i = 0; i < count; i++) yield* transport.send(n(i))
    yield* tp.settle
    const indices = (yield* tp.messages).map(indexOf)
    return { indices, events: yield* transport.events, tp, transport }
  })

/** The peer sends n(0..count-1); returns the indices the wrapped side receives (until `take`). */
const receiveIn = (options: FaultTransport.Options, count: number, take: number) =>
  Effect.gen(function* () {
    const { tp, transport } = yield* faulty(options)
    for (let i = 0; i < count; i++) yield* tp.send(n(i))
    const frames = yield* Stream.runCollect(Stream.take(transport.incoming, take))
    return {
      indices: frames.map((frame) => (Result.isSuccess(frame) ? indexOf(frame.success as JsonRpc.Message) : -1)),
      events: yield* transport.events
    }
  })

describe("FaultTransport", () => {
  it.effect("drops every n-th outgoing frame", () =>
    Effect.gen(function* () {
      const { indices, events } = yield* sendOut({ outgoing: { drop: { every: 3 } } }, 9)
      assert.deepStrictEqual(indices, [0, 1, 3, 4, 6, 7])
      assert.deepStrictEqual(
        events.map((e) => [e.direction, e.fault, e.index]),
        [
          ["outgoing", "drop", 2],
          ["outgoing", "drop", 5],
          ["outgoing", "drop", 8]
        ]
      )
    })
  )

  it.effect("drops incoming frames chosen by a predicate", () =>
    Effect.gen(function* () {
      const { indices } = yield* receiveIn(
        {
          incoming: {
            drop: { when: (frame) => Result.isSuccess(frame) && indexOf(frame.success as JsonRpc.Message) % 2 === 1 }
          }
        },
        6,
        3
      )
      assert.deepStrictEqual(indices, [0, 2, 4])
    })
  )

  it.effect("duplicates chosen frames", () =>
    Effect.gen(function* () {
      const outgoing = yield* sendOut({ outgoing: { duplicate: { at: [1] } } }, 3)
      assert.deepStrictEqual(outgoing.indices, [0, 1, 1, 2])
      const incoming = yield* receiveIn({ incoming: { duplicate: "all" } }, 2, 4)
      assert.deepStrictEqual(incoming.indices, [0, 0, 1, 1])
    })
  )

  it.effect("reorders by swapping adjacent frames or holding one back further", () =>
    Effect.gen(function* () {
      const swapped = yield* sendOut({ outgoing: { reorder: { select: { at: [0, 3] } } } }, 6)
      assert.deepStrictEqual(swapped.indices, [1, 0, 2, 4, 3, 5])
      const held = yield* receiveIn({ incoming: { reorder: { select: { at: [1] }, by: 3 } } }, 6, 6)
      assert.deepStrictEqual(held.indices, [0, 2, 3, 4, 1, 5])
    })
  )

  it.effect("releases a held-back frame at end of stream or on close", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({
        incoming: { reorder: { select: { at: [1] } } },
        outgoing: { reorder: { select: "all" } }
      })
      yield* tp.send(n(0))
      yield* tp.send(n(1))
      yield* tp.close
      const frames = yield* Stream.runCollect(transport.incoming)
      assert.strictEqual(frames.length, 2)

      const other = yield* faulty({ outgoing: { reorder: { select: "all" } } })
      yield* other.transport.send(n(7))
      yield* other.tp.expectNothing()
      yield* other.transport.close
      const message = yield* other.tp.expectNotification("n")
      assert.strictEqual(indexOf(message), 7)
    })
  )

  it.effect("close sends the frames still on their delay at once, in order, held-back ones after them", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({
        outgoing: { delay: { duration: "1 second" }, reorder: { select: { at: [2] } } }
      })
      for (let i = 0; i < 3; i++) yield* transport.send(n(i))
      yield* tp.expectNothing()
      // No time passes: a closed link still delivers what was written to it. Before, the delayed frames were
      // lost (the wrapped transport was closed under them) and nothing recorded it.
      yield* transport.close
      assert.deepStrictEqual(
        [yield* tp.expectNotification("n"), yield* tp.expectNotification("n"), yield* tp.expectNotification("n")].map(
          indexOf
        ),
        [0, 1, 2]
      )
    })
  )

  it.effect("a delayed outgoing frame arrives exactly at the configured TestClock time", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({ outgoing: { delay: { duration: "250 millis" } } })
      yield* transport.send(n(0))
      yield* tp.expectNothing()
      yield* TestClock.adjust("249 millis")
      yield* tp.expectNothing()
      yield* TestClock.adjust("1 millis")
      const message = yield* tp.expectNotification("n")
      assert.strictEqual(indexOf(message), 0)
      const [event] = yield* transport.events
      assert.deepStrictEqual(event, { direction: "outgoing", fault: "delay", index: 0, at: 0 })
    })
  )

  it.effect("a delayed incoming frame arrives exactly at the configured TestClock time", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({ incoming: { delay: { duration: "1 second" } } })
      const reader = yield* Effect.forkChild(Stream.runCollect(Stream.take(transport.incoming, 1)))
      yield* TestClock.adjust("500 millis")
      yield* tp.send(n(0))
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(reader.pollUnsafe(), "delivered before its time")
      yield* TestClock.adjust("1 millis")
      const frames = yield* Fiber.join(reader)
      assert.strictEqual(frames.length, 1)
    })
  )

  it.effect("delays keep order: a frame behind a delayed one waits for it", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({ outgoing: { delay: { duration: "100 millis", select: { at: [0] } } } })
      yield* transport.send(n(0))
      yield* transport.send(n(1))
      yield* tp.expectNothing()
      yield* TestClock.adjust("100 millis")
      assert.strictEqual(indexOf(yield* tp.expectNotification("n")), 0)
      assert.strictEqual(indexOf(yield* tp.expectNotification("n")), 1)
    })
  )

  it.effect("cuts the connection after n outgoing frames", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({ outgoing: { cut: { after: 2 } } })
      yield* transport.send(n(0))
      yield* transport.send(n(1))
      const error = yield* Effect.flip(transport.send(n(2)))
      assert.strictEqual(error.reason, "Closed")
      yield* tp.expectNotification("n")
      yield* tp.expectNotification("n")
      yield* tp.expectClosed()
      // The wrapped side's incoming has ended as well.
      assert.deepStrictEqual(yield* Stream.runCollect(transport.incoming), [])
      const events = yield* transport.events
      assert.deepStrictEqual(events.at(-1), { direction: "outgoing", fault: "cut", index: 1, at: 0 })
    })
  )

  it.effect("cuts the connection after n incoming frames with a given error", () =>
    Effect.gen(function* () {
      const reset = new Transport.TransportError({ reason: "Io", message: "connection reset" })
      const { tp, transport } = yield* faulty({ incoming: { cut: { after: 1, error: reset } } })
      yield* tp.send(n(0))
      yield* tp.send(n(1))
      const exit = yield* Effect.exit(Stream.runCollect(transport.incoming))
      assert.isTrue(Exit.isFailure(exit))
      const sendError = yield* Effect.flip(transport.send(n(9)))
      assert.strictEqual(sendError.reason, "Io")
      yield* tp.expectClosed()
    })
  )

  it.effect("an incoming cut delivers the first n frames, then fails the stream", () =>
    Effect.gen(function* () {
      const reset = new Transport.TransportError({ reason: "Io", message: "connection reset" })
      const { tp, transport } = yield* faulty({ incoming: { cut: { after: 2, error: reset } } })
      for (let i = 0; i < 5; i++) yield* tp.send(n(i))
      const received: Array<number> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(transport.incoming, (frame) =>
          Effect.sync(() => {
            if (Result.isSuccess(frame)) received.push(indexOf(frame.success as JsonRpc.Message))
          })
        )
      )
      assert.deepStrictEqual(received, [0, 1])
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
        assert.isTrue(reason !== undefined && reason._tag === "Fail" && reason.error.reason === "Io")
      }
    })
  )

  it.effect("a cut at zero frames ends the connection at once", () =>
    Effect.gen(function* () {
      const { tp, transport } = yield* faulty({ outgoing: { cut: { after: 0 } } })
      const error = yield* Effect.flip(transport.send(n(0)))
      assert.strictEqual(error.reason, "Closed")
      yield* tp.expectClosed()
    })
  )

  it.effect("seeded random faults are deterministic, and differ between seeds", () =>
    Effect.gen(function* () {
      const run = (seed: number) =>
        sendOut({ outgoing: { drop: { random: { probability: 0.3, seed } } } }, 200).pipe(
          Effect.map((r) => r.indices),
          Effect.scoped
        )
      const first = yield* run(42)
      const again = yield* run(42)
      const other = yield* run(7)
      assert.deepStrictEqual(first, again)
      assert.notDeepEqual(first, other)
      assert.isAbove(first.length, 100)
      assert.isBelow(first.length, 180)
    })
  )

  it.effect("a seeded selector picks the same frames whatever other faults are combined with it", () =>
    Effect.gen(function* () {
      const alone = yield* sendOut({ outgoing: { duplicate: { random: { probability: 0.2, seed: 3 } } } }, 50)
      const combined = yield* sendOut(
        {
          outgoing: {
            duplicate: { random: { probability: 0.2, seed: 3 } },
            drop: { random: { probability: 0.5, seed: 9 } }
          }
        },
        50
      )
      const duplicated = (events: ReadonlyArray<FaultTransport.FaultEvent>) =>
        events.filter((e) => e.fault === "duplicate").map((e) => e.index)
      const dropped = new Set(combined.events.filter((e) => e.fault === "drop").map((e) => e.index))
      assert.deepStrictEqual(
        duplicated(combined.events),
        duplicated(alone.events).filter((i) => !dropped.has(i))
      )
    })
  )

  it.effect("keeps backpressure: sends suspend when the receiving side does not read", () =>
    Effect.gen(function* () {
      const [a, b] = yield* MemoryTransport.makePair({ capacity: 4 })
      yield* FaultTransport.make(b, { capacity: 4, incoming: { duplicate: "all" } })
      // The sender starts on a TestClock wake: `adjust` returns once it, and every
      // fiber it woke (the fault pump), has suspended, blocked or done.
      const sender = yield* Effect.forkChild(
        Effect.andThen(
          Effect.sleep(1),
          Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], (i) => a.send(n(i)))
        )
      )
      yield* TestClock.adjust(1)
      assert.isUndefined(sender.pollUnsafe())
      yield* Fiber.interrupt(sender)
    })
  )

  it.effect("layer wraps the current Transport", () =>
    Effect.gen(function* () {
      const tp = yield* TestPeer.make({ ping: false })
      yield* Effect.gen(function* () {
        const transport = yield* Transport.Transport
        yield* transport.send(n(0))
        yield* transport.send(n(1))
      }).pipe(Effect.provide(FaultTransport.layer({ outgoing: { drop: { at: [0] } } }).pipe(Layer.provide(tp.layer))))
      assert.strictEqual(indexOf(yield* tp.expectNotification("n")), 1)
      yield* tp.expectNothing()
    })
  )
})
