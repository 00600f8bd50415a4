import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { Mailbox } from "../src/internal/mailbox.ts"

const collect = (mailbox: Mailbox<number>) => Stream.runCollect(Stream.fromPull(Effect.succeed(mailbox.take)))

describe("Mailbox (MemoryTransport's inbox)", () => {
  it.effect("a sender resumed from a full mailbox keeps its place: its next offers follow, in order", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<number>(4)
      const reader = yield* Effect.forkChild(collect(mailbox))
      for (let i = 0; i < 50; i++) yield* mailbox.offer(i)
      mailbox.close()
      assert.deepStrictEqual(
        yield* Fiber.join(reader),
        Array.from({ length: 50 }, (_, i) => i)
      )
    })
  )

  it.effect("many senders past capacity are admitted in arrival order, each sender's frames in order", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<number>(2)
      const senders = yield* Effect.forEach([0, 1, 2], (s) =>
        Effect.forkChild(Effect.forEach([0, 1, 2, 3, 4], (i) => mailbox.offer(s * 10 + i), { discard: true }))
      )
      const reader = yield* Effect.forkChild(collect(mailbox))
      yield* Fiber.joinAll(senders)
      mailbox.close()
      const got = yield* Fiber.join(reader)
      assert.strictEqual(got.length, 15)
      for (const s of [0, 1, 2]) {
        assert.deepStrictEqual(
          got.filter((n) => Math.floor(n / 10) === s),
          [0, 1, 2, 3, 4].map((i) => s * 10 + i)
        )
      }
    })
  )

  it.effect("send suspends at capacity; an interrupted sender's frame is never delivered", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<number>(3)
      const sender = yield* Effect.forkChild(
        Effect.forEach([0, 1, 2, 3, 4], (i) => mailbox.offer(i), { discard: true })
      )
      yield* Effect.yieldNow
      assert.isUndefined(sender.pollUnsafe(), "the fourth offer suspends")
      yield* Fiber.interrupt(sender)
      const reader = yield* Effect.forkChild(collect(mailbox))
      yield* mailbox.offer(9)
      mailbox.close()
      assert.deepStrictEqual(yield* Fiber.join(reader), [0, 1, 2, 9])
    })
  )

  it.effect("after close, offers are refused and the reader ends once drained", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<number>(8)
      yield* mailbox.offer(1)
      mailbox.close()
      assert.isFalse(yield* mailbox.offer(2))
      assert.deepStrictEqual(yield* collect(mailbox), [1])
    })
  )
})
