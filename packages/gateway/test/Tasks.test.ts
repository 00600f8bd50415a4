/**
 * Tasks through the in-memory gateway: an upstream ("a") with tools that
 * take tasks, clients of the gateway on 2025-11-25 made by `McpTest`. A
 * downstream task is the gateway's, its work the upstream call made as a
 * task; only the session that made it lists it.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpHost from "@effect-mcp/host/McpHost"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as CircuitBreaker from "../src/CircuitBreaker.ts"
import * as Gateway from "../src/Gateway.ts"
import { memory } from "./memoryConnector.ts"

/**
 * The upstream: `build` (a task where the client can take one; says it started on `started`, ends when `release`
 * is done), `stuck` (always a task, until cancelled), `confirm` (always a task; asks its caller), `echo` (never),
 * `crash` (never; an internal error, which a circuit counts).
 */
const upstream = Effect.gen(function* () {
  const started = yield* Queue.unbounded<string>()
  const release = yield* Deferred.make<void>()
  const stuckStarted = yield* Deferred.make<void>()
  const stuckInterrupted = yield* Deferred.make<void>()
  const server = yield* Layer.build(
    Tool.layer(
      Tool.make("build", {
        input: Schema.Struct({ target: Schema.String }),
        taskSupport: "optional",
        handler: ({ target }) =>
          Effect.andThen(Queue.offer(started, target), Effect.as(Deferred.await(release), `built ${target}`))
      }),
      Tool.make("stuck", {
        input: Schema.Struct({}),
        taskSupport: "required",
        handler: () =>
          Effect.andThen(Deferred.succeed(stuckStarted, undefined), Effect.never).pipe(
            Effect.onInterrupt(() => Deferred.succeed(stuckInterrupted, undefined))
          )
      }),
      Tool.make("confirm", {
        input: Schema.Struct({}),
        taskSupport: "required",
        handler: () =>
          Effect.map(Elicitation.form({ message: "who?", schema: Schema.Struct({ who: Schema.String }) }), (answer) =>
            Elicitation.isAccepted(answer) ? answer.content.who : answer.action
          )
      }),
      Tool.make("echo", { input: Schema.Struct({ text: Schema.String }), handler: ({ text }) => Effect.succeed(text) }),
      Tool.make("crash", {
        input: Schema.Struct({}),
        handler: () => Effect.fail(new McpError.InternalError({ message: "crashed" }))
      })
    ).pipe(Layer.provideMerge(McpServer.layer({ name: "a", version: "1.0.0" })))
  )
  return { server, started, release, stuckStarted, stuckInterrupted }
})

const config: McpConfig.Config = { mcpServers: { a: { command: "a" } } }

/**
 * The gateway over the upstream, with `options`, speaking 2025-11-25 to it: its tools say their task support, and
 * its tasks report their statuses (a 2026-07-28 upstream's are polled on the Clock: test/gateway runs one live).
 */
const gateway = (options: Partial<Gateway.Options> = {}) =>
  Effect.gen(function* () {
    const a = yield* upstream
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config,
        healthCheck: false,
        client: { supportedVersions: ["2025-11-25"] },
        ...options
      }).pipe(Layer.provide(memory({ a: a.server })))
    )
    return { ...a, context }
  })

/** A client of the gateway on 2025-11-25 that answers elicitations with `who`, and records them. */
const client = (context: Context.Context<McpServer.McpServer>, who: string) =>
  Effect.gen(function* () {
    const asked: Array<string> = []
    const made = yield* McpTest.makeClient({
      revision: "2025-11-25",
      clientHandlers: ElicitationHandler.layer({
        form: (params) =>
          Effect.sync(() => {
            asked.push(params.message)
            return { action: "accept" as const, content: { who } }
          })
      })
    }).pipe(Effect.provideContext(context))
    return { client: made, asked }
  })

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

/** The task a call answered with (it fails the test when the call answered with a result). */
const taskIdOf = (start: { readonly _tag: string; readonly task?: { readonly taskId: string } }) => {
  assert.strictEqual(start._tag, "Task")
  return start.task!.taskId
}

describe("Gateway tasks", () => {
  it.effect("declares tasks, and lists each tool's task support as its upstream does", () =>
    Effect.gen(function* () {
      const { context } = yield* gateway()
      const { client: c } = yield* client(context, "ada")
      assert.isDefined(c.serverCapabilities.tasks)
      const tools = yield* Stream.runCollect(c.tools)
      const support = tools.map((t) => `${t.name}:${t.execution?.taskSupport ?? "-"}`).sort()
      assert.deepStrictEqual(support, [
        "a__build:optional",
        "a__confirm:required",
        "a__crash:-",
        "a__echo:-",
        "a__stuck:required"
      ])
    })
  )

  it.effect("runs a task upstream as a task, under an id of its own that only its caller reads", () =>
    Effect.gen(function* () {
      const { context, started, release } = yield* gateway()
      const { client: c1 } = yield* client(context, "ada")
      const { client: c2 } = yield* client(context, "bob")
      const taskId = taskIdOf(yield* c1.tasks.callTool("a__build", { target: "x" }))
      assert.strictEqual(yield* Queue.take(started), "x")

      // Upstream, the call is a task too, with an id the client never sees.
      const upstreamTasks = yield* (yield* Context.get(context, McpHost.McpHost).tasks("a")).list.pipe(
        Stream.runCollect
      )
      assert.strictEqual(upstreamTasks.length, 1)
      assert.strictEqual(upstreamTasks[0]!.status, "working")
      assert.notStrictEqual(upstreamTasks[0]!.taskId, taskId)

      // Another session does not list it (reading it by id needs a session id or a principal to bind it to,
      // which sessions in memory have not: test/gateway/Tasks.test.ts reads and cancels over HTTP).
      assert.deepStrictEqual(yield* Stream.runCollect(c2.tasks.list), [])
      assert.deepStrictEqual(
        (yield* Stream.runCollect(c1.tasks.list)).map((t) => t.taskId),
        [taskId]
      )

      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(textOf(yield* c1.tasks.result(taskId)), "built x")
      assert.strictEqual((yield* c1.tasks.get(taskId)).status, "completed")
      // A plain call of the same tool is still a plain call.
      assert.strictEqual(textOf(yield* c1.callTool("a__build", { target: "y" })), "built y")
    })
  )

  it.effect("cancelling the task cancels the upstream's", () =>
    Effect.gen(function* () {
      const { context, stuckStarted, stuckInterrupted } = yield* gateway()
      const { client: c } = yield* client(context, "ada")
      const taskId = taskIdOf(yield* c.tasks.callTool("a__stuck", {}))
      yield* Deferred.await(stuckStarted)
      yield* c.tasks.cancel(taskId)
      yield* Deferred.await(stuckInterrupted)
      assert.strictEqual((yield* c.tasks.get(taskId)).status, "cancelled")
    })
  )

  it.effect("what the upstream task asks reaches the task's caller, and no one else", () =>
    Effect.gen(function* () {
      const { context } = yield* gateway()
      const ada = yield* client(context, "ada")
      const bob = yield* client(context, "bob")
      const taskId = taskIdOf(yield* ada.client.tasks.callTool("a__confirm", {}))
      assert.strictEqual(textOf(yield* ada.client.tasks.result(taskId)), "ada")
      assert.deepStrictEqual(ada.asked, ["who?"])
      assert.deepStrictEqual(bob.asked, [])
    })
  )

  it.effect("an open circuit refuses a task call as a plain one, before any task is made", () =>
    Effect.gen(function* () {
      const { context } = yield* gateway({ circuitBreaker: { failures: 1 } })
      const { client: c } = yield* client(context, "ada")
      yield* Effect.flip(c.callTool("a__crash", {}))
      const refused = (yield* Effect.flip(c.tasks.callTool("a__build", { target: "x" }))) as { readonly code?: unknown }
      assert.strictEqual(refused.code, CircuitBreaker.Code.CircuitOpen)
      assert.deepStrictEqual(yield* Stream.runCollect(c.tasks.list), [])
    })
  )

  it.effect("a tool the policy hides is refused before any task is made", () =>
    Effect.gen(function* () {
      const { context } = yield* gateway({ policy: (item) => item.name !== "a__build" })
      const { client: c } = yield* client(context, "ada")
      const refused = yield* Effect.flip(c.tasks.callTool("a__build", { target: "x" }))
      assert.include(String((refused as { readonly message?: unknown }).message), "a__build")
      assert.deepStrictEqual(yield* Stream.runCollect(c.tasks.list), [])
    })
  )
})
