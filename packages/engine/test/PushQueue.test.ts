import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as Schema from "effect/Schema"
import { PushQueue } from "../src/PushQueue.ts"
import { forkIdle } from "./fixtures.ts"

const collect = <A>(queue: PushQueue<A>) => Stream.runCollect(Stream.fromPull(Effect.succeed(queue.take)))

/** Lets the microtask wake-ups run: a few turns of the microtask queue, no timer. */
const microtasks = Effect.promise(async () => {
  for (let i = 0; i < 8; i++) await Promise.resolve()
})

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const capacity = between(1, 8)
const listOf = <S extends Schema.Top>(item: S, min: number, max: number) =>
  Schema.Array(item).check(Schema.isBetweenLength(min, max))

describe("PushQueue", () => {
  it.effect.prop(
    "order: each writer's items arrive in its order, none lost, whatever the capacity",
    [capacity, listOf(between(0, 12), 1, 5)],
    ([cap, counts]) =>
      Effect.gen(function* () {
        const queue = new PushQueue<readonly [number, number]>(cap)
        const reader = yield* Effect.forkChild(collect(queue))
        const writers = yield* Effect.forEach(counts, (count, w) =>
          Effect.forkChild(
            Effect.forEach(
              Array.from({ length: count }, (_, i) => i),
              (i) => queue.offer([w, i]),
              { discard: true }
            )
          )
        )
        yield* Fiber.joinAll(writers)
        queue.close()
        const got = yield* Fiber.join(reader)
        assert.strictEqual(
          got.length,
          counts.reduce((a, b) => a + b, 0)
        )
        counts.forEach((count, w) => {
          assert.deepStrictEqual(
            got.filter(([x]) => x === w).map(([, i]) => i),
            Array.from({ length: count }, (_, i) => i)
          )
        })
      })
  )

  it.effect.prop(
    "order: a consumer that pauses at random items still takes everything once, in order",
    [capacity, listOf(Schema.Boolean, 1, 40)],
    ([cap, pauses]) =>
      Effect.gen(function* () {
        const queue = new PushQueue<number>(cap)
        const taken: Array<number> = []
        let ended = 0
        queue.attach({
          push: (n) => {
            taken.push(n)
            if (!pauses[n]) return true
            // Resumed later, as a consumer whose handling went on in a fiber.
            queueMicrotask(queue.resume)
            return false
          },
          end: () => ended++
        })
        for (let n = 0; n < pauses.length; n++) assert.isTrue(yield* queue.offer(n))
        queue.close()
        while (ended === 0) yield* microtasks
        assert.deepStrictEqual(
          taken,
          pauses.map((_, n) => n)
        )
        assert.strictEqual(ended, 1)
      })
  )

  it.effect.prop(
    "bound: with nobody taking, exactly `capacity` offers complete and the line waits in FIFO order",
    [capacity, between(1, 6)],
    ([cap, extra]) =>
      Effect.gen(function* () {
        const queue = new PushQueue<number>(cap)
        for (let i = 0; i < cap; i++) assert.isTrue(yield* queue.offer(i))
        assert.isFalse(queue.hasRoom())
        assert.isFalse(queue.tryOffer(-1))
        const waiting = []
        for (let i = 0; i < extra; i++) {
          // Each writer is in line (at rest) before the next one comes.
          waiting.push(yield* forkIdle(queue.offer(cap + i)))
        }
        for (const fiber of waiting) assert.isUndefined(fiber.pollUnsafe(), "a writer past capacity waits")
        assert.strictEqual(queue.size, cap)
        // One take admits the line in arrival order, up to capacity.
        const first = yield* queue.take
        assert.deepStrictEqual(
          [...first],
          Array.from({ length: cap + Math.min(extra, cap) }, (_, i) => i)
        )
        assert.isAtMost(queue.size, cap)
      })
  )

  it.effect.prop(
    "interruption: an interrupted writer's item is never delivered; the others keep their places",
    [capacity, listOf(Schema.Boolean, 1, 8)],
    ([cap, interrupted]) =>
      Effect.gen(function* () {
        const queue = new PushQueue<number>(cap)
        for (let i = 0; i < cap; i++) yield* queue.offer(i)
        const writers = []
        for (let w = 0; w < interrupted.length; w++) {
          // Each writer is in line (at rest) before the next one comes.
          writers.push(yield* forkIdle(queue.offer(100 + w)))
        }
        yield* Effect.forEach(
          writers.filter((_, w) => interrupted[w]),
          Fiber.interrupt,
          { discard: true }
        )
        const reader = yield* Effect.forkChild(collect(queue))
        yield* Effect.forEach(
          writers.filter((_, w) => !interrupted[w]),
          (fiber) => Effect.map(Fiber.join(fiber), (ok) => assert.isTrue(ok)),
          { discard: true }
        )
        queue.close()
        assert.deepStrictEqual(yield* Fiber.join(reader), [
          ...Array.from({ length: cap }, (_, i) => i),
          ...interrupted.flatMap((x, w) => (x ? [] : [100 + w]))
        ])
      })
  )

  it.effect.prop(
    "line alone: enterLine joins whatever the room, admit hands items over in arrival order (unawaited ones too), an interrupted writer's item never comes, close refuses the rest",
    [listOf(Schema.Literals(["wait", "hold", "interrupt"]), 1, 10), between(0, 10)],
    ([kinds, admitted]) =>
      Effect.gen(function* () {
        const queue = new PushQueue<number>(16)
        const writers = []
        for (let i = 0; i < kinds.length; i++) {
          const place = queue.enterLine(i)
          // Each writer waits (at rest) before the next one comes.
          if (kinds[i] !== "hold") writers.push([i, yield* forkIdle(queue.awaitAdmission(place))] as const)
        }
        assert.strictEqual(queue.size, 0, "nothing is buffered")
        for (const [, fiber] of writers) assert.isUndefined(fiber.pollUnsafe(), "a writer in line waits for admit")
        yield* Effect.forEach(
          writers.filter(([i]) => kinds[i] === "interrupt"),
          ([, fiber]) => Fiber.interrupt(fiber),
          { discard: true }
        )
        const expected = kinds.flatMap((kind, i) => (kind === "interrupt" ? [] : [i]))
        assert.strictEqual(queue.waiting, expected.length)
        const taken: Array<number> = []
        for (let n = 0; n < admitted; n++) {
          const item = queue.admit()
          if (item !== undefined) taken.push(item)
        }
        assert.deepStrictEqual(taken, expected.slice(0, admitted))
        queue.close()
        assert.isUndefined(queue.admit(), "close empties the line")
        for (const [i, fiber] of writers) {
          if (kinds[i] === "interrupt") continue
          assert.strictEqual(yield* Fiber.join(fiber), taken.includes(i), `writer ${i}: admitted or refused`)
        }
        assert.isFalse(yield* queue.awaitAdmission(queue.enterLine(99)))
      })
  )

  it.effect("the taker is woken on a microtask, never inside offer", () =>
    Effect.gen(function* () {
      const queue = new PushQueue<number>(4)
      const taken: Array<number> = []
      queue.attach({ push: (n) => taken.push(n) > 0, end: () => {} })
      queue.offerNow(1)
      assert.deepStrictEqual(taken, [])
      yield* Effect.promise(() => Promise.resolve())
      assert.deepStrictEqual(taken, [1])
    })
  )

  it.effect(
    "queues woken in one turn take their items on one microtask, in that order; one woken from a wake-up, on a later one",
    () =>
      Effect.gen(function* () {
        const log: Array<string> = []
        const logging = (name: string, forward?: PushQueue<number>) => ({
          push: (n: number) => {
            log.push(`${name}${n}`)
            forward?.offerNow(n)
            return true
          },
          end: () => {}
        })
        const c = new PushQueue<number>(4)
        const a = new PushQueue<number>(4)
        const b = new PushQueue<number>(4)
        a.attach(logging("a", c))
        b.attach(logging("b"))
        c.attach(logging("c"))
        yield* microtasks
        a.offerNow(1)
        b.offerNow(2)
        a.offerNow(3)
        void Promise.resolve().then(() => log.push("queued after"))
        assert.deepStrictEqual(log, [])
        yield* microtasks
        assert.deepStrictEqual(log, ["a1", "a3", "b2", "queued after", "c1", "c3"])
        // Emptied and filled again, a queue keeps its order.
        for (const n of [4, 5, 6]) b.offerNow(n)
        yield* microtasks
        assert.deepStrictEqual(log.slice(6), ["b4", "b5", "b6"])
      })
  )

  it.effect("deliverNow hands the buffer to the attached consumer in the caller's stack, once, in order", () =>
    Effect.gen(function* () {
      const queue = new PushQueue<number>(4)
      const taken: Array<number> = []
      queue.attach({
        push: (n) => {
          taken.push(n)
          // A consumer that asks again while it is taking gets nothing twice.
          queue.deliverNow()
          return n !== 3
        },
        end: () => {}
      })
      for (const n of [1, 2]) queue.offerNow(n)
      queue.deliverNow()
      assert.deepStrictEqual(taken, [1, 2])
      // The consumer asks to wait after 3: 4 stays buffered until it resumes.
      for (const n of [3, 4]) queue.offerNow(n)
      queue.deliverNow()
      queue.deliverNow()
      assert.deepStrictEqual(taken, [1, 2, 3])
      yield* microtasks
      assert.deepStrictEqual(taken, [1, 2, 3])
      queue.resume()
      yield* microtasks
      assert.deepStrictEqual(taken, [1, 2, 3, 4])
    })
  )

  it.effect(
    "offerBeforeDelivery schedules no wake-up: its deliverNow, or a paused consumer's resume, hands it over",
    () =>
      Effect.gen(function* () {
        const queue = new PushQueue<number>(4)
        const taken: Array<number> = []
        let waitAfter = 2
        const resumed = Deferred.makeUnsafe<void>()
        queue.attach({
          push: (n) => {
            taken.push(n)
            if (n === 3) Deferred.doneUnsafe(resumed, Exit.void)
            return n !== waitAfter
          },
          end: () => {}
        })
        // Queues are woken in the order they asked, a turn's together: once a probe queue, attached after `queue`,
        // has taken its item, every wake-up asked for before it has run. The probe signals from outside its own
        // taking (a test resumed inside it would offer the next probe to the same pass, ahead of `queue`'s wake-up).
        const probe = new PushQueue<Deferred.Deferred<void>>(1)
        probe.attach({
          push: (done) => {
            queueMicrotask(() => Deferred.doneUnsafe(done, Exit.void))
            return true
          },
          end: () => {}
        })
        const wakeUpsDone = Effect.suspend(() => {
          const done = Deferred.makeUnsafe<void>()
          probe.offerNow(done)
          return Deferred.await(done)
        })
        yield* wakeUpsDone
        queue.offerBeforeDelivery(1)
        // Without its deliverNow the item stays buffered: nothing else was scheduled for it.
        yield* wakeUpsDone
        assert.deepStrictEqual(taken, [])
        queue.deliverNow()
        assert.deepStrictEqual(taken, [1])
        // The consumer asks to wait after 2: 3 is buffered for it, handed over on its resume.
        queue.offerBeforeDelivery(2)
        queue.offerBeforeDelivery(3)
        queue.deliverNow()
        assert.deepStrictEqual(taken, [1, 2])
        waitAfter = -1
        queue.resume()
        yield* Deferred.await(resumed)
        assert.deepStrictEqual(taken, [1, 2, 3])
        // Without a consumer it is offerNow: a reader is woken.
        const unattached = new PushQueue<number>(4)
        const reader = yield* Effect.forkChild(unattached.take)
        unattached.offerBeforeDelivery(7)
        assert.deepStrictEqual(yield* Fiber.join(reader), [7])
      })
  )

  it.effect("close: later offers and waiting writers are refused; the reader gets the buffer, then the error", () =>
    Effect.gen(function* () {
      const queue = new PushQueue<number, string>(1)
      yield* queue.offer(1)
      const writer = yield* forkIdle(queue.offer(2))
      queue.close("boom")
      assert.isFalse(yield* Fiber.join(writer))
      assert.isFalse(yield* queue.offer(3))
      assert.deepStrictEqual(yield* queue.take, [1])
      assert.strictEqual(yield* Effect.flip(queue.take), "boom")
    })
  )

  it.effect("a producer that overfills with offerNow learns when the consumer took the buffer", () =>
    Effect.gen(function* () {
      let taken = 0
      const queue = new PushQueue<number>(2, () => taken++)
      for (const n of [1, 2, 3]) queue.offerNow(n)
      assert.isFalse(queue.hasRoom())
      assert.deepStrictEqual(yield* queue.take, [1, 2, 3])
      assert.strictEqual(taken, 1)
    })
  )

  it.effect("halt drops the buffer and ends an attached consumer's deliveries without `end`", () =>
    Effect.gen(function* () {
      const queue = new PushQueue<number>(4)
      const taken: Array<number> = []
      let ended = 0
      queue.attach({
        push: (n) => {
          taken.push(n)
          if (n === 1) queue.halt()
          return true
        },
        end: () => ended++
      })
      for (const n of [1, 2, 3]) queue.offerNow(n)
      yield* microtasks
      assert.deepStrictEqual(taken, [1])
      assert.strictEqual(ended, 0)
      assert.isFalse(yield* queue.offer(4))
    })
  )
})
