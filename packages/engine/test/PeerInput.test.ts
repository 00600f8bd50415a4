import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import { type ClosedExit, PeerInput } from "../src/internal/peerInput.ts"

/** Lets the microtask wake-ups run: a few turns of the microtask queue, no timer. */
const microtasks = Effect.promise(async () => {
  for (let i = 0; i < 8; i++) await Promise.resolve()
})

const frame = (id: number): Transport.Incoming => Result.succeed(JsonRpc.request(id, "ping"))
const idOf = (incoming: Transport.Incoming) => (Result.getOrThrow(incoming) as { readonly id: number }).id

/**
 * A PeerInput over a recording host: frames whose id is in `slow` are handled
 * in a fiber that waits for `release`, as a notification handler does.
 */
const recording = (slow: ReadonlySet<number>) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<never>()
    const release = yield* Deferred.make<void>()
    const handled: Array<number> = []
    const finished: Array<ClosedExit> = []
    // PeerInput is the Peer's base class: the recording host is a subclass of it here.
    const input = new (class extends PeerInput {
      readonly context = context
      onFrame(incoming: Transport.Incoming) {
        const id = idOf(incoming)
        if (!slow.has(id)) {
          handled.push(id)
          return undefined
        }
        return Effect.andThen(
          Deferred.await(release),
          Effect.sync(() => handled.push(id))
        )
      }
      inputFinished(exit: ClosedExit) {
        finished.push(exit)
      }
    })()
    // The queue is private: read it to check that an idle input keeps none (W4, memory per idle session).
    const holdsQueue = () => Reflect.get(input, "queue") !== undefined
    return { input, release, handled, finished, holdsQueue }
  })

describe("PeerInput (offered frames)", () => {
  it.effect("an input whose queue emptied keeps none, and frames offered after it refills keep their order", () =>
    Effect.gen(function* () {
      const { input, release, handled, finished, holdsQueue } = yield* recording(new Set([3]))
      assert.isFalse(holdsQueue())
      assert.isTrue(yield* input.offer(frame(1)))
      assert.isTrue(yield* input.offer(frame(2)))
      // Handled a turn later, in order; then the emptied queue is dropped.
      assert.deepStrictEqual(handled, [])
      yield* microtasks
      assert.deepStrictEqual(handled, [1, 2])
      assert.isFalse(holdsQueue())
      // Refilled: 3 is handled in a fiber, 4 and 5 wait behind it in a new queue, kept while they wait.
      for (const id of [3, 4, 5]) assert.isTrue(yield* input.offer(frame(id)))
      yield* microtasks
      assert.deepStrictEqual(handled, [1, 2])
      assert.isTrue(holdsQueue())
      assert.isTrue(yield* input.offer(frame(6)))
      yield* Deferred.succeed(release, undefined)
      yield* microtasks
      assert.deepStrictEqual(handled, [1, 2, 3, 4, 5, 6])
      assert.isFalse(holdsQueue())
      // Emptied once more: the next frame still comes after all of them, and the end after it.
      assert.isTrue(yield* input.offer(frame(7)))
      input.end()
      assert.isFalse(yield* input.offer(frame(8)))
      yield* input.drained
      yield* microtasks
      assert.deepStrictEqual(handled, [1, 2, 3, 4, 5, 6, 7])
      assert.strictEqual(finished.length, 1)
      assert.isTrue(Exit.isSuccess(finished[0]!))
      assert.isFalse(yield* input.offer(frame(9)))
      assert.isFalse(holdsQueue())
    })
  )

  it.effect("an input ended while a frame is being handled finishes after that frame and keeps no queue", () =>
    Effect.gen(function* () {
      const { input, release, handled, finished, holdsQueue } = yield* recording(new Set([1]))
      assert.isTrue(yield* input.offer(frame(1)))
      yield* microtasks
      // 1 is handled in a fiber: the queue it came from waits for it.
      assert.isTrue(holdsQueue())
      input.end()
      assert.isFalse(yield* input.offer(frame(2)))
      assert.deepStrictEqual(finished, [])
      yield* Deferred.succeed(release, undefined)
      yield* input.drained
      yield* microtasks
      assert.deepStrictEqual(handled, [1])
      assert.strictEqual(finished.length, 1)
      assert.isFalse(holdsQueue())
    })
  )
})

describe("PeerInput (offerHandedOver)", () => {
  it.effect(
    "succeeds once the frame was handed over: at its wake-up, or behind a slow frame once that is handled",
    () =>
      Effect.gen(function* () {
        const { input, release, handled, holdsQueue } = yield* recording(new Set([2]))
        // Handed over at the queue's wake-up (never on the caller's stack): handled when the offer returns.
        assert.isTrue(yield* input.offerHandedOver(frame(1)))
        assert.deepStrictEqual(handled, [1])
        // 2 is handled in a fiber; 3 is queued behind it and not handed over until 2 is done.
        assert.isTrue(yield* input.offerHandedOver(frame(2)))
        const third = yield* Effect.forkChild(input.offerHandedOver(frame(3)))
        yield* microtasks
        assert.isUndefined(third.pollUnsafe())
        assert.deepStrictEqual(handled, [1])
        yield* Deferred.succeed(release, undefined)
        assert.isTrue(yield* Fiber.join(third))
        assert.deepStrictEqual(handled, [1, 2, 3])
        // No waiting offer is kept once all were handed over (W4: an idle input holds nothing).
        assert.isUndefined(Reflect.get(input, "handovers"))
        yield* microtasks
        assert.isFalse(holdsQueue())
      })
  )

  it.effect("a frame the stopped input dropped, or one offered after, was not handed over: false", () =>
    Effect.gen(function* () {
      const { input, handled } = yield* recording(new Set([1]))
      assert.isTrue(yield* input.offerHandedOver(frame(1)))
      const waiting = yield* Effect.forkChild(input.offerHandedOver(frame(2)))
      yield* microtasks
      input.stopInput(Exit.void)
      assert.isFalse(yield* Fiber.join(waiting))
      assert.isFalse(yield* input.offerHandedOver(frame(3)))
      assert.deepStrictEqual(handled, [])
    })
  )
})
