import { assert, describe, it } from "@effect/vitest"
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { connect, fullCapabilities } from "./fixtures.ts"

type Params = { readonly [key: string]: unknown }

const task = (taskId: string, status: string) => ({
  taskId,
  status,
  createdAt: "2025-11-25T00:00:00Z",
  lastUpdatedAt: "2025-11-25T00:00:01Z",
  ttl: 60_000
})

const taskHandlers: ReadonlyArray<readonly [string, () => Session.Handler]> = [
  [
    "tools/call",
    () => (p) => {
      const params = p as Params
      return Effect.succeed(
        params.task === undefined
          ? { content: [{ type: "text", text: "direct" }] }
          : { task: task(`task-${String(params.name)}`, "working") }
      )
    }
  ],
  ["tasks/get", () => (p) => Effect.succeed(task(String((p as Params).taskId), "completed"))],
  ["tasks/result", () => () => Effect.succeed({ content: [{ type: "text", text: "task output" }] })],
  ["tasks/list", () => () => Effect.succeed({ tasks: [task("task-a", "completed"), task("task-b", "working")] })],
  ["tasks/cancel", () => (p) => Effect.succeed(task(String((p as Params).taskId), "cancelled"))]
]

const tasksCapability = { list: {}, cancel: {}, requests: { tools: { call: {} } } }

describe("experimental tasks (2025-11-25)", () => {
  it.effect("a tool call as a task: create, poll, fetch the result, list, cancel", () =>
    Effect.gen(function* () {
      const { client, server } = yield* connect("2025-11-25", {
        server: { capabilities: { ...fullCapabilities, tasks: tasksCapability }, handlers: taskHandlers }
      })
      const created = yield* client.tasks.callTool("build", { target: "x" }, { ttl: 60_000 })
      assert.strictEqual(created.task.taskId, "task-build")
      assert.strictEqual(created.task.status, "working")
      const call = server.log.requests.find((r) => r.method === "tools/call")
      assert.deepStrictEqual(call?.params.task, { ttl: 60_000 })
      const polled = yield* client.tasks.get("task-build")
      assert.strictEqual(polled.status, "completed")
      const result = yield* client.tasks.toolResult("task-build")
      assert.deepStrictEqual(result.content, [{ type: "text", text: "task output" }])
      const all = yield* Stream.runCollect(client.tasks.list)
      assert.deepStrictEqual(
        all.map((t) => t.taskId),
        ["task-a", "task-b"]
      )
      const cancelled = yield* client.tasks.cancel("task-b")
      assert.strictEqual(cancelled.status, "cancelled")
    })
  )

  it.effect("refused locally on other revisions and without the server's tasks capability", () =>
    Effect.gen(function* () {
      for (const version of ["2025-06-18", "2026-07-28"] as const) {
        const { client, wire } = yield* connect(version, {
          server: { capabilities: { ...fullCapabilities, tasks: tasksCapability }, handlers: taskHandlers }
        })
        const before = wire.sent.length
        const error = yield* Effect.flip(client.tasks.callTool("build"))
        assert.strictEqual(error._tag, "NotSupported")
        if (error._tag === "NotSupported") assert.strictEqual(error.reason, "MethodNotInRevision")
        assert.strictEqual(wire.sent.length, before)
      }
      const { client, wire } = yield* connect("2025-11-25", { server: { handlers: taskHandlers } })
      const before = wire.sent.length
      const refusals: ReadonlyArray<Effect.Effect<unknown, McpClient.CallError>> = [
        client.tasks.callTool("build"),
        client.tasks.get("t"),
        client.tasks.cancel("t")
      ]
      for (const refused of refusals) {
        const error = yield* Effect.flip(refused)
        assert.strictEqual(error._tag, "NotSupported")
        if (error._tag === "NotSupported") assert.strictEqual(error.reason, "CapabilityNotDeclared")
      }
      assert.strictEqual(wire.sent.length, before)
    })
  )
})
