/**
 * Testing a server with `@effect-mcp/testing`'s McpTest harness: a real
 * McpClient talks to the server in memory through the real JSON codec, on
 * the revision each test picks, and every timer (request timeouts, the
 * handlers' sleeps, the client's own delays) runs on the TestClock, so the
 * tests below take milliseconds although the server "works" for minutes.
 *
 *   npx vitest run --config vitest.config.ts examples/testing.test.ts
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"

// --- the server under test -------------------------------------------------

/** `interrupted` is completed when the handler is interrupted, so a test can see the server stop. */
const exportTool = (interrupted: Deferred.Deferred<void>) =>
  Tool.make("export", {
    description: "Exports everything: takes ten minutes",
    input: Schema.Struct({}),
    handler: () =>
      Effect.sleep("10 minutes").pipe(
        Effect.as("exported"),
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
      )
  })

const Countdown = Tool.make("countdown", {
  description: "Counts down from `from`, one step a second, reporting progress",
  input: Schema.Struct({ from: Schema.Int }),
  handler: ({ from }) =>
    Effect.gen(function* () {
      for (let done = 1; done <= from; done++) {
        yield* Effect.sleep("1 second")
        yield* ServerRequest.progress({ progress: done, total: from, message: `${from - done} left` })
      }
      return "liftoff"
    })
})

const Delete = Tool.make("delete", {
  description: "Deletes a file after the user confirms",
  input: Schema.Struct({ path: Schema.String }),
  handler: ({ path }) =>
    Effect.gen(function* () {
      const answer = yield* Elicitation.form({
        message: `Delete ${path}?`,
        schema: Schema.Struct({ confirm: Schema.Boolean })
      })
      return Elicitation.isAccepted(answer) && answer.content.confirm ? `deleted ${path}` : "kept"
    })
})

const serverWith = (interrupted: Deferred.Deferred<void>) =>
  Tool.layer(exportTool(interrupted), Countdown, Delete).pipe(
    Layer.provideMerge(McpServer.layer({ name: "files", version: "1.0.0" }))
  )

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text?: string } | undefined)?.text

// --- the tests -------------------------------------------------------------

describe("testing a server with McpTest and the TestClock", () => {
  it.effect("a request timeout fires on virtual time, and the server's handler is interrupted", () =>
    Effect.gen(function* () {
      const interrupted = yield* Deferred.make<void>()
      const { client } = yield* McpTest.connect(serverWith(interrupted), { revision: "2025-11-25" })

      // forkIdle returns once the call has come to rest (on the server, its timeout running): the clock
      // then moves from a known point.
      const call = yield* McpTest.forkIdle(client.callTool("export", {}, { timeout: "30 seconds" }))
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(call.pollUnsafe(), "still waiting after 29 s")
      yield* TestClock.adjust("1 second")

      const exit = yield* Fiber.await(call)
      assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("RequestTimeout"))
      // The client sent notifications/cancelled: the handler stops instead of running on.
      yield* Deferred.await(interrupted)
    })
  )

  it.effect("progress arrives step by step as the clock moves", () =>
    Effect.gen(function* () {
      const interrupted = yield* Deferred.make<void>()
      const { client } = yield* McpTest.connect(serverWith(interrupted), { revision: "2025-06-18" })
      const seen = yield* Queue.unbounded<string>()

      // Returns once the handler is asleep on its first step.
      const run = yield* McpTest.forkIdle(
        client
          .callToolWithProgress("countdown", { from: 3 })
          .pipe(
            Stream.runForEach((event) =>
              Queue.offer(seen, event._tag === "Progress" ? `${event.update.message}` : `result ${textOf(event.value)}`)
            )
          )
      )
      for (const expected of ["2 left", "1 left", "0 left"]) {
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Queue.take(seen), expected)
      }
      yield* Fiber.join(run)
      assert.strictEqual(yield* Queue.take(seen), "result liftoff")
    })
  )

  it.effect("interrupting the caller cancels the call on the server", () =>
    Effect.gen(function* () {
      const interrupted = yield* Deferred.make<void>()
      const { client } = yield* McpTest.connect(serverWith(interrupted), { revision: "2025-03-26" })

      // Returns once the call has come to rest: the handler is running (asleep) on the server.
      const call = yield* McpTest.forkIdle(client.callTool("export", {}))
      // Within the client's 60-second default timeout: what cancels the call is the interruption.
      yield* TestClock.adjust("30 seconds")
      assert.isUndefined(call.pollUnsafe(), "still exporting after 30 s")
      yield* Fiber.interrupt(call)
      yield* Deferred.await(interrupted)
      assert.isTrue(yield* Deferred.isDone(interrupted))
    })
  )

  // The server asks the client (elicitation): a request from server to client on the stateful revisions,
  // an `input_required` round on 2026-07-28. The client's handler Layer answers after the "user" thinks
  // for 45 virtual seconds (within the 60-second default timeout of both sides); the test is the same on both.
  for (const revision of ["2025-11-25", "2026-07-28"] as const) {
    it.effect(`${revision}: a handler asks the user, who answers 45 seconds later`, () =>
      Effect.gen(function* () {
        const interrupted = yield* Deferred.make<void>()
        const asked = yield* Deferred.make<string>()
        const user = ElicitationHandler.layer({
          form: (params) =>
            Deferred.succeed(asked, params.message).pipe(
              Effect.andThen(Effect.sleep("45 seconds")),
              Effect.as({ action: "accept" as const, content: { confirm: true } })
            )
        })
        const deleting = Effect.gen(function* () {
          const client = yield* McpClient.McpClient
          const call = yield* Effect.forkChild(client.callTool("delete", { path: "a.txt" }))
          // Wait until the question reached the user: the clock then moves from a known point.
          assert.strictEqual(yield* Deferred.await(asked), "Delete a.txt?")
          yield* TestClock.adjust("30 seconds")
          assert.isUndefined(call.pollUnsafe(), "the user is still thinking")
          yield* TestClock.adjust("15 seconds")
          return yield* Fiber.join(call)
        })
        const result = yield* deleting.pipe(
          Effect.provide(McpTest.layer(serverWith(interrupted), { revision, clientHandlers: user }))
        )
        assert.strictEqual(textOf(result), "deleted a.txt")
      })
    )
  }
})
