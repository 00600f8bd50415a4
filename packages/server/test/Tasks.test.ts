import { assert, describe, it } from "@effect/vitest"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Task from "@effect-mcp/server/Task"
import * as TaskStore from "@effect-mcp/server/TaskStore"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { type Obj, testServer } from "./fixtures.ts"

const withExtension = { elicitation: {}, extensions: { [Tasks.extensionId]: {} } }

let finalized = 0
let started = 0

const slow = Tool.make("slow", {
  input: Schema.Struct({ seconds: Schema.Number }),
  taskSupport: "optional",
  handler: ({ seconds }) =>
    Effect.gen(function* () {
      started++
      yield* Effect.addFinalizer(() => Effect.sync(() => finalized++))
      yield* Effect.sleep(`${seconds} seconds`)
      return `slept ${seconds}`
    }).pipe(Effect.scoped)
})

const required = Tool.make("required", {
  input: Schema.Struct({}),
  taskSupport: "required",
  handler: () => Effect.fail(new McpError.InternalError({ message: "the job broke" }))
})

const plain = Tool.make("plain", { input: Schema.Struct({}), handler: () => Effect.succeed("plain") })

const confirm = Tool.make("confirm", {
  input: Schema.Struct({}),
  taskSupport: "optional",
  handler: () =>
    Effect.gen(function* () {
      const [a, b] = yield* Effect.all(
        [
          Elicitation.form({ message: "first?", schema: Schema.Struct({ name: Schema.String }) }),
          Elicitation.form({ message: "second?", schema: Schema.Struct({ name: Schema.String }) })
        ],
        { concurrency: 2 }
      )
      return `${a.action === "accept" ? a.content.name : "-"} ${b.action === "accept" ? b.content.name : "-"}`
    })
})

const escalating = Tool.make("escalating", {
  input: Schema.Struct({}),
  taskSupport: "required",
  taskCreation: "handler",
  handler: () =>
    Effect.gen(function* () {
      const answer = yield* Elicitation.form({ message: "name?", schema: Schema.Struct({ name: Schema.String }) })
      const name = answer.action === "accept" ? answer.content.name : "nobody"
      return yield* Task.background(Effect.as(Effect.sleep("1 second"), `Hello, ${name}`))
    })
})

// When `lasting`'s finalizer ran (TestClock milliseconds), or undefined.
let finalizedAt: number | undefined

const lasting = Tool.make("lasting", {
  input: Schema.Struct({}),
  taskSupport: "optional",
  handler: () =>
    Effect.gen(function* () {
      yield* Effect.addFinalizer(() =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          finalizedAt = now
        })
      )
      yield* Effect.sleep("100 seconds")
      return "lasted"
    }).pipe(Effect.scoped)
})

const features = Tool.layer(slow, required, plain, confirm, escalating, lasting)

const expectError = (effect: Effect.Effect<unknown, unknown>) =>
  Effect.flip(effect).pipe(Effect.map((e) => e as { readonly code?: number; readonly data?: Obj }))

describe("tasks: the extension (SEP-2663) on 2026-07-28", () => {
  it.effect("a task-taking tool answers with a flat task; tasks/get inlines its result once done", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: withExtension
      })
      const created = (yield* request("tools/call", { name: "slow", arguments: { seconds: 10 } })) as Obj
      assert.strictEqual(created.resultType, "task")
      assert.strictEqual(created.status, "working")
      assert.isNumber(created.ttlMs)
      assert.isNumber(created.pollIntervalMs)
      assert.isUndefined(created.task)
      assert.isUndefined(created.ttl)
      assert.isUndefined(created.requestState)
      const working = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(working.status, "working")
      assert.strictEqual(working.resultType, "complete")
      yield* TestClock.adjust("10 seconds")
      const done = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(done.status, "completed")
      assert.deepStrictEqual(done.result.content, [{ type: "text", text: "slept 10" }])
      // The inlined result is a 2026-07-28 CallToolResult: it carries its own resultType.
      assert.strictEqual(done.result.resultType, "complete")
      assert.isUndefined(done.result._meta?.[Tasks.relatedTaskKey])
      // A terminal task's cancel is acknowledged like any other.
      assert.deepStrictEqual(
        Object.keys((yield* request("tasks/cancel", { taskId: created.taskId })) as Obj).filter((k) => k !== "_meta"),
        ["resultType"]
      )
    })
  )

  it.effect("cancelling a task interrupts its fiber: its finalizer has run when tasks/cancel is acknowledged", () =>
    Effect.gen(function* () {
      finalized = 0
      started = 0
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: withExtension
      })
      const created = (yield* request("tools/call", { name: "slow", arguments: { seconds: 3600 } })) as Obj
      yield* TestClock.adjust("1 second")
      assert.strictEqual(started, 1)
      assert.strictEqual(finalized, 0)
      const ack = (yield* request("tasks/cancel", { taskId: created.taskId })) as Obj
      assert.strictEqual(ack.resultType, "complete")
      assert.isUndefined(ack.status)
      assert.strictEqual(finalized, 1)
      const after = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(after.status, "cancelled")
    })
  )

  it.effect("without the extension: optional tools run in the request, required ones are refused with -32021", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: {}
      })
      const fiber = yield* Effect.forkChild(request("tools/call", { name: "slow", arguments: { seconds: 1 } }))
      yield* TestClock.adjust("1 second")
      const sync = (yield* Fiber.join(fiber)) as Obj
      assert.strictEqual(sync.resultType, "complete")
      assert.deepStrictEqual(sync.content, [{ type: "text", text: "slept 1" }])
      const refused = yield* expectError(request("tools/call", { name: "required", arguments: {} }))
      assert.strictEqual(refused.code, -32021)
      assert.deepStrictEqual(refused.data?.requiredCapabilities, { extensions: { [Tasks.extensionId]: {} } })
      for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
        const error = yield* expectError(request(method, { taskId: "x", inputResponses: {} }))
        assert.strictEqual(error.code, -32021, method)
      }
    })
  )

  it.effect(
    "a protocol error fails the task with the error inlined; unknown ids are -32602; tasks/result is gone",
    () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), {
          revision: "2026-07-28",
          capabilities: withExtension
        })
        const created = (yield* request("tools/call", { name: "required", arguments: {} })) as Obj
        yield* TestClock.adjust("1 millis")
        const failed = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
        assert.strictEqual(failed.status, "failed")
        assert.strictEqual(failed.error.code, -32603)
        assert.isUndefined(failed.result)
        assert.strictEqual((yield* expectError(request("tasks/get", { taskId: "nope" }))).code, -32602)
        const plainResult = (yield* request("tools/call", { name: "plain", arguments: {}, task: { ttl: 10 } })) as Obj
        assert.strictEqual(plainResult.resultType, "complete")
      })
  )

  it.effect("a task's asks are its inputRequests, answered one at a time with tasks/update", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: withExtension
      })
      const created = (yield* request("tools/call", { name: "confirm", arguments: {} })) as Obj
      yield* TestClock.adjust("1 millis")
      const waiting = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(waiting.status, "input_required")
      const keys = Object.keys(waiting.inputRequests)
      assert.deepStrictEqual(keys, ["elicitation-0", "elicitation-1"])
      assert.strictEqual(waiting.inputRequests[keys[0]!].method, "elicitation/create")
      yield* request("tasks/update", {
        taskId: created.taskId,
        inputResponses: { [keys[0]!]: { action: "accept", content: { name: "Ada" } }, unknown: { x: 1 } }
      })
      const partial = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(partial.status, "input_required")
      assert.deepStrictEqual(Object.keys(partial.inputRequests), [keys[1]])
      yield* request("tasks/update", {
        taskId: created.taskId,
        inputResponses: { [keys[1]!]: { action: "accept", content: { name: "Grace" } } }
      })
      yield* TestClock.adjust("1 millis")
      const done = (yield* request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(done.status, "completed")
      assert.deepStrictEqual(done.result.content, [{ type: "text", text: "Ada Grace" }])
    })
  )

  it.effect("tasks/get, tasks/update and tasks/cancel carry the server info, as every result does", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: withExtension
      })
      const created = (yield* request("tools/call", { name: "confirm", arguments: {} })) as Obj
      const serverInfo = created._meta[Meta.serverInfoKey]
      assert.strictEqual(serverInfo.name, "test-server")
      const results = [
        (yield* request("tasks/get", { taskId: created.taskId })) as Obj,
        (yield* request("tasks/update", { taskId: created.taskId, inputResponses: {} })) as Obj,
        (yield* request("tasks/cancel", { taskId: created.taskId })) as Obj,
        // A terminal task's cancel is acknowledged alike.
        (yield* request("tasks/cancel", { taskId: created.taskId })) as Obj
      ]
      for (const result of results) assert.deepStrictEqual(result._meta?.[Meta.serverInfoKey], serverInfo)
    })
  )

  it.effect("a handler gathers input in rounds, then hands the rest to a task (Task.background)", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: withExtension
      })
      const first = (yield* request("tools/call", { name: "escalating", arguments: {} })) as Obj
      assert.strictEqual(first.resultType, "input_required")
      const key = Object.keys(first.inputRequests)[0]!
      const second = (yield* request("tools/call", {
        name: "escalating",
        arguments: {},
        inputResponses: { [key]: { action: "accept", content: { name: "Alice" } } },
        requestState: first.requestState
      })) as Obj
      assert.strictEqual(second.resultType, "task")
      assert.isUndefined(second.requestState)
      yield* TestClock.adjust("1 second")
      const done = (yield* request("tasks/get", { taskId: second.taskId })) as Obj
      assert.deepStrictEqual(done.result.content, [{ type: "text", text: "Hello, Alice" }])
    })
  )

  it.effect(
    "subscriptions/listen with taskIds streams notifications/tasks (the DetailedTask); -32021 without the extension",
    () =>
      Effect.gen(function* () {
        const { request, session, notifications, drain } = yield* McpTest.connectRaw(testServer(features), {
          revision: "2026-07-28",
          capabilities: withExtension,
          notifications: ["notifications/subscriptions/acknowledged", "notifications/tasks"]
        })
        const created = (yield* request("tools/call", { name: "slow", arguments: { seconds: 5 } })) as Obj
        yield* Effect.forkChild(
          session.request("subscriptions/listen", { notifications: { taskIds: [created.taskId, "other"] } })
        )
        const ack = yield* Queue.take(notifications)
        assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
        // The engine reads the acknowledgement with the extension's schema: the honoured `taskIds` survive.
        assert.deepStrictEqual((ack.params as Obj).notifications.taskIds, [created.taskId, "other"])
        yield* TestClock.adjust("5 seconds")
        const got = yield* drain
        assert.deepStrictEqual(
          got.map((n) => [n.method, (n.params as Obj).status, (n.params as Obj).result?.content]),
          [["notifications/tasks", "completed", [{ type: "text", text: "slept 5" }]]]
        )
        assert.isDefined((got[0]!.params as Obj)._meta["io.modelcontextprotocol/subscriptionId"])
        const without = yield* McpTest.connectRaw(testServer(features), { revision: "2026-07-28", capabilities: {} })
        const refused = yield* expectError(
          without.request("subscriptions/listen", { notifications: { taskIds: [created.taskId] } })
        )
        assert.strictEqual(refused.code, -32021)
      })
  )

  it.effect("the server declares the extension, not the 2025-11-25 capability", () =>
    Effect.gen(function* () {
      const { server, request } = yield* McpTest.connectRaw(testServer(features), { revision: "2026-07-28" })
      const caps = server.capabilities(Registry.get("2026-07-28")) as Obj
      assert.deepStrictEqual(caps.extensions?.[Tasks.extensionId], {})
      assert.isUndefined(caps.tasks)
      // server/discover declares what the revision asking has.
      const discovered = ((yield* request("server/discover")) as Obj).capabilities
      assert.deepStrictEqual(discovered.extensions?.[Tasks.extensionId], {})
      assert.isUndefined(discovered.tasks)
    })
  )
})

describe("tasks: the capability follows the registered tools", () => {
  it.effect("declared while a task-taking tool is registered, not after it is removed or replaced", () =>
    Effect.gen(function* () {
      const { server } = yield* McpTest.connectRaw(testServer(Tool.layer(plain)), { revision: "2025-11-25" })
      const declares = () => (server.capabilities(Registry.get("2025-11-25")) as Obj).tasks !== undefined
      assert.isFalse(declares())
      const scope = yield* Scope.make()
      yield* Tool.register(slow).pipe(Scope.provide(scope), Effect.provideService(McpServer.McpServer, server))
      assert.isTrue(declares())
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(declares())
      yield* Tool.register(slow).pipe(Effect.provideService(McpServer.McpServer, server))
      assert.isTrue(declares())
      const sameName = Tool.make("slow", { input: Schema.Struct({}), handler: () => Effect.succeed("sync") })
      yield* Tool.register(sameName).pipe(Effect.provideService(McpServer.McpServer, server))
      assert.isFalse(declares())
    })
  )
})

describe("tasks: 2025-11-25", () => {
  it.effect("a call with `task` answers with the task; tasks/result waits for the result; tasks/list pages", () =>
    Effect.gen(function* () {
      const { request, session } = yield* McpTest.connectRaw(testServer(features, { pageSize: 1 }), {
        revision: "2025-11-25"
      })
      const caps = session.state.peerCapabilities as Obj
      assert.deepStrictEqual(caps.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } })
      const tools: Array<Obj> = []
      let cursor: string | undefined
      do {
        const page = (yield* request("tools/list", cursor === undefined ? {} : { cursor })) as Obj
        tools.push(...page.tools)
        cursor = page.nextCursor
      } while (cursor !== undefined)
      assert.deepStrictEqual(tools.find((t) => t.name === "slow")?.execution, { taskSupport: "optional" })
      assert.isUndefined(tools.find((t) => t.name === "plain")?.execution)
      const created = (yield* request("tools/call", {
        name: "slow",
        arguments: { seconds: 5 },
        task: { ttl: 60_000 }
      })) as Obj
      assert.strictEqual(created.task.status, "working")
      assert.strictEqual(created.task.ttl, 60_000)
      const taskId: string = created.task.taskId
      const waiting = yield* Effect.forkChild(request("tasks/result", { taskId }))
      yield* TestClock.adjust("5 seconds")
      const result = (yield* Fiber.join(waiting)) as Obj
      assert.deepStrictEqual(result.content, [{ type: "text", text: "slept 5" }])
      assert.deepStrictEqual(result._meta[Tasks.relatedTaskKey], { taskId })
      const other = (yield* request("tools/call", { name: "slow", arguments: { seconds: 60 }, task: {} })) as Obj
      const page1 = (yield* request("tasks/list")) as Obj
      assert.deepStrictEqual(
        page1.tasks.map((t: Obj) => t.taskId),
        [taskId]
      )
      const page2 = (yield* request("tasks/list", { cursor: page1.nextCursor })) as Obj
      assert.deepStrictEqual(
        page2.tasks.map((t: Obj) => t.taskId),
        [other.task.taskId]
      )
      const cancelled = (yield* request("tasks/cancel", { taskId: other.task.taskId })) as Obj
      assert.strictEqual(cancelled.status, "cancelled")
      const again = yield* expectError(request("tasks/cancel", { taskId: other.task.taskId }))
      assert.strictEqual(again.code, -32602)
    })
  )

  it.effect(
    "a task's asks wait for tasks/result and travel related to it, with related-task; input_required meanwhile",
    () =>
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        const asked: Array<Obj> = []
        const handlers = new Map<string, Session.Handler>([
          [
            "elicitation/create",
            (params) =>
              Effect.as(
                Effect.andThen(
                  Effect.sync(() => asked.push(params as Obj)),
                  Deferred.await(release)
                ),
                { action: "accept", content: { name: "Ada" } }
              )
          ]
        ])
        const { request } = yield* McpTest.connectRaw(testServer(features), {
          revision: "2025-11-25",
          capabilities: { elicitation: {} },
          handlers
        })
        const created = (yield* request("tools/call", { name: "confirm", arguments: {}, task: {} })) as Obj
        const taskId: string = created.task.taskId
        yield* TestClock.adjust("1 millis")
        // The client has not called tasks/result yet: the task waits for input, nothing is sent.
        assert.strictEqual(((yield* request("tasks/get", { taskId })) as Obj).status, "input_required")
        assert.strictEqual(asked.length, 0)
        const waiting = yield* Effect.forkChild(request("tasks/result", { taskId }))
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(asked.length, 2)
        assert.deepStrictEqual(asked[0]!._meta?.[Tasks.relatedTaskKey], { taskId })
        assert.strictEqual(((yield* request("tasks/get", { taskId })) as Obj).status, "input_required")
        yield* Deferred.succeed(release, undefined)
        const result = (yield* Fiber.join(waiting)) as Obj
        assert.deepStrictEqual(result.content, [{ type: "text", text: "Ada Ada" }])
      })
  )

  it.effect("retention: the client's ttl (capped), the server's default; an expired task is -32602", () =>
    Effect.gen(function* () {
      const server = testServer(features, { tasks: { defaultTtlMs: 60_000, maxTtlMs: 120_000, pollIntervalMs: 250 } })
      const { request } = yield* McpTest.connectRaw(server, { revision: "2025-11-25" })
      const call = (task: object) => request("tools/call", { name: "slow", arguments: { seconds: 1 }, task })
      const defaulted = ((yield* call({})) as Obj).task
      const capped = ((yield* call({ ttl: 600_000 })) as Obj).task
      assert.strictEqual(defaulted.ttl, 60_000)
      assert.strictEqual(defaulted.pollInterval, 250)
      assert.strictEqual(capped.ttl, 120_000)
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(((yield* request("tasks/get", { taskId: defaulted.taskId })) as Obj).status, "completed")
      yield* TestClock.adjust("1 second")
      const expired = yield* expectError(request("tasks/get", { taskId: defaulted.taskId }))
      assert.strictEqual(expired.code, -32602)
      assert.strictEqual(((yield* request("tasks/get", { taskId: capped.taskId })) as Obj).status, "completed")
    })
  )

  it.effect("tasks/list agrees with tasks/get: an expired task is listed no more", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const done = (
        (yield* request("tools/call", { name: "slow", arguments: { seconds: 1 }, task: { ttl: 2_000 } })) as Obj
      ).task
      const kept = (
        (yield* request("tools/call", { name: "slow", arguments: { seconds: 1 }, task: { ttl: 60_000 } })) as Obj
      ).task
      yield* TestClock.adjust("1999 millis")
      assert.strictEqual(((yield* request("tasks/get", { taskId: done.taskId })) as Obj).status, "completed")
      assert.deepStrictEqual(
        ((yield* request("tasks/list")) as Obj).tasks.map((t: Obj) => t.taskId),
        [done.taskId, kept.taskId].sort()
      )
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* expectError(request("tasks/get", { taskId: done.taskId }))).code, -32602)
      assert.deepStrictEqual(
        ((yield* request("tasks/list")) as Obj).tasks.map((t: Obj) => t.taskId),
        [kept.taskId]
      )
    })
  )

  it.effect("tasks/list leaves out an expired task even when a store of one's own lists it", () =>
    Effect.gen(function* () {
      const memory = TaskStore.makeMemory()
      // A store of one's own whose list forgets to leave out what ran out: it lists every task it holds.
      const records = new Map<string, TaskStore.TaskRecord>()
      const careless: TaskStore.TaskStoreShape = {
        ...memory,
        create: (record) =>
          Effect.tap(
            memory.create(record),
            Effect.sync(() => records.set(record.taskId, record))
          ),
        update: (taskId, patch) =>
          Effect.tap(memory.update(taskId, patch), (next) =>
            Effect.sync(() => next !== undefined && records.set(taskId, next))
          ),
        list: (owner) => Effect.sync(() => ({ tasks: [...records.values()].filter((r) => r.owner === owner) }))
      }
      const server = testServer(features).pipe(Layer.provide(Layer.succeed(TaskStore.TaskStore, careless)))
      const { request } = yield* McpTest.connectRaw(server, { revision: "2025-11-25" })
      const done = (
        (yield* request("tools/call", { name: "slow", arguments: { seconds: 1 }, task: { ttl: 2_000 } })) as Obj
      ).task
      const kept = (
        (yield* request("tools/call", { name: "slow", arguments: { seconds: 1 }, task: { ttl: 60_000 } })) as Obj
      ).task
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(
        ((yield* request("tasks/list")) as Obj).tasks.map((t: Obj) => t.taskId),
        [kept.taskId]
      )
      assert.notStrictEqual(done.taskId, kept.taskId)
    })
  )

  it.effect("task support is enforced with -32601: required without `task`, forbidden with it", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      assert.strictEqual((yield* expectError(request("tools/call", { name: "required", arguments: {} }))).code, -32601)
      const forbidden = yield* expectError(request("tools/call", { name: "plain", arguments: {}, task: {} }))
      assert.strictEqual(forbidden.code, -32601)
    })
  )
})

describe("tasks: retention ends a task that is still working", () => {
  // The TTL is a retention from creation: once it runs out the task is gone (-32602 everywhere), so its work is
  // interrupted then, not left running out of anyone's reach. `lasting` works 100 s; its ttl is 2 s.
  const expiredError = (error: { readonly code?: number; readonly message?: string }) => {
    assert.strictEqual(error.code, -32602)
    assert.include(error.message, "expired")
  }

  it.effect("2025-11-25: its fiber is interrupted at expiry, a waiting tasks/result gets -32602, the record goes", () =>
    Effect.gen(function* () {
      finalizedAt = undefined
      const store = TaskStore.makeMemory()
      const server = testServer(features).pipe(Layer.provide(Layer.succeed(TaskStore.TaskStore, store)))
      const { request } = yield* McpTest.connectRaw(server, { revision: "2025-11-25" })
      const created = (yield* request("tools/call", { name: "lasting", arguments: {}, task: { ttl: 2_000 } })) as Obj
      const taskId: string = created.task.taskId
      const answeredAt = Effect.flatMap(Effect.flip(request("tasks/result", { taskId })), (error) =>
        Effect.map(Clock.currentTimeMillis, (at) => ({ error: error as Obj, at }))
      )
      const waiting = yield* Effect.forkChild(answeredAt)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual((yield* expectError(request("tasks/get", { taskId }))).code, -32602)
      assert.strictEqual((yield* expectError(request("tasks/cancel", { taskId }))).code, -32602)
      // Past the end of the work: the handler would have completed by now, had it been left running.
      yield* TestClock.adjust("100 seconds")
      const answered = yield* Fiber.join(waiting)
      expiredError(answered.error)
      assert.strictEqual(answered.at, 2_000)
      assert.strictEqual(finalizedAt, 2_000)
      assert.isUndefined(yield* store.get(taskId))
      assert.deepStrictEqual(((yield* request("tasks/list")) as Obj).tasks, [])
    })
  )

  it.effect("2026-07-28: its fiber is interrupted at expiry (finalizers run) and its record goes", () =>
    Effect.gen(function* () {
      finalizedAt = undefined
      const store = TaskStore.makeMemory()
      const server = testServer(features, { tasks: { defaultTtlMs: 2_000 } }).pipe(
        Layer.provide(Layer.succeed(TaskStore.TaskStore, store))
      )
      const { request } = yield* McpTest.connectRaw(server, { revision: "2026-07-28", capabilities: withExtension })
      const created = (yield* request("tools/call", { name: "lasting", arguments: {} })) as Obj
      const taskId: string = created.taskId
      yield* TestClock.adjust("1 second")
      assert.strictEqual(((yield* request("tasks/get", { taskId })) as Obj).status, "working")
      yield* TestClock.adjust("101 seconds")
      assert.strictEqual(finalizedAt, 2_000)
      assert.isUndefined(yield* store.get(taskId))
      assert.strictEqual((yield* expectError(request("tasks/get", { taskId }))).code, -32602)
      assert.strictEqual((yield* expectError(request("tasks/cancel", { taskId }))).code, -32602)
    })
  )
})

describe("tasks: workers", () => {
  it.effect("a task whose worker stopped heartbeating reads failed, never working forever", () =>
    Effect.gen(function* () {
      const store = TaskStore.makeMemory()
      yield* store.heartbeat("gone", 0)
      yield* store.create({
        taskId: "orphan",
        owner: "",
        method: "tools/call",
        status: "working",
        createdAt: 0,
        lastUpdatedAt: 0,
        ttlMs: null,
        pollIntervalMs: 500,
        worker: "gone"
      })
      const server = testServer(features, { tasks: { heartbeatMs: 1_000 } }).pipe(
        Layer.provide(Layer.succeed(TaskStore.TaskStore, store))
      )
      const { request } = yield* McpTest.connectRaw(server, { revision: "2026-07-28", capabilities: withExtension })
      yield* TestClock.adjust("2 seconds")
      const fresh = (yield* request("tasks/get", { taskId: "orphan" })) as Obj
      assert.strictEqual(fresh.status, "working")
      yield* TestClock.adjust("10 seconds")
      const orphan = (yield* request("tasks/get", { taskId: "orphan" })) as Obj
      assert.strictEqual(orphan.status, "failed")
      assert.strictEqual(orphan.error.code, -32603)
    })
  )

  it.effect("shutting the server down interrupts its tasks (finalizers run) and records them failed", () =>
    Effect.gen(function* () {
      finalized = 0
      const store = TaskStore.makeMemory()
      const server = testServer(features).pipe(Layer.provide(Layer.succeed(TaskStore.TaskStore, store)))
      const taskId = yield* Effect.scoped(
        Effect.gen(function* () {
          const { request } = yield* McpTest.connectRaw(server, {
            revision: "2026-07-28",
            capabilities: withExtension
          })
          const created = (yield* request("tools/call", { name: "slow", arguments: { seconds: 3600 } })) as Obj
          yield* TestClock.adjust("1 second")
          return created.taskId as string
        })
      )
      assert.strictEqual(finalized, 1)
      const record = yield* store.get(taskId)
      assert.strictEqual(record?.status, "failed")
    })
  )
})
