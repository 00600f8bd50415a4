/**
 * `effect-mcp watch` ends, with exit code 5 and the reason, once its server
 * is gone: a stdio server that exits, one that stops reading (the keepalive
 * ping gets no answer), and a Streamable HTTP server killed while watched,
 * on the stateless revision (its listen stream ends, which used to be
 * reported as the server's JSON-RPC error -32603, exit 4) and on a stateful
 * one (nothing but the keepalive ping notices: the run used to wait forever).
 */
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ServerProcess from "../support/ServerProcess.ts"
import { errorLine, runCli } from "./runCli.ts"

const scripted = fileURLToPath(new URL("./scriptedServer.mjs", import.meta.url))

// Each check runs the CLI once or twice (a Node process loading the sources): the limit only catches a hang.
const TIMEOUT = 120_000

/** Runs `watch` with `args`; `whileWatching` runs once the CLI says it is watching. */
const watch = (args: ReadonlyArray<string>, whileWatching: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function* () {
    const watching = Deferred.makeUnsafe<void>()
    const run = yield* Effect.forkChild(
      runCli(["watch", ...args], {
        onSpawn: (child) =>
          child.stderr?.on("data", (chunk: Buffer) => {
            if (chunk.toString().includes("watching")) Deferred.doneUnsafe(watching, Exit.void)
          })
      })
    )
    yield* Effect.raceFirst(Deferred.await(watching), Fiber.await(run))
    const watchingAt = performance.now()
    yield* whileWatching
    const ran = yield* Fiber.join(run)
    return { ran, watched: Deferred.isDoneUnsafe(watching), seconds: (performance.now() - watchingAt) / 1000 }
  })

describe("effect-mcp watch, its server gone", () => {
  it.live(
    "a stdio server that exits: exit 5 with its exit code and stderr",
    () =>
      Effect.gen(function* () {
        const { ran } = yield* watch(["--", ServerProcess.node, scripted, "exit-once-initialized"])
        assert.strictEqual(ran.code, 5, ran.stderr)
        assert.match(
          errorLine({ ...ran, stderr: ran.stderr.replace(/^watching.*\n/m, "") }),
          /^TransportError: the server process exited with code 7; stderr ends with: leaving on purpose$/
        )
      }),
    TIMEOUT
  )

  it.live(
    "a stdio server that stops reading: exit 5 when a keepalive ping goes unanswered (--timeout 1)",
    () =>
      Effect.gen(function* () {
        const { ran, watched, seconds } = yield* watch(["--timeout", "1", "--", ServerProcess.node, scripted, "stall"])
        assert.isTrue(watched, ran.stderr)
        assert.strictEqual(ran.code, 5, ran.stderr)
        assert.match(ran.stderr, /effect-mcp: KeepaliveFailed: the keepalive ping failed: .*ping/)
        // A ping a second after watching began, answered within a second, and the stdio server's stop (0.5 s).
        assert.isAtMost(seconds, 4, ran.stderr)
      }),
    TIMEOUT
  )

  it.live(
    "a Streamable HTTP server killed while watched: exit 5, stateless and stateful",
    () =>
      Effect.gen(function* () {
        const stateless = yield* ServerProcess.spawnHttp()
        const first = yield* watch([stateless.url], ServerProcess.terminate(stateless.process))
        assert.isTrue(first.watched, first.ran.stderr)
        assert.strictEqual(first.ran.code, 5, first.ran.stderr)
        assert.match(
          first.ran.stderr,
          // The listen stream's end, or its renewal refused (the listen is made again when its stream ends).
          /effect-mcp: TransportError: (the connection was lost: the response stream ended before the response|POST .* connection refused \(ECONNREFUSED\))/
        )

        const stateful = yield* ServerProcess.spawnHttp()
        const second = yield* watch(
          ["--revision", "2025-11-25", "--timeout", "1", stateful.url],
          ServerProcess.terminate(stateful.process)
        )
        assert.isTrue(second.watched, second.ran.stderr)
        assert.strictEqual(second.ran.code, 5, second.ran.stderr)
        assert.match(
          second.ran.stderr,
          /effect-mcp: KeepaliveFailed: the keepalive ping failed: .*connection refused \(ECONNREFUSED\)/
        )
      }).pipe(Effect.scoped),
    TIMEOUT
  )
})
