/**
 * Server middleware: the order of the chain, the built-ins on the TestClock
 * (timeout, token bucket per session and per principal, request logging) and
 * per-request visibility of list results, over an in-memory session.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpError from "@effect-mcp/protocol/McpError"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { type Obj, testServer } from "./fixtures.ts"

const Echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})
const Slow = Tool.make("slow", {
  input: Schema.Struct({}),
  handler: () => Effect.as(Effect.sleep("10 seconds"), "done")
})
const Admin = Tool.make("admin", {
  input: Schema.Struct({}),
  scopes: ["admin"],
  handler: () => Effect.succeed("ok")
})
const Greet = Prompt.make({ name: "greet", handler: () => Effect.succeed("hi") })
const Internal = Prompt.make({ name: "internal", handler: () => Effect.succeed("psst") })
const Features = Layer.mergeAll(Tool.layer(Echo, Slow, Admin), Prompt.layer(Greet, Internal))

/** A principal, as an authenticating transport reports it (`Transport.principal`). */
const principal = (owner: string, scopes: ReadonlyArray<string>): Transport.Authenticated => ({
  owner,
  scopes,
  value: undefined
})

/** A server with `features` and `middleware`, and a way to connect clients (optionally as a principal). */
const serve = (middleware: Layer.Layer<never, never, McpServer.McpServer>, loggers?: Logger.Logger<unknown, void>) =>
  Effect.gen(function* () {
    const base = testServer(Layer.merge(Features, middleware))
    const context = yield* Layer.build(
      loggers === undefined ? base : base.pipe(Layer.provideMerge(Logger.layer([loggers], { mergeWithExisting: true })))
    )
    return (as?: Transport.Authenticated, revision: ProtocolVersion = "2025-11-25") =>
      McpTest.makeClientFor(
        as === undefined
          ? McpServer.makeSession
          : // The session's transport says whom its requests come from, as an authenticating HTTP server's does.
            McpServer.makeSession.pipe(
              Effect.updateService(Transport.Transport, (transport) => ({ ...transport, principal: () => as }))
            ),
        { revision }
      ).pipe(Effect.provideContext(context))
  })

const codeOf = (error: unknown) => (error as { readonly code: number }).code
const dataOf = (error: unknown) => (error as { readonly data: Obj }).data

describe("Middleware", () => {
  it.effect("runs the chain in order: by layer order, then as listed; narrowed ones only where they apply", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const mark =
        (label: string): Middleware.Middleware =>
        (request, next) =>
          Effect.sync(() => seen.push(`${label}>${request.method}:${request.target ?? ""}`)).pipe(
            Effect.andThen(next),
            Effect.tap(() => Effect.sync(() => seen.push(`<${label}`)))
          )
      const connect = yield* serve(
        Layer.mergeAll(
          Middleware.layerAt(1, mark("inner")),
          Middleware.layer(mark("a"), Middleware.forTool("echo", mark("b"))),
          Middleware.layerAt(-1, mark("outer"))
        )
      )
      const client = yield* connect()
      yield* client.callTool("echo", { text: "x" })
      assert.deepStrictEqual(seen, [
        "outer>tools/call:echo",
        "a>tools/call:echo",
        "b>tools/call:echo",
        "inner>tools/call:echo",
        "<inner",
        "<b",
        "<a",
        "<outer"
      ])
      seen.length = 0
      yield* client.getPrompt("greet")
      assert.deepStrictEqual(seen, [
        "outer>prompts/get:greet",
        "a>prompts/get:greet",
        "inner>prompts/get:greet",
        "<inner",
        "<a",
        "<outer"
      ])
    })
  )

  it.effect("a middleware's McpError reaches the client as that JSON-RPC error; a defect as an internal error", () =>
    Effect.gen(function* () {
      let ran = 0
      const connect = yield* serve(
        Middleware.layer(
          Middleware.forTool("echo", (request, next) =>
            (request.params as Obj).arguments?.text === "no"
              ? Effect.fail(new McpError.InvalidParams({ message: "refused", data: { why: "no" } }))
              : Effect.andThen(
                  Effect.sync(() => ran++),
                  next
                )
          ),
          Middleware.forTool("admin", () => Effect.die(new Error("secret stack")))
        )
      )
      const client = yield* connect()
      yield* client.callTool("echo", { text: "yes" })
      const refused = yield* Effect.flip(client.callTool("echo", { text: "no" }))
      assert.strictEqual(codeOf(refused), -32602)
      assert.deepStrictEqual(dataOf(refused), { why: "no" })
      assert.strictEqual(ran, 1)
      const error = yield* Effect.flip(client.callTool("admin", {}))
      assert.strictEqual(codeOf(error), -32603)
      assert.notInclude(JSON.stringify(error), "secret stack")
    })
  )

  it.effect("timeout: a request past its deadline fails with RequestTimeout (-32001) and its timeoutMs", () =>
    Effect.gen(function* () {
      const connect = yield* serve(Middleware.layer(Middleware.timeout("1 second")))
      const client = yield* connect()
      const call = yield* Effect.forkChild(Effect.flip(client.callTool("slow", {})))
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(call.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(call)
      assert.strictEqual(codeOf(error), Middleware.Code.RequestTimeout)
      assert.deepStrictEqual(dataOf(error), { timeoutMs: 1000 })
      // A quick request is untouched.
      assert.deepStrictEqual((yield* client.callTool("echo", { text: "fast" })).content, [
        { type: "text", text: "fast" }
      ])
    })
  )

  it.effect("rateLimit: a token bucket per session, refilled on the Clock", () =>
    Effect.gen(function* () {
      const connect = yield* serve(Middleware.layer(Middleware.rateLimit({ capacity: 2, refillEvery: "1 second" })))
      const client = yield* connect()
      const echo = client.callTool("echo", { text: "x" })
      yield* echo
      yield* echo
      const refused = yield* Effect.flip(echo)
      assert.strictEqual(codeOf(refused), Middleware.Code.RateLimited)
      assert.deepStrictEqual(dataOf(refused), { retryAfterMs: 1000 })
      yield* TestClock.adjust("600 millis")
      assert.deepStrictEqual(dataOf(yield* Effect.flip(echo)), { retryAfterMs: 400 })
      // Another session has a bucket of its own.
      const other = yield* connect()
      yield* other.callTool("echo", { text: "y" })
      yield* TestClock.adjust("400 millis")
      yield* echo
      assert.strictEqual(codeOf(yield* Effect.flip(echo)), Middleware.Code.RateLimited)
      // Refill stops at the capacity.
      yield* TestClock.adjust("1 hour")
      yield* echo
      yield* echo
      assert.strictEqual(codeOf(yield* Effect.flip(echo)), Middleware.Code.RateLimited)
    })
  )

  it.effect("rateLimit: sessions of one principal share its bucket", () =>
    Effect.gen(function* () {
      const connect = yield* serve(Middleware.layer(Middleware.rateLimit({ capacity: 1, refillEvery: "1 minute" })))
      const first = yield* connect(principal("alice", []))
      const second = yield* connect(principal("alice", []))
      const bob = yield* connect(principal("bob", []))
      yield* first.callTool("echo", { text: "x" })
      assert.strictEqual(codeOf(yield* Effect.flip(second.callTool("echo", { text: "x" }))), -32029)
      yield* bob.callTool("echo", { text: "x" })
    })
  )

  it.effect("logging: method, target, outcome and duration on the Clock; never the arguments", () =>
    Effect.gen(function* () {
      const lines: Array<{ readonly message: string; readonly annotations: Obj }> = []
      const capture = Logger.make((options) => {
        lines.push({
          message: String(options.message),
          annotations: options.fiber.getRef(References.CurrentLogAnnotations)
        })
      })
      const connect = yield* serve(Middleware.layer(Middleware.logging()), capture)
      const client = yield* connect()
      yield* client.callTool("echo", { text: "hunter2" })
      const slow = yield* Effect.forkChild(client.callTool("slow", {}))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(slow)
      yield* Effect.flip(client.callTool("missing", { text: "hunter2" }))
      const requests = lines.filter((l) => l.message.includes("MCP request"))
      assert.deepStrictEqual(
        requests.map((l) => l.annotations),
        [
          { method: "tools/call", target: "echo", outcome: "success", durationMs: 0 },
          { method: "tools/call", target: "slow", outcome: "success", durationMs: 10_000 },
          { method: "tools/call", target: "missing", outcome: "error", errorCode: -32602, durationMs: 0 }
        ]
      )
      assert.notInclude(JSON.stringify(lines), "hunter2")
    })
  )

  it.effect("visibility: hideUnauthorized hides what the principal's scopes do not cover; predicates per list", () =>
    Effect.gen(function* () {
      const connect = yield* serve(
        Middleware.layer(
          Middleware.hideUnauthorized,
          Middleware.visibility({
            prompts: (item, request) => item.definition.name !== "internal" || request.principal?.owner === "root"
          })
        )
      )
      const names = (items: ReadonlyArray<{ readonly name: string }>) => items.map((i) => i.name).sort()
      const anonymous = yield* connect()
      assert.deepStrictEqual(names((yield* anonymous.listTools()).tools), ["admin", "echo", "slow"])
      assert.deepStrictEqual(names((yield* anonymous.listPrompts()).prompts), ["greet"])
      const user = yield* connect(principal("user", ["read"]))
      assert.deepStrictEqual(names((yield* user.listTools()).tools), ["echo", "slow"])
      const root = yield* connect(principal("root", ["admin"]))
      assert.deepStrictEqual(names((yield* root.listTools()).tools), ["admin", "echo", "slow"])
      assert.deepStrictEqual(names((yield* root.listPrompts()).prompts), ["greet", "internal"])
    })
  )

  it.effect("authorize: the principal's scopes against the item's, or a rule of your own", () =>
    Effect.gen(function* () {
      const connect = yield* serve(
        Middleware.layer(
          Middleware.authorize(),
          Middleware.forPrompt(
            "internal",
            Middleware.authorize((request) => request.principal?.owner === "root")
          )
        )
      )
      const user = yield* connect(principal("user", ["read"]))
      const refused = yield* Effect.flip(user.callTool("admin", {}))
      assert.strictEqual(codeOf(refused), Middleware.Code.Forbidden)
      assert.deepStrictEqual(dataOf(refused), { requiredScopes: ["admin"] })
      yield* user.callTool("echo", { text: "x" })
      assert.strictEqual(codeOf(yield* Effect.flip(user.getPrompt("internal"))), Middleware.Code.Forbidden)
      const root = yield* connect(principal("root", ["admin"]))
      yield* root.callTool("admin", {})
      yield* root.getPrompt("internal")
      // Without authentication the item scopes are not checked here.
      yield* (yield* connect()).callTool("admin", {})
    })
  )

  it.effect("2026-07-28 (stateless): the chain applies; without a principal the requests share one bucket", () =>
    Effect.gen(function* () {
      const connect = yield* serve(
        Middleware.layer(Middleware.hideUnauthorized, Middleware.rateLimit({ capacity: 3, refillEvery: "1 minute" }))
      )
      const first = yield* connect(undefined, "2026-07-28")
      const second = yield* connect(undefined, "2026-07-28")
      yield* first.callTool("echo", { text: "x" })
      yield* second.callTool("echo", { text: "x" })
      yield* first.callTool("echo", { text: "x" })
      const refused = yield* Effect.flip(second.callTool("echo", { text: "x" }))
      assert.strictEqual(codeOf(refused), Middleware.Code.RateLimited)
      // A principal has a bucket of its own, and sees only what its scopes cover.
      const user = yield* connect(principal("user", []), "2026-07-28")
      const tools = (yield* user.listTools()).tools.map((t) => t.name).sort()
      assert.deepStrictEqual(tools, ["echo", "slow"])
    })
  )

  it.effect("rateLimit: dropping refilled buckets of many callers keeps an exhausted one exhausted", () =>
    Effect.gen(function* () {
      const limit = Middleware.rateLimit({ capacity: 1, refillEvery: "1 hour", key: (r) => r.target })
      const as = (target: string) =>
        // `next` needs no request services: run the middleware outside a session.
        Effect.exit(
          limit({ method: "tools/call", target } as Middleware.Request, Effect.succeed("ran"))
        ) as Effect.Effect<Exit.Exit<unknown, unknown>>
      for (let i = 0; i < 1023; i++) yield* as(`caller-${i}`)
      yield* TestClock.adjust("1 hour")
      yield* as("victim")
      // The next new caller finds 1024 buckets: the 1023 refilled ones go, the victim's stays.
      yield* as("newcomer")
      assert.isTrue((yield* as("victim"))._tag === "Failure")
      assert.isTrue((yield* as("caller-7"))._tag === "Success")
      assert.isTrue((yield* as("caller-7"))._tag === "Failure")
    })
  )
})
