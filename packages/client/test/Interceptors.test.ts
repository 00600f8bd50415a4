/**
 * Client interceptors over an in-memory server: retries of idempotent
 * requests on a Schedule (TestClock), none for `tools/call` unless the tool is
 * annotated idempotent or read-only, none for a non-transient error, the
 * Layer form (list Streams included) and request logging without arguments.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Interceptor from "@effect-mcp/client/Interceptor"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"

/** Counts the requests of each method/target and fails the first `failures` of those `fails` picks. */
const flaky = (
  fails: (request: Middleware.Request) => boolean,
  failures: number,
  error: () => McpError.McpError = () => new McpError.InternalError({})
) => {
  const seen = new Map<string, number>()
  const middleware: Middleware.Middleware = (request, next) =>
    Effect.suspend(() => {
      const key = `${request.method}:${request.target ?? ""}`
      const n = (seen.get(key) ?? 0) + 1
      seen.set(key, n)
      return fails(request) && n <= failures ? Effect.fail(error()) : next
    })
  return { middleware, count: (key: string) => seen.get(key) ?? 0 }
}

const tool = (name: string, annotations?: Tools.ToolAnnotations) =>
  Tool.make(name, {
    input: Schema.Struct({}),
    ...(annotations === undefined ? {} : { annotations }),
    handler: () => Effect.succeed(`${name} done`)
  })

const server = (middleware: Middleware.Middleware) =>
  Layer.provideMerge(
    Layer.merge(
      Tool.layer(tool("launch"), tool("lookup", { idempotentHint: true }), tool("peek", { readOnlyHint: true })),
      Middleware.layer(middleware)
    ),
    McpServer.layer({ name: "flaky", version: "1.0.0", declare: ["resources"] })
  )

const everySecond = Schedule.max([Schedule.spaced("1 second"), Schedule.recurs(3)])

describe("Interceptor", () => {
  it.effect("retry: an idempotent request is sent again on the Schedule while it fails transiently", () =>
    Effect.gen(function* () {
      const f = flaky((r) => r.method === "tools/list", 2)
      const { client } = yield* McpTest.connect(server(f.middleware))
      const retrying = Interceptor.wrap(client, [Interceptor.retry({ schedule: everySecond })])
      const list = yield* Effect.forkChild(retrying.listTools())
      yield* TestClock.adjust("1 second")
      assert.isUndefined(list.pollUnsafe())
      assert.strictEqual(f.count("tools/list:"), 2)
      yield* TestClock.adjust("1 second")
      const page = yield* Fiber.join(list)
      assert.strictEqual(page.tools.length, 3)
      assert.strictEqual(f.count("tools/list:"), 3)
    })
  )

  it.effect("retry: tools/call is sent once unless the tool is annotated idempotent or read-only", () =>
    Effect.gen(function* () {
      const f = flaky((r) => r.method === "tools/call", 1)
      const { client } = yield* McpTest.connect(server(f.middleware))
      const retrying = Interceptor.wrap(client, [Interceptor.retry({ schedule: everySecond })])
      // Before any tools/list the client knows no annotations: nothing is repeated.
      const unknown = yield* Effect.flip(retrying.callTool("lookup"))
      assert.strictEqual(unknown._tag, "InternalError")
      assert.strictEqual(f.count("tools/call:lookup"), 1)
      yield* retrying.listTools()
      const launch = yield* Effect.flip(retrying.callTool("launch"))
      assert.strictEqual(launch._tag, "InternalError")
      assert.strictEqual(f.count("tools/call:launch"), 1)
      const peek = yield* Effect.forkChild(retrying.callTool("peek"))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual((yield* Fiber.join(peek)).content, [{ type: "text", text: "peek done" }])
      assert.strictEqual(f.count("tools/call:peek"), 2)
    })
  )

  it.effect("retry: a failure that is not transient is not retried", () =>
    Effect.gen(function* () {
      const f = flaky(
        (r) => r.method === "resources/list",
        5,
        () => new McpError.InvalidParams({ message: "bad" })
      )
      const { client } = yield* McpTest.connect(server(f.middleware))
      const retrying = Interceptor.wrap(client, [Interceptor.retry({ schedule: everySecond })])
      const error = yield* Effect.flip(retrying.listResources())
      assert.strictEqual(error._tag, "InvalidParams")
      assert.strictEqual(f.count("resources/list:"), 1)
      assert.isFalse(Interceptor.isTransient(error))
      assert.isTrue(
        Interceptor.isTransient(new McpError.JsonRpcError({ code: Middleware.Code.RateLimited, message: "" }))
      )
    })
  )

  it.effect("layer: the McpClient below is re-provided with the interceptors, list Streams page through them", () =>
    Effect.gen(function* () {
      const f = flaky((r) => r.method === "tools/list", 1)
      const context = yield* Layer.build(
        Interceptor.layer(Interceptor.retry({ schedule: everySecond })).pipe(
          Layer.provide(McpTest.layer(server(f.middleware)))
        )
      )
      const client = yield* McpClient.McpClient.pipe(Effect.provideContext(context))
      const names = yield* Effect.forkChild(Stream.runCollect(Stream.map(client.tools, (t) => t.name)))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual([...(yield* Fiber.join(names))].sort(), ["launch", "lookup", "peek"])
      assert.strictEqual(f.count("tools/list:"), 2)
    })
  )

  it.effect("logging: method, target, outcome and duration; never the arguments", () =>
    Effect.gen(function* () {
      const lines: Array<{ readonly message: string; readonly annotations: object }> = []
      const capture = Logger.make((options) => {
        lines.push({
          message: String(options.message),
          annotations: options.fiber.getRef(References.CurrentLogAnnotations)
        })
      })
      const f = flaky((r) => r.target === "launch", 1)
      const { client } = yield* McpTest.connect(server(f.middleware))
      const logged = Interceptor.wrap(client, [Interceptor.logging()])
      const run = <A, E>(effect: Effect.Effect<A, E>) =>
        effect.pipe(Effect.provide(Logger.layer([capture])), Effect.provideService(References.MinimumLogLevel, "Debug"))
      yield* run(logged.callTool("peek", { secret: "hunter2" }))
      yield* run(Effect.flip(logged.callTool("launch", { secret: "hunter2" })))
      assert.deepStrictEqual(
        lines.filter((l) => l.message.includes("MCP client request")).map((l) => l.annotations),
        [
          { method: "tools/call", target: "peek", outcome: "success", durationMs: 0 },
          { method: "tools/call", target: "launch", outcome: "failure", errorTag: "InternalError", durationMs: 0 }
        ]
      )
      assert.notInclude(JSON.stringify(lines), "hunter2")
    })
  )
})
