/**
 * A server's `ready` (`McpServer.Options`): the handshake and every request
 * wait for it until it has once completed; from then on a flag lets them
 * through with no Effect of its own (the request path of every call).
 */
import * as Effect from "effect/Effect"

export class Readiness {
  done = false
  /** Waits for `ready` (nothing once it has completed). */
  readonly wait: Effect.Effect<void>

  constructor(ready: Effect.Effect<void>) {
    // Run by each waiter until one has seen it complete: `ready` is a wait on a signal (a Latch's or a Deferred's
    // `await`), which any number of fibers may run, and one that is interrupted (a cancelled request) takes
    // nothing from the others.
    this.wait = Effect.suspend(() =>
      this.done
        ? Effect.void
        : Effect.tap(
            ready,
            Effect.sync(() => {
              this.done = true
            })
          )
    )
  }
}
