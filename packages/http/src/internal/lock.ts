/**
 * A mutex meant to be extended by objects kept in large numbers: while nobody
 * waits it costs one field of the object that extends it (a Semaphore is an
 * object, a waiter Set and a closure: ~300 bytes each). Waiters are served in
 * arrival order; an interrupted waiter leaves the line, and a permit handed
 * to a waiter interrupted at the same moment is passed on.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"

interface Waiter {
  readonly resume: (effect: Effect.Effect<void>) => void
  granted: boolean
}

const acquired = Effect.void

/** The lock is held and nobody waits (never pushed to: a first waiter gets an array of its own). */
const held: Array<Waiter> = []

export class Lock {
  // Undefined while free; held, the waiters (`held` while there are none).
  private lockWaiters: Array<Waiter> | undefined = undefined

  /** Runs `effect` holding the lock; only the wait for it (and `effect`) keep the caller's interruptibility. */
  withLock<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.andThen(
        restore(this.acquire()),
        Effect.ensuring(
          restore(effect),
          Effect.withFiber((fiber) => {
            this.unlock(fiber)
            return acquired
          })
        )
      )
    )
  }

  private acquire(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.lockWaiters === undefined) {
        this.lockWaiters = held
        return acquired
      }
      return Effect.callback<void>((resume) => {
        const waiter: Waiter = { resume, granted: false }
        if (this.lockWaiters === held) this.lockWaiters = [waiter]
        else this.lockWaiters!.push(waiter)
        return Effect.withFiber((fiber) => {
          // Interrupted after the lock was handed over: hand it to the next.
          if (waiter.granted) {
            this.unlock(fiber)
            return acquired
          }
          const index = this.lockWaiters?.indexOf(waiter) ?? -1
          if (index >= 0) this.lockWaiters!.splice(index, 1)
          return acquired
        })
      })
    })
  }

  /** Hands the lock to the next waiter (which resumes on the scheduler, not inside this fiber). */
  private unlock(fiber: Fiber.Fiber<unknown, unknown>): void {
    const next = this.lockWaiters?.shift()
    if (next === undefined) {
      this.lockWaiters = undefined
      return
    }
    next.granted = true
    fiber.currentDispatcher.scheduleTask(() => next.resume(acquired), 0)
  }
}
