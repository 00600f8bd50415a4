/**
 * The client as a task receiver (2025-11-25), against effect-mcp's own
 * server on the TestClock: a tool's sampling and elicitation asked as tasks
 * (`task` on the ask) are answered by the client with a task at once, run as
 * fibers of the client's scope, polled by the server with `tasks/get` at the
 * client's interval and read with `tasks/result`; the handler sees the same
 * answer as a plain ask. Interrupting the ask cancels the task, which
 * interrupts the client's handler fiber (its finalizer runs). The server's
 * `tasks/get`, `tasks/list`, `tasks/cancel` and `tasks/result` on the client.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { clientInfo, recording } from "./fixtures.ts"

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read field by field
type Obj = { readonly [key: string]: any }

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text?: string } | undefined)?.text

/** What the server's asks see, and raw requests it sends the client from a tool. */
const server = Effect.gen(function* () {
  const raw: Array<unknown> = []
  const tools = Tool.layer(
    Tool.make("summarize", {
      input: Schema.Struct({}),
      handler: () =>
        Effect.gen(function* () {
          const answer = yield* Sampling.createMessage(
            { messages: [{ role: "user", content: { type: "text", text: "summarize" } }], maxTokens: 10 },
            { task: { ttl: 60_000 } }
          )
          raw.push(answer)
          return Sampling.text(answer)
        })
    }),
    Tool.make("confirm", {
      input: Schema.Struct({}),
      handler: () =>
        Effect.gen(function* () {
          const answer = yield* Elicitation.form(
            { message: "name?", schema: Schema.Struct({ name: Schema.String }) },
            { task: true }
          )
          return answer.action === "accept" ? `hello ${answer.content.name}` : "declined"
        })
    })
  )
  return { layer: Layer.provideMerge(tools, McpServer.layer({ name: "asker", version: "1.0.0" })), raw }
})

/** Runs `effect` in a fiber while the TestClock moves on, until it is done. */
const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.forkChild(effect, { startImmediately: true }), (fiber) =>
    McpTest.advanceUntilDone(fiber, "250 millis")
  )

const responses = (sent: ReadonlyArray<JsonRpc.Message>) =>
  sent.flatMap((m) => ("result" in m ? [m.result as Obj] : []))

/** The `notifications/tasks/status` the client sent, as [taskId, status]. */
const statusNotifications = (sent: ReadonlyArray<JsonRpc.Message>) =>
  sent.flatMap((m) =>
    "method" in m && m.method === "notifications/tasks/status" && !("id" in m)
      ? [[(m.params as Obj).taskId, (m.params as Obj).status]]
      : []
  )

describe("the client as a task receiver (2025-11-25)", () => {
  it.effect("sampling and elicitation asked as tasks: answered with a task, polled, read; transparent", () =>
    Effect.gen(function* () {
      const { layer, raw } = yield* server
      let wire: ReturnType<typeof recording> | undefined
      const handlers = Layer.merge(
        SamplingHandler.layer(() =>
          Effect.as(Effect.sleep("3 seconds"), {
            role: "assistant" as const,
            content: { type: "text" as const, text: "short" },
            model: "m"
          })
        ),
        ElicitationHandler.layer({
          form: () => Effect.as(Effect.sleep("2 seconds"), { action: "accept" as const, content: { name: "Ada" } })
        })
      )
      const { client } = yield* McpTest.connect(layer, {
        revision: "2025-11-25",
        clientInfo,
        clientHandlers: handlers,
        client: { taskRequests: { sampling: true, elicitation: true, pollIntervalMs: 1_000 } },
        clientTransport: (end) =>
          Effect.sync(() => {
            wire = recording(end)
            return wire.transport
          })
      })
      assert.strictEqual(textOf(yield* timed(client.callTool("summarize"))), "short")
      // The handler's answer carries no trace of the task.
      assert.isUndefined((raw[0] as Obj)._meta)
      const sent = responses(wire!.sent)
      const created = sent.find((r) => r.task !== undefined)
      assert.isDefined(created)
      assert.strictEqual(created!.task.status, "working")
      assert.strictEqual(created!.task.ttl, 60_000)
      assert.strictEqual(created!.task.pollInterval, 1_000)
      // Polled on the Clock at the client's interval (3 seconds of work, 1 second apart), then read.
      const polls = sent.filter((r) => r.taskId === created!.task.taskId && r.status !== undefined)
      assert.deepStrictEqual(
        polls.map((r) => r.status),
        ["working", "working", "completed"]
      )
      const payload = sent.find((r) => r.model === "m")
      assert.deepStrictEqual(payload!._meta[Tasks.relatedTaskKey], { taskId: created!.task.taskId })
      // Its one change of status was told to the server, before the result was read.
      assert.deepStrictEqual(statusNotifications(wire!.sent), [[created!.task.taskId, "completed"]])
      const told = wire!.sent.findIndex((m) => "method" in m && m.method === "notifications/tasks/status")
      assert.isBelow(
        told,
        wire!.sent.findIndex((m) => "result" in m && (m.result as Obj).model === "m")
      )

      assert.strictEqual(textOf(yield* timed(client.callTool("confirm"))), "hello Ada")
      const tasks = responses(wire!.sent).filter((r) => r.task !== undefined)
      assert.strictEqual(tasks.length, 2)
      assert.strictEqual(tasks[1]!.task.ttl, 3_600_000)
    })
  )

  it.effect(
    "the server's ask hears the client's status notification: the result is read at once, not a poll later",
    () =>
      Effect.gen(function* () {
        const { layer } = yield* server
        // The first ask's handler takes 3 seconds; the second's is done at once (its status may be told
        // before the server follows the task).
        let asks = 0
        const handlers = SamplingHandler.layer(() =>
          Effect.as(++asks === 1 ? Effect.sleep("3 seconds") : Effect.void, {
            role: "assistant" as const,
            content: { type: "text" as const, text: `early ${asks}` },
            model: "m"
          })
        )
        const { client } = yield* McpTest.connect(layer, {
          revision: "2025-11-25",
          clientInfo,
          clientHandlers: handlers,
          // A minute between polls: only the notification can end the wait sooner.
          client: { taskRequests: { sampling: true, pollIntervalMs: 60_000 } }
        })
        const call = yield* Effect.forkChild(client.callTool("summarize"), { startImmediately: true })
        yield* TestClock.adjust("3 seconds")
        // The clock stands still from here: a call that waited for the next poll would hang.
        assert.strictEqual(textOf(yield* Fiber.join(call)), "early 1")
        const quick = yield* Effect.forkChild(client.callTool("summarize"), { startImmediately: true })
        assert.strictEqual(textOf(yield* Fiber.join(quick)), "early 2")
      })
  )

  it.effect("interrupting the ask cancels the client's task: its handler fiber is interrupted (finalizer runs)", () =>
    Effect.gen(function* () {
      const { layer } = yield* server
      const started = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const handlers = SamplingHandler.layer(() =>
        Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
          Effect.ensuring(Deferred.succeed(finalized, undefined))
        )
      )
      let wire: ReturnType<typeof recording> | undefined
      const { client } = yield* McpTest.connect(layer, {
        revision: "2025-11-25",
        clientInfo,
        clientHandlers: handlers,
        client: { taskRequests: { sampling: true } },
        clientTransport: (end) =>
          Effect.sync(() => {
            wire = recording(end)
            return wire.transport
          })
      })
      const call = yield* Effect.forkChild(client.callTool("summarize"), { startImmediately: true })
      yield* Deferred.await(started)
      yield* TestClock.adjust("2 seconds")
      // The client ends its call: the server's handler (and its ask) is interrupted and cancels the task.
      yield* Fiber.interrupt(call)
      yield* Deferred.await(finalized)
      // The server's tasks/cancel is answered with the cancelled task (after the handler's finalizer ran).
      const created = responses(wire!.sent).find((r) => r.task !== undefined)!
      const statuses = () => responses(wire!.sent).flatMap((r) => (r.taskId === created.task.taskId ? [r.status] : []))
      yield* wire!.awaitSent(() => statuses().includes("cancelled"))
      // Polled every 500 ms (the default interval) while it ran: 4 polls in 2 seconds, all `working`.
      assert.deepStrictEqual(statuses(), ["working", "working", "working", "working", "cancelled"])
      // The cancel was told once (the interrupted handler's own outcome changes nothing after it).
      yield* wire!.awaitSent(() => statusNotifications(wire!.sent).length > 0)
      assert.deepStrictEqual(statusNotifications(wire!.sent), [[created.task.taskId, "cancelled"]])
    })
  )

  it.effect("the server's tasks/* on the client: get, result (waits), list, cancel; errors; without the option", () =>
    Effect.gen(function* () {
      let server: Session.SessionShape | undefined
      const scripted = ServerSession.make({
        serverInfo: { name: "scripted", version: "1.0.0" },
        capabilities: {},
        handlers: new Map()
      }).pipe(Effect.tap((session) => Effect.sync(() => (server = session))))
      const handlers = SamplingHandler.layer((params) =>
        params.maxTokens === 0
          ? Effect.fail(new McpError.InvalidParams({ message: "no model" }))
          : Effect.as(Effect.sleep("5 seconds"), {
              role: "assistant" as const,
              content: { type: "text" as const, text: "done" },
              model: "m"
            })
      )
      const client = yield* McpTest.makeClientFor(scripted, {
        revision: "2025-11-25",
        clientInfo,
        clientHandlers: handlers,
        client: { taskRequests: { sampling: true, elicitation: true, maxTtlMs: 10_000 } }
      })
      const session = server!
      // The client sent `initialized` before its ping; the server handles frames in order.
      yield* client.ping()
      assert.strictEqual(session.state.phase, "Ready")
      // Declared for the handlers it has (no elicitation handler: not declared).
      assert.deepStrictEqual((session.state.peerCapabilities as Obj).tasks, {
        list: {},
        cancel: {},
        requests: { sampling: { createMessage: {} } }
      })
      const ask = (maxTokens: number, ttl?: number) =>
        session.request("sampling/createMessage", {
          messages: [{ role: "user", content: { type: "text", text: "hi" } }],
          maxTokens,
          task: ttl === undefined ? {} : { ttl }
        }) as Effect.Effect<Obj, unknown>
      const created = (yield* ask(10, 60_000)).task
      assert.strictEqual(created.status, "working")
      assert.strictEqual(created.ttl, 10_000)
      const got = (yield* session.request("tasks/get", { taskId: created.taskId })) as Obj
      assert.strictEqual(got.status, "working")
      const result = yield* Effect.forkChild(session.request("tasks/result", { taskId: created.taskId }), {
        startImmediately: true
      })
      yield* TestClock.adjust("5 seconds")
      const payload = (yield* Fiber.join(result)) as Obj
      assert.strictEqual(payload.content.text, "done")
      assert.deepStrictEqual(payload._meta[Tasks.relatedTaskKey], { taskId: created.taskId })

      const failing = (yield* ask(0)).task
      const failure = yield* Effect.flip(session.request("tasks/result", { taskId: failing.taskId }))
      assert.strictEqual((failure as Obj).code, -32602)
      assert.strictEqual((failure as Obj).message, "no model")

      const listed = (yield* session.request("tasks/list", {})) as Obj
      assert.deepStrictEqual(
        listed.tasks.map((t: Obj) => [t.taskId, t.status]),
        [
          [created.taskId, "completed"],
          [failing.taskId, "failed"]
        ]
      )
      const terminal = yield* Effect.flip(session.request("tasks/cancel", { taskId: created.taskId }))
      assert.strictEqual((terminal as Obj).code, -32602)
      const unknown = yield* Effect.flip(session.request("tasks/get", { taskId: "nope" }))
      assert.strictEqual((unknown as Obj).code, -32602)
      // Retention ran out: the task is gone.
      yield* TestClock.adjust("10 seconds")
      const expired = yield* Effect.flip(session.request("tasks/get", { taskId: created.taskId }))
      assert.strictEqual((expired as Obj).code, -32602)

      // Without the option: nothing declared, and the session refuses tasks/* before sending.
      let plainServer: Session.SessionShape | undefined
      const plainClient = yield* McpTest.makeClientFor(
        ServerSession.make({ serverInfo: { name: "s", version: "1" }, capabilities: {}, handlers: new Map() }).pipe(
          Effect.tap((s) => Effect.sync(() => (plainServer = s)))
        ),
        { revision: "2025-11-25", clientInfo, clientHandlers: handlers }
      )
      // The client sent `initialized` before its ping; the server handles frames in order.
      yield* plainClient.ping()
      assert.strictEqual(plainServer!.state.phase, "Ready")
      assert.isUndefined((plainServer!.state.peerCapabilities as Obj).tasks)
      const refused = yield* Effect.flip(plainServer!.request("tasks/list", {}))
      assert.strictEqual((refused as Obj)._tag, "NotSupported")
    })
  )

  it.effect(
    "a task still working when its retention runs out is interrupted then; a waiting tasks/result is told",
    () =>
      Effect.gen(function* () {
        let server: Session.SessionShape | undefined
        const scripted = ServerSession.make({
          serverInfo: { name: "scripted", version: "1.0.0" },
          capabilities: {},
          handlers: new Map()
        }).pipe(Effect.tap((session) => Effect.sync(() => (server = session))))
        const stopped = yield* Deferred.make<number>()
        const handlers = SamplingHandler.layer(() =>
          Effect.as(Effect.sleep("100 seconds"), {
            role: "assistant" as const,
            content: { type: "text" as const, text: "late" },
            model: "m"
          }).pipe(
            Effect.onInterrupt(() =>
              Effect.flatMap(
                Effect.clockWith((clock) => clock.currentTimeMillis),
                (now) => Deferred.succeed(stopped, now)
              )
            )
          )
        )
        const client = yield* McpTest.makeClientFor(scripted, {
          revision: "2025-11-25",
          clientInfo,
          clientHandlers: handlers,
          client: { taskRequests: { sampling: true } }
        })
        yield* client.ping()
        const session = server!
        const startedAt = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const created = (
          (yield* session.request("sampling/createMessage", {
            messages: [{ role: "user", content: { type: "text", text: "hi" } }],
            maxTokens: 10,
            task: { ttl: 2_000 }
          })) as Obj
        ).task
        const waiting = yield* Effect.forkChild(
          Effect.flip(session.request("tasks/result", { taskId: created.taskId })),
          {
            startImmediately: true
          }
        )
        yield* TestClock.adjust("2 seconds")
        // Before, the handler ran on to its 100 seconds, where no tasks/cancel could reach it.
        assert.strictEqual((yield* Deferred.await(stopped)) - startedAt, 2_000)
        const told = (yield* Fiber.join(waiting)) as Obj
        assert.strictEqual(told.code, -32602)
        assert.include(told.message, "Task has expired")
        assert.deepStrictEqual(((yield* session.request("tasks/list", {})) as Obj).tasks, [])
      })
  )

  it.effect("a client that declares the capability but answers at once: the answer is the ask's", () =>
    Effect.gen(function* () {
      const { layer, raw } = yield* server
      let wire: ReturnType<typeof recording> | undefined
      const { client } = yield* McpTest.connect(layer, {
        revision: "2025-11-25",
        clientInfo,
        clientHandlers: SamplingHandler.layer(() =>
          Effect.succeed({ role: "assistant" as const, content: { type: "text" as const, text: "now" }, model: "m" })
        ),
        // Declared by hand, without `taskRequests`: the request's `task` is ignored by the plain handler.
        client: { capabilities: { tasks: { requests: { sampling: { createMessage: {} } } } } },
        clientTransport: (end) =>
          Effect.sync(() => {
            wire = recording(end)
            return wire.transport
          })
      })
      assert.strictEqual(textOf(yield* client.callTool("summarize")), "now")
      assert.strictEqual((raw[0] as Obj).model, "m")
      assert.isFalse(responses(wire!.sent).some((r) => r.task !== undefined))
    })
  )
})
