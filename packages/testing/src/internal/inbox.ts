/**
 * Frames received from a transport, kept for inspection: every frame ever
 * received (`history`) and those no expectation has taken yet (`pending`).
 * Waiters re-check their condition after every arrival, so taking a frame out
 * of the middle of `pending` is as cheap as taking the first.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

export interface Inbox<A, E> {
  readonly history: ReadonlyArray<A>
  readonly pending: Array<A>
  /** How the source ended, once it has. */
  readonly ended: () => Exit.Exit<void, E> | undefined
  /**
   * Waits until `check` returns a value or the source ends (then `check` gets
   * one last look). Nothing here sleeps: callers bound the wait with a timeout.
   */
  readonly waitFor: <B>(check: () => B | undefined) => Effect.Effect<B | undefined>
}

/**
 * Reads `source` into an inbox on a fiber of the current scope. `keep` decides
 * what becomes pending; `record` what is recorded at all (a frame it refuses
 * still wakes the waiters, so a waiter can watch for it through its own state).
 */
export const make = Effect.fnUntraced(function* <A, E>(
  source: Stream.Stream<A, E>,
  keep: (a: A) => boolean = () => true,
  record: (a: A) => boolean = () => true
): Effect.fn.Return<Inbox<A, E>, never, Scope.Scope> {
  const history: Array<A> = []
  const pending: Array<A> = []
  let ended: Exit.Exit<void, E> | undefined
  let signal = Deferred.makeUnsafe<void>()

  const notify = () => {
    const current = signal
    signal = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(current, Exit.void)
  }

  const waitFor = <B>(check: () => B | undefined): Effect.Effect<B | undefined> =>
    Effect.suspend(() => {
      const found = check()
      if (found !== undefined || ended !== undefined) return Effect.succeed(found)
      return Effect.andThen(Deferred.await(signal), waitFor(check))
    })

  yield* Stream.runForEachArray(source, (items) =>
    Effect.sync(() => {
      for (const item of items) {
        if (!record(item)) continue
        history.push(item)
        if (keep(item)) pending.push(item)
      }
      notify()
    })
  ).pipe(
    Effect.exit,
    Effect.flatMap((exit) =>
      Effect.sync(() => {
        ended = exit
        notify()
      })
    ),
    Effect.forkScoped
  )

  return { history, pending, ended: () => ended, waitFor }
})
