/**
 * Scheduler turns without moving the clock: how the testing kit lets the code
 * under test react before it looks.
 */
import * as Effect from "effect/Effect"

/** Yields `turns` times. */
export const yieldTurns = (turns: number): Effect.Effect<void> =>
  turns <= 0
    ? Effect.void
    : Effect.andThen(
        Effect.yieldNow,
        Effect.suspend(() => yieldTurns(turns - 1))
      )
