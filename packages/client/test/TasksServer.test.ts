/**
 * McpClient against effect-mcp's own McpServer running tools as tasks, on
 * 2025-11-25 (the core form) and 2026-07-28 (the Tasks extension), on the
 * TestClock: a plain call of a required tool, input the task asks for (core:
 * through `tasks/result`; extension: `inputRequests` and `tasks/update`),
 * a failed task's JSON-RPC error, the statuses of `tasks.run`, and an
 * interrupted call whose task is cancelled (the tool's finalizer runs).
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { clientInfo } from "./fixtures.ts"

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text?: string } | undefined)?.text

const server = Effect.gen(function* () {
  const finalized = yield* Deferred.make<void>()
  const started = yield* Deferred.make<void>()
  const tools = Tool.layer(
    Tool.make("build", {
      input: Schema.Struct({ target: Schema.String }),
      taskSupport: "required",
      handler: ({ target }) => Effect.as(Effect.sleep("2 seconds"), `built ${target}`)
    }),
    Tool.make("greet", {
      input: Schema.Struct({}),
      taskSupport: "required",
      handler: () =>
        Effect.gen(function* () {
          yield* Effect.sleep("1 second")
          const answer = yield* Elicitation.form({ message: "name?", schema: Schema.Struct({ name: Schema.String }) })
          return answer.action === "accept" ? `hello ${answer.content.name}` : "hello nobody"
        })
    }),
    Tool.make("broken", {
      input: Schema.Struct({}),
      taskSupport: "required",
      handler: () => Effect.fail(new McpError.InvalidParams({ message: "no such target" }))
    }),
    Tool.make("stuck", {
      input: Schema.Struct({}),
      taskSupport: "required",
      handler: () =>
        Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
          Effect.ensuring(Deferred.succeed(finalized, undefined))
        )
    })
  )
  const layer = Layer.provideMerge(tools, McpServer.layer({ name: "tasks", version: "1.0.0" }))
  return { layer, finalized, started }
})

const Handlers = ElicitationHandler.layer({
  form: () => Effect.succeed({ action: "accept", content: { name: "Ada" } })
})

/** Runs `effect` in a fiber while the TestClock moves on in steps of `step`, until it is done. */
const timed = <A, E>(effect: Effect.Effect<A, E>, step: Duration.Input = "500 millis") =>
  Effect.flatMap(Effect.forkChild(effect, { startImmediately: true }), (fiber) => McpTest.advanceUntilDone(fiber, step))

describe("McpClient -> McpServer tasks", () => {
  for (const [version, form] of [
    ["2025-11-25", "core"],
    ["2026-07-28", "extension"]
  ] as const) {
    it.effect(`${version}: required tools run as tasks through a plain callTool; input, failure, statuses`, () =>
      Effect.gen(function* () {
        const { layer } = yield* server
        const { client } = yield* McpTest.connect(layer, { revision: version, clientInfo, clientHandlers: Handlers })
        assert.strictEqual(client.tasks.form, form)
        yield* client.listTools()
        assert.strictEqual(textOf(yield* timed(client.callTool("build", { target: "docs" }))), "built docs")
        assert.strictEqual(textOf(yield* timed(client.callTool("greet"))), "hello Ada")
        const failure = yield* timed(Effect.flip(client.callTool("broken")))
        assert.strictEqual(failure._tag, "InvalidParams")
        assert.strictEqual(failure.message, "no such target")
        const events = yield* timed(Stream.runCollect(client.tasks.run("build", { target: "app" })))
        assert.deepStrictEqual(
          events.map((e) => (e._tag === "Status" ? e.task.status : `result ${textOf(e.value)}`)),
          ["working", "completed", "result built app"]
        )
      })
    )

    it.effect(`${version}: interrupting the call cancels its task and the tool's fiber`, () =>
      Effect.gen(function* () {
        const { layer, started, finalized } = yield* server
        const { client } = yield* McpTest.connect(layer, { revision: version, clientInfo })
        yield* client.listTools()
        const call = yield* Effect.forkChild(client.callTool("stuck"), { startImmediately: true })
        yield* Deferred.await(started)
        yield* Fiber.interrupt(call)
        yield* Deferred.await(finalized)
        const tasks = form === "core" ? yield* Stream.runCollect(client.tasks.list) : []
        if (form === "core")
          assert.deepStrictEqual(
            tasks.map((t) => t.status),
            ["cancelled"]
          )
      })
    )
  }

  it.effect(
    "2026-07-28 with taskNotifications: the server's notifications/tasks end the wait before the next poll",
    () =>
      Effect.gen(function* () {
        let started = Deferred.makeUnsafe<void>()
        const slow = Tool.make("build", {
          input: Schema.Struct({}),
          taskSupport: "required",
          handler: () =>
            Effect.andThen(
              Effect.sync(() => Deferred.doneUnsafe(started, Exit.void)),
              Effect.as(Effect.sleep("2 seconds"), "built")
            )
        })
        // The server suggests polling once a minute.
        const layer = Layer.provideMerge(
          Tool.layer(slow),
          McpServer.layer({ name: "tasks", version: "1.0.0", tasks: { pollIntervalMs: 60_000 } })
        )
        for (const taskNotifications of [true, false]) {
          const { client } = yield* McpTest.connect(layer, {
            revision: "2026-07-28",
            clientInfo,
            client: { taskNotifications }
          })
          started = Deferred.makeUnsafe<void>()
          const call = yield* Effect.forkChild(client.callTool("build"), { startImmediately: true })
          yield* Deferred.await(started)
          yield* TestClock.adjust("3 seconds")
          // Told at once with notifications (the clock stands still from here: a call that waited
          // for the poll would hang); without them the call waits for the next poll, a minute on.
          if (taskNotifications) assert.strictEqual(textOf(yield* Fiber.join(call)), "built")
          else {
            // A round trip after the task ended: the call has had every chance to end early.
            yield* client.listTools()
            assert.isUndefined(call.pollUnsafe(), "the call ended before the next poll")
            yield* TestClock.adjust("1 minute")
            assert.strictEqual(textOf(yield* Fiber.join(call)), "built")
          }
        }
      })
  )
})
