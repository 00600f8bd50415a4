import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { Lock } from "../src/internal/lock.ts"

class Guarded extends Lock {
  holders = 0
  maxHolders = 0
  readonly log: Array<string> = []

  /** Holds the lock while `gate` is open, recording who entered and when. */
  hold(name: string, gate: Deferred.Deferred<void>) {
    const self = this
    return this.withLock(
      Effect.gen(function* () {
        self.holders++
        self.maxHolders = Math.max(self.maxHolders, self.holders)
        self.log.push(`${name}:in`)
        yield* Deferred.await(gate)
        self.log.push(`${name}:out`)
      }).pipe(Effect.ensuring(Effect.sync(() => self.holders--)))
    )
  }
}

describe("Lock (the HTTP session's mutex)", () => {
  it.effect("an uncontended lock runs its effect at once and is free again after", () =>
    Effect.gen(function* () {
      const lock = new Guarded()
      const open = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(open, Exit.void)
      yield* lock.hold("a", open)
      yield* lock.hold("b", open)
      assert.deepStrictEqual(lock.log, ["a:in", "a:out", "b:in", "b:out"])
      assert.strictEqual(lock.maxHolders, 1)
    })
  )

  it.effect("waiters get the lock one at a time, in arrival order", () =>
    Effect.gen(function* () {
      const lock = new Guarded()
      const gates = [0, 1, 2, 3].map(() => Deferred.makeUnsafe<void>())
      const fibers: Array<Fiber.Fiber<void>> = []
      for (let i = 0; i < 4; i++) {
        fibers.push(yield* Effect.forkChild(lock.hold(`f${i}`, gates[i]!), { startImmediately: true }))
      }
      assert.deepStrictEqual(lock.log, ["f0:in"])
      // Released in reverse order: each still waits for its turn.
      for (let i = 3; i >= 0; i--) yield* Deferred.succeed(gates[i]!, undefined)
      yield* Fiber.joinAll(fibers)
      assert.deepStrictEqual(lock.log, ["f0:in", "f0:out", "f1:in", "f1:out", "f2:in", "f2:out", "f3:in", "f3:out"])
      assert.strictEqual(lock.maxHolders, 1)
    })
  )

  it.effect("an interrupted waiter leaves the line; the holder's failure releases the lock", () =>
    Effect.gen(function* () {
      const lock = new Guarded()
      const first = Deferred.makeUnsafe<void>()
      const open = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(open, Exit.void)
      const holder = yield* Effect.forkChild(
        lock.withLock(Effect.andThen(Deferred.await(first), Effect.fail("boom" as const))),
        { startImmediately: true }
      )
      const quitter = yield* Effect.forkChild(lock.hold("quitter", open), { startImmediately: true })
      const next = yield* Effect.forkChild(lock.hold("next", open), { startImmediately: true })
      yield* Fiber.interrupt(quitter)
      yield* Deferred.succeed(first, undefined)
      assert.deepStrictEqual(yield* Fiber.await(holder), Exit.fail("boom"))
      yield* Fiber.join(next)
      assert.deepStrictEqual(lock.log, ["next:in", "next:out"])
      // Free again: a new holder enters at once.
      yield* lock.hold("last", open)
      assert.deepStrictEqual(lock.log.slice(2), ["last:in", "last:out"])
    })
  )

  it.effect("a waiter interrupted after the lock was handed to it passes it on", () =>
    Effect.gen(function* () {
      const lock = new Guarded()
      const first = Deferred.makeUnsafe<void>()
      const open = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(open, Exit.void)
      const holder = yield* Effect.forkChild(lock.hold("holder", first), { startImmediately: true })
      const handed = yield* Effect.forkChild(lock.hold("handed", open), { startImmediately: true })
      const next = yield* Effect.forkChild(lock.hold("next", open), { startImmediately: true })
      // The release hands the lock to `handed`, whose resumption waits for the
      // scheduler; interrupting it in between must not lose the lock.
      yield* Effect.uninterruptible(
        Effect.andThen(
          Deferred.succeed(first, undefined),
          Effect.sync(() => handed.interruptUnsafe())
        )
      )
      yield* Fiber.join(holder)
      yield* Fiber.await(handed)
      yield* Fiber.join(next)
      assert.isTrue(lock.log.includes("next:out"))
      assert.strictEqual(lock.maxHolders, 1)
    })
  )
})
