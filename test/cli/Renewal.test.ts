/**
 * A server that ends every new session at once is not met with a new
 * `initialize` as fast as the two can go. `effect-mcp watch` runs as a real
 * process against a server that answers the event stream's GET with 404 (as
 * one without a GET route does), which expires each session as soon as the
 * client opens that stream. The test waits for each `initialize` to arrive
 * and checks the gaps between them: 250 ms, then 500, then 1,000 at least.
 */
import type { ChildProcess } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as StallingServer from "../support/StallingServer.ts"
import { runCli } from "./runCli.ts"

describe("effect-mcp watch against a server that ends every session at once", () => {
  it.live(
    "each new initialize comes later than the last",
    () =>
      Effect.gen(function* () {
        const server = yield* StallingServer.make("event stream")
        const spawned = Deferred.makeUnsafe<ChildProcess>()
        const run = yield* Effect.forkChild(
          runCli(["watch", "--revision", "2025-11-25", server.url], {
            onSpawn: (child) => Deferred.doneUnsafe(spawned, Exit.succeed(child))
          })
        )
        const at: Array<number> = []
        for (let i = 0; i < 4; i++) at.push(yield* Queue.take(server.initializes))
        ;(yield* Deferred.await(spawned)).kill("SIGTERM")
        yield* Fiber.join(run)
        // Before, the four came within milliseconds, and went on at about 900 a second.
        assert.isAtLeast(at[1]! - at[0]!, 245)
        assert.isAtLeast(at[2]! - at[1]!, 495)
        assert.isAtLeast(at[3]! - at[2]!, 995)
      }).pipe(Effect.scoped),
    60_000
  )
})
