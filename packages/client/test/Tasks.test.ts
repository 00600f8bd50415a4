/**
 * Tasks of 2025-11-25 (the experimental core feature) on the client: the
 * tasks API, and a plain `callTool` on a tool the server marks
 * `taskSupport: "required"` run as a task, polled on the TestClock at the
 * server's `pollInterval`, ended early by status notifications, cancelled
 * with `tasks/cancel` when the caller is interrupted.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as Session from "@effect-mcp/engine/Session"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { connect, fullCapabilities, type ServerControl } from "./fixtures.ts"

type Params = { readonly [key: string]: unknown }

const task = (taskId: string, status: string, extra: Params = {}) => ({
  taskId,
  status,
  createdAt: "2025-11-25T00:00:00Z",
  lastUpdatedAt: `2025-11-25T00:00:0${status.length % 10}Z`,
  ttl: 60_000,
  ...extra
})

const tasksCapability = { list: {}, cancel: {}, requests: { tools: { call: {} } } }

/** A task that is `working` for `workingPolls` polls of `tasks/get`, then `completed`. */
const scripted = (workingPolls: number, pollInterval = 500) => {
  const state = { polls: 0, results: 0, cancelled: [] as Array<string>, created: [] as Array<Params> }
  const status = () => (state.polls > workingPolls ? "completed" : "working")
  const handlers: ReadonlyArray<readonly [string, (control: ServerControl) => Session.Handler]> = [
    [
      "tools/list",
      () => () =>
        Effect.succeed({
          tools: [
            { name: "build", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
            { name: "echo", inputSchema: { type: "object" } }
          ]
        })
    ],
    [
      "tools/call",
      () => (p) => {
        const params = p as Params
        if (params.name === "build" && params.task === undefined) {
          return Effect.fail(new McpError.MethodNotFound({ message: "build requires task augmentation" }))
        }
        if (params.task !== undefined) {
          state.created.push(params)
          return Effect.succeed({ task: task("task-1", "working", { pollInterval }) })
        }
        return Effect.succeed({ content: [{ type: "text", text: "plain" }] })
      }
    ],
    [
      "tasks/get",
      () => (p) =>
        Effect.sync(() => {
          state.polls++
          return task(String((p as Params).taskId), status(), { pollInterval })
        })
    ],
    [
      "tasks/result",
      () => () =>
        Effect.sync(() => {
          state.results++
          return { content: [{ type: "text", text: "built" }] }
        })
    ],
    [
      "tasks/cancel",
      () => (p) =>
        Effect.sync(() => {
          state.cancelled.push(String((p as Params).taskId))
          return task(String((p as Params).taskId), "cancelled")
        })
    ]
  ]
  return { state, handlers }
}

const serverWith = (handlers: ReadonlyArray<readonly [string, (control: ServerControl) => Session.Handler]>) => ({
  server: { capabilities: { ...fullCapabilities, tasks: tasksCapability }, handlers }
})

describe("tasks on 2025-11-25", () => {
  it.effect("the tasks API: call as a task, get, result, list, cancel", () =>
    Effect.gen(function* () {
      const { handlers } = scripted(0)
      const listing: readonly [string, () => Session.Handler] = [
        "tasks/list",
        () => () => Effect.succeed({ tasks: [task("task-a", "completed"), task("task-b", "working")] })
      ]
      const { client, server } = yield* connect("2025-11-25", serverWith([...handlers, listing]))
      assert.strictEqual(client.tasks.form, "core")
      const created = yield* client.tasks.callTool("build", { target: "x" }, { ttl: 60_000 })
      assert.strictEqual(created._tag, "Task")
      if (created._tag === "Task") assert.strictEqual(created.task.taskId, "task-1")
      const call = server.log.requests.find((r) => r.method === "tools/call")
      assert.deepStrictEqual(call?.params.task, { ttl: 60_000 })
      const polled = yield* client.tasks.get("task-1")
      assert.strictEqual(polled.status, "completed")
      const result = yield* client.tasks.result("task-1")
      assert.deepStrictEqual(result.content, [{ type: "text", text: "built" }])
      const all = yield* Stream.runCollect(client.tasks.list)
      assert.deepStrictEqual(
        all.map((t) => t.taskId),
        ["task-a", "task-b"]
      )
      const cancelled = yield* client.tasks.cancel("task-b")
      assert.strictEqual(cancelled?.status, "cancelled")
    })
  )

  it.effect("a plain callTool on a listed required tool runs it as a task, polling at the server's interval", () =>
    Effect.gen(function* () {
      const { state, handlers } = scripted(3, 500)
      const { client, server } = yield* connect("2025-11-25", serverWith(handlers))
      yield* client.listTools()
      const fiber = yield* Effect.forkChild(client.callTool("build", { target: "x" }), { startImmediately: true })
      yield* TestClock.adjust(0)
      // The task was made and polled once; the next poll waits for the server's 500 ms.
      assert.strictEqual(state.created.length, 1)
      assert.strictEqual(state.polls, 0)
      yield* TestClock.adjust(499)
      assert.strictEqual(state.polls, 0)
      yield* TestClock.adjust(1)
      assert.strictEqual(state.polls, 1)
      yield* TestClock.adjust(1500)
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "built" }])
      assert.strictEqual(state.polls, 4)
      assert.strictEqual(state.results, 1)
      // No plain call was tried: the listing said the tool requires a task.
      assert.deepStrictEqual(
        server.log.requests.filter((r) => r.method === "tools/call").map((r) => r.params.task),
        [{}]
      )
      // A tool that does not require a task is called as before.
      const plain = yield* client.callTool("echo")
      assert.deepStrictEqual(plain.content, [{ type: "text", text: "plain" }])
    })
  )

  it.effect("a required tool never listed: refused as a plain call, the tools are listed and it runs as a task", () =>
    Effect.gen(function* () {
      const { state, handlers } = scripted(0, 100)
      const { client, server } = yield* connect("2025-11-25", serverWith(handlers))
      const fiber = yield* Effect.forkChild(client.callTool("build"), { startImmediately: true })
      yield* TestClock.adjust(100)
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "built" }])
      assert.deepStrictEqual(
        server.log.requests.map((r) => r.method).filter((m) => m !== "initialize"),
        ["tools/call", "tools/list", "tools/call", "tasks/get", "tasks/result"]
      )
      assert.strictEqual(state.created.length, 1)
    })
  )

  it.effect("the client's own interval when the server suggests none", () =>
    Effect.gen(function* () {
      const state = { polls: 0 }
      const handlers: ReadonlyArray<readonly [string, (control: ServerControl) => Session.Handler]> = [
        ...scripted(0).handlers,
        [
          "tasks/get",
          () => (p) =>
            Effect.sync(() => {
              state.polls++
              return task(String((p as Params).taskId), state.polls > 1 ? "completed" : "working")
            })
        ],
        ["tools/call", () => () => Effect.succeed({ task: task("task-1", "working") })]
      ]
      const { client } = yield* connect("2025-11-25", {
        ...serverWith(handlers),
        client: { taskPollInterval: "3 seconds" }
      })
      yield* client.listTools()
      const fiber = yield* Effect.forkChild(client.callTool("build"), { startImmediately: true })
      yield* TestClock.adjust(2999)
      assert.strictEqual(state.polls, 0)
      yield* TestClock.adjust(1)
      assert.strictEqual(state.polls, 1)
      yield* TestClock.adjust(3000)
      yield* Fiber.join(fiber)
      assert.strictEqual(state.polls, 2)
    })
  )

  it.effect("a status notification ends the wait before the next poll", () =>
    Effect.gen(function* () {
      const { state, handlers } = scripted(100, 60_000)
      const { client, server } = yield* connect("2025-11-25", serverWith(handlers))
      yield* client.listTools()
      const fiber = yield* Effect.forkChild(client.callTool("build"), { startImmediately: true })
      yield* TestClock.adjust(10)
      yield* server.emit("notifications/tasks/status", task("task-other", "completed"))
      yield* server.emit("notifications/tasks/status", task("task-1", "completed"))
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "built" }])
      assert.strictEqual(state.polls, 0)
    })
  )

  it.effect("interrupting the caller cancels the task with tasks/cancel", () =>
    Effect.gen(function* () {
      const { state, handlers } = scripted(1_000, 500)
      const { client } = yield* connect("2025-11-25", serverWith(handlers))
      yield* client.listTools()
      const fiber = yield* Effect.forkChild(client.callTool("build"), { startImmediately: true })
      yield* TestClock.adjust(1000)
      assert.strictEqual(state.polls, 2)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(state.cancelled, ["task-1"])
    })
  )

  it.effect("run: each new status, then the result; updates: the states until terminal", () =>
    Effect.gen(function* () {
      const { handlers } = scripted(2, 100)
      const { client } = yield* connect("2025-11-25", serverWith(handlers))
      const fiber = yield* Effect.forkChild(Stream.runCollect(client.tasks.run("build")), { startImmediately: true })
      yield* TestClock.adjust(300)
      const events = yield* Fiber.join(fiber)
      // The first state (from the create), the change to completed (repeats of "working" are not new), the result.
      assert.deepStrictEqual(
        events.map((e) => (e._tag === "Status" ? e.task.status : "result")),
        ["working", "completed", "result"]
      )
      const watched = yield* Stream.runCollect(client.tasks.updates("task-1"))
      assert.deepStrictEqual(
        watched.map((t) => t.status),
        ["completed"]
      )
    })
  )

  it.effect("a cancelled task fails the call with TaskError", () =>
    Effect.gen(function* () {
      const handlers: ReadonlyArray<readonly [string, (control: ServerControl) => Session.Handler]> = [
        ...scripted(0).handlers,
        ["tasks/get", () => (p) => Effect.succeed(task(String((p as Params).taskId), "cancelled"))]
      ]
      const { client } = yield* connect("2025-11-25", serverWith(handlers))
      yield* client.listTools()
      const fiber = yield* Effect.forkChild(Effect.flip(client.callTool("build")), { startImmediately: true })
      yield* TestClock.adjust(500)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TaskError")
      if (error._tag === "TaskError") assert.strictEqual(error.reason, "Cancelled")
    })
  )

  it.effect("refused locally on revisions without tasks and without the server's tasks capability", () =>
    Effect.gen(function* () {
      for (const version of ["2025-06-18", "2025-03-26"] as const) {
        const { client, wire } = yield* connect(version, serverWith(scripted(0).handlers))
        assert.strictEqual(client.tasks.form, "none")
        const before = wire.sent.length
        const error = yield* Effect.flip(client.tasks.callTool("build"))
        assert.strictEqual(error._tag, "NotSupported")
        if (error._tag === "NotSupported") assert.strictEqual(error.reason, "MethodNotInRevision")
        assert.strictEqual(wire.sent.length, before)
      }
      const { client, wire } = yield* connect("2025-11-25", { server: { handlers: scripted(0).handlers } })
      const before = wire.sent.length
      const refusals: ReadonlyArray<Effect.Effect<unknown, McpClient.CallError>> = [
        client.tasks.callTool("build"),
        client.tasks.get("t"),
        client.tasks.result("t"),
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
