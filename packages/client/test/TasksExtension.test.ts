/**
 * The Tasks extension (SEP-2663) on 2026-07-28, on the client: the client
 * declares the extension on every request; a `tools/call` the server answers
 * with a task (`resultType: "task"`) is followed to its result by a plain
 * `callTool`, polling `tasks/get` on the TestClock, answering the task's
 * input requests with `tasks/update`, failing with the task's JSON-RPC error.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { connect, fullCapabilities, type ServerControl } from "./fixtures.ts"

type Params = { readonly [key: string]: unknown }

const extensionId = "io.modelcontextprotocol/tasks"

const task = (status: string, extra: Params = {}) => ({
  taskId: "task-9",
  status,
  createdAt: "2026-07-28T00:00:00Z",
  lastUpdatedAt: `2026-07-28T00:00:0${status.length % 10}Z`,
  ttlMs: 60_000,
  pollIntervalMs: 200,
  ...extra
})

const ask = {
  name: {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: "your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
    }
  }
}

/** A server whose `slow` tool answers with a task going through `states` (one per `tasks/get`). */
const scripted = (states: ReadonlyArray<Params>) => {
  const state = { polls: 0, updates: [] as Array<Params>, cancelled: [] as Array<string> }
  const handlers: ReadonlyArray<readonly [string, (control: ServerControl) => Session.Handler]> = [
    [
      "tools/call",
      () => (p) =>
        Effect.succeed(
          (p as Params).name === "slow"
            ? { resultType: "task", ...task("working") }
            : { content: [{ type: "text", text: "at once" }] }
        )
    ],
    [
      "tasks/get",
      () => () =>
        Effect.sync(() => ({ resultType: "complete", ...states[Math.min(state.polls++, states.length - 1)]! }))
    ],
    [
      "tasks/update",
      () => (p) =>
        Effect.sync(() => {
          state.updates.push(p as Params)
          return { resultType: "complete" }
        })
    ],
    [
      "tasks/cancel",
      () => (p) =>
        Effect.sync(() => {
          state.cancelled.push(String((p as Params).taskId))
          return { resultType: "complete" }
        })
    ]
  ]
  return {
    state,
    options: { server: { capabilities: { ...fullCapabilities, extensions: { [extensionId]: {} } }, handlers } }
  }
}

const done = task("completed", { result: { content: [{ type: "text", text: "finished" }] } })

describe("the Tasks extension on 2026-07-28", () => {
  it.effect("a plain callTool follows the task the server answers with, polling at pollIntervalMs", () =>
    Effect.gen(function* () {
      const { options, state } = scripted([task("working"), task("working"), done])
      const { client, server } = yield* connect("2026-07-28", options)
      assert.strictEqual(client.tasks.form, "extension")
      const fiber = yield* Effect.forkChild(client.callTool("slow"), { startImmediately: true })
      yield* TestClock.adjust(199)
      assert.strictEqual(state.polls, 0)
      yield* TestClock.adjust(1)
      assert.strictEqual(state.polls, 1)
      yield* TestClock.adjust(400)
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "finished" }])
      assert.strictEqual(state.polls, 3)
      // Every request declared the extension in its per-request capabilities.
      for (const capabilities of server.log.clientCapabilities) {
        assert.deepStrictEqual((capabilities as Params).extensions, { [extensionId]: {} })
      }
      // A call the server answers at once is unchanged.
      const now = yield* client.callTool("other")
      assert.deepStrictEqual(now.content, [{ type: "text", text: "at once" }])
    })
  )

  it.effect("input requests are answered by the client's handlers with tasks/update, each key once", () =>
    Effect.gen(function* () {
      const waiting = task("input_required", { inputRequests: ask })
      const { options, state } = scripted([waiting, waiting, task("working"), done])
      const { client } = yield* connect("2026-07-28", {
        ...options,
        handlers: ElicitationHandler.layer({
          form: () => Effect.succeed({ action: "accept", content: { name: "Ada" } })
        })
      })
      const fiber = yield* Effect.forkChild(client.callTool("slow"), { startImmediately: true })
      yield* TestClock.adjust(800)
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "finished" }])
      assert.deepStrictEqual(
        state.updates.map(({ _meta, ...rest }) => rest),
        [{ taskId: "task-9", inputResponses: { name: { action: "accept", content: { name: "Ada" } } } }]
      )
    })
  )

  it.effect("a failed task fails the call with its JSON-RPC error; a cancelled one with TaskError", () =>
    Effect.gen(function* () {
      const failed = task("failed", { error: { code: -32602, message: "bad input" } })
      const first = scripted([failed])
      const { client } = yield* connect("2026-07-28", first.options)
      const fiber = yield* Effect.forkChild(Effect.flip(client.callTool("slow")), { startImmediately: true })
      yield* TestClock.adjust(200)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "InvalidParams")
      assert.strictEqual(error.message, "bad input")

      const second = scripted([task("cancelled")])
      const other = yield* connect("2026-07-28", second.options)
      const fiber2 = yield* Effect.forkChild(Effect.flip(other.client.callTool("slow")), { startImmediately: true })
      yield* TestClock.adjust(200)
      const cancelled = yield* Fiber.join(fiber2)
      assert.strictEqual(cancelled._tag, "TaskError")
    })
  )

  it.effect("interrupting the caller sends tasks/cancel; run and updates stream the states", () =>
    Effect.gen(function* () {
      const { options, state } = scripted([task("working"), task("working", { statusMessage: "half" }), done])
      const { client } = yield* connect("2026-07-28", options)
      const fiber = yield* Effect.forkChild(client.callTool("slow"), { startImmediately: true })
      yield* TestClock.adjust(200)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(state.cancelled, ["task-9"])

      const events = yield* Effect.forkChild(Stream.runCollect(client.tasks.run("slow")), { startImmediately: true })
      yield* TestClock.adjust(400)
      assert.deepStrictEqual(
        (yield* Fiber.join(events)).map((e) =>
          e._tag === "Status" ? `${e.task.status}${e.task.statusMessage ?? ""}` : "result"
        ),
        ["working", "workinghalf", "completed", "result"]
      )
      // The extension's fields, read as the revision-neutral task.
      const got = yield* client.tasks.get("task-9")
      assert.strictEqual(got.ttl, 60_000)
      assert.strictEqual(got.pollInterval, 200)
      const list = yield* Effect.flip(Stream.runCollect(client.tasks.list))
      assert.strictEqual(list._tag, "NotSupported")
    })
  )
})
