import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { PushQueue } from "../src/PushQueue.ts"
import { forkIdle } from "./fixtures.ts"

const collect = (mailbox: PushQueue<number>) => Stream.runCollect(Stream.fromPull(Effect.succeed(mailbox.take)))

describe("PushQueue scenarios (MemoryTransport inbox)", () => {
  it.effect("a sender resumed from a full mailbox keeps its place: its next offers follow, in order", () =>
    Effect.gen(function* () {
      const mailbox = new PushQueue<number>(4)
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
      const mailbox = new PushQueue<number>(2)
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
      const mailbox = new PushQueue<number>(3)
      const sender = yield* forkIdle(Effect.forEach([0, 1, 2, 3, 4], (i) => mailbox.offer(i), { discard: true }))
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
      const mailbox = new PushQueue<number>(8)
      yield* mailbox.offer(1)
      mailbox.close()
      assert.isFalse(yield* mailbox.offer(2))
      assert.deepStrictEqual(yield* collect(mailbox), [1])
    })
  )

  it.effect(
    "an attached consumer takes items in order on a microtask, waits when it asks to, and ends after close",
    () =>
      Effect.gen(function* () {
        const mailbox = new PushQueue<number>(3)
        const taken: Array<number> = []
        let ended = 0
        mailbox.attach({
          push: (n) => {
            taken.push(n)
            // 2 asks the mailbox to wait, as a frame whose handling goes on in a fiber does.
            return n !== 2
          },
          end: () => ended++
        })
        for (const n of [1, 2, 3]) assert.isTrue(yield* mailbox.offer(n))
        assert.deepStrictEqual(taken, [], "nothing is handed over inside offer")
        yield* Effect.promise(() => Promise.resolve())
        assert.deepStrictEqual(taken, [1, 2])
        // 3 waits in front; the mailbox is full again after 4 and 5, so 6 waits for room.
        yield* mailbox.offer(4)
        yield* mailbox.offer(5)
        const sender = yield* forkIdle(mailbox.offer(6))
        assert.isUndefined(sender.pollUnsafe())
        mailbox.resume()
        yield* Effect.promise(() => Promise.resolve())
        assert.isTrue(yield* Fiber.join(sender))
        assert.deepStrictEqual(taken, [1, 2, 3, 4, 5, 6])
        // 2 again: the consumer waits, and a close then ends it only once it has taken the rest.
        yield* mailbox.offer(2)
        yield* mailbox.offer(8)
        yield* Effect.promise(() => Promise.resolve())
        mailbox.close()
        assert.isFalse(yield* mailbox.offer(9))
        yield* Effect.promise(() => Promise.resolve())
        assert.strictEqual(ended, 0)
        mailbox.resume()
        yield* Effect.promise(() => Promise.resolve())
        assert.deepStrictEqual(taken, [1, 2, 3, 4, 5, 6, 2, 8])
        assert.strictEqual(ended, 1)
      })
  )

  it.effect("an attached consumer is told when it took everything (idle), not while it waits nor after the end", () =>
    Effect.gen(function* () {
      const mailbox = new PushQueue<number>(4)
      const seen: Array<string> = []
      mailbox.attach({
        push: (n) => {
          seen.push(String(n))
          return n !== 2
        },
        end: () => seen.push("end"),
        idle: () => seen.push("idle")
      })
      const turn = Effect.promise(() => Promise.resolve())
      yield* mailbox.offer(1)
      yield* turn
      assert.deepStrictEqual(seen, ["1", "idle"])
      // 2 asks to wait with 3 behind it: no idle until it resumes and 3 is taken.
      yield* mailbox.offer(2)
      yield* mailbox.offer(3)
      yield* turn
      assert.deepStrictEqual(seen, ["1", "idle", "2"])
      mailbox.resume()
      yield* turn
      assert.deepStrictEqual(seen, ["1", "idle", "2", "3", "idle"])
      yield* mailbox.offer(4)
      mailbox.close()
      yield* turn
      assert.deepStrictEqual(seen, ["1", "idle", "2", "3", "idle", "4", "end"])
    })
  )
})
