/**
 * The Streamable HTTP client's POST order rule, alone, on the TestClock: when
 * each frame's POST may start, given which POSTs ahead of it the server has
 * accepted or received.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { PostOrder, type Slot } from "../src/internal/httpClientOrder.ts"
import { forkIdle, runIdle } from "../../engine/test/fixtures.ts"

const MiB = 1024 * 1024

/**
 * Starts waiting for the slot's turn and returns once the waiter has come to
 * rest (see `forkIdle`: the clock moves 1 ms); `done()` tells whether it came.
 */
const waitFor = (slot: Slot) =>
  Effect.map(forkIdle(slot.before), (fiber) => ({
    fiber,
    done: () => fiber.pollUnsafe() !== undefined
  }))

/** Takes a step of the order (an upload, an acceptance) and returns once every waiter it woke has come to rest. */
const step = (f: () => void) => runIdle(Effect.sync(f))

describe("Streamable HTTP client: the POST order rule", () => {
  it.effect("a notification after a request waits for its acceptance, or acceptTimeout after its upload", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const request = order.next(true, false)
      const notification = yield* waitFor(order.next(false, false))
      assert.isFalse(notification.done(), "nothing uploaded yet")
      yield* step(() => order.uploaded(request.entry))
      yield* TestClock.adjust(999)
      assert.isFalse(notification.done(), "the server may still be reading the request")
      yield* TestClock.adjust(1)
      assert.isTrue(notification.done(), "acceptTimeout after the upload")
    })
  )

  it.effect("the acceptance of the request lets the notification go at once", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const request = order.next(true, false)
      const notification = yield* waitFor(order.next(false, false))
      yield* step(() => order.uploaded(request.entry))
      assert.isFalse(notification.done())
      yield* step(() => order.accept(request.entry))
      assert.isTrue(notification.done())
    })
  )

  it.effect("a large body extends the wait by 100 millis per MiB", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const request = order.next(true, false)
      request.entry.bytes = 4 * MiB
      const notification = yield* waitFor(order.next(false, false))
      yield* step(() => order.uploaded(request.entry))
      yield* TestClock.adjust(1399)
      assert.isFalse(notification.done())
      yield* TestClock.adjust(1)
      assert.isTrue(notification.done())
    })
  )

  it.effect("a request after a request waits only for the previous upload, not its acceptance", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const first = order.next(true, false)
      const second = yield* waitFor(order.next(true, false))
      assert.isFalse(second.done(), "the previous body is still being uploaded")
      yield* step(() => order.uploaded(first.entry))
      assert.isTrue(second.done(), "no acceptance needed between requests")
    })
  )

  it.effect("a request after a notification waits for the notification's acceptance", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const notification = order.next(false, false)
      const request = yield* waitFor(order.next(true, false))
      yield* TestClock.adjust(60_000)
      assert.isFalse(request.done(), "a notification has no upload to time out from")
      yield* step(() => order.accept(notification.entry))
      assert.isTrue(request.done())
    })
  )

  it.effect("after a stateless request there is no session order: its upload is enough", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const request = order.next(true, true)
      const notification = yield* waitFor(order.next(false, false))
      yield* step(() => order.uploaded(request.entry))
      assert.isTrue(notification.done())
    })
  )

  it.effect("a settled POST (however it ended) lets everything behind it go", () =>
    Effect.gen(function* () {
      const order = new PostOrder(1000)
      const request = order.next(true, false)
      const notification = order.next(false, false)
      const last = yield* waitFor(order.next(false, false))
      yield* runIdle(order.settle(request.entry))
      assert.isFalse(last.done(), "the notification ahead is not accepted yet")
      yield* runIdle(order.settle(notification.entry))
      assert.isTrue(last.done())
      yield* Fiber.join(last.fiber)
    })
  )
})
