import { assert, describe, it } from "@effect/vitest"
import * as Features from "@effect-mcp/protocol/Features"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const chatty = Tool.make("chatty", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.log("debug", "explicit debug")
      yield* ServerRequest.log("error", { detail: "explicit error" }, "db")
      yield* Effect.logInfo("effect info")
      yield* Effect.logWarning("effect warning", 42)
      return "done"
    })
})

const features = Tool.layer(chatty)
const messages = (got: ReadonlyArray<{ method: string; params: unknown }>) =>
  got.filter((n) => n.method === "notifications/message").map((n) => n.params as Obj)

describe("logging", () => {
  for (const version of revisions.filter((v) => Features.has(v, "setLevel"))) {
    it.effect(
      `${version}: logging/setLevel filters per session; Effect logs are bridged; logs precede the response`,
      () =>
        Effect.gen(function* () {
          const { request, drain } = yield* McpTest.connectRaw(testServer(features), { revision: version })
          yield* drain
          // No level set: the server default (info).
          yield* request("tools/call", { name: "chatty", arguments: {} })
          assert.deepStrictEqual(
            messages(yield* drain).map((m) => [m.level, m.data]),
            [
              ["error", { detail: "explicit error" }],
              ["info", "effect info"],
              ["warning", ["effect warning", 42]]
            ]
          )
          yield* request("logging/setLevel", { level: "debug" })
          yield* request("tools/call", { name: "chatty", arguments: {} })
          const all = messages(yield* drain)
          assert.deepStrictEqual(
            all.map((m) => m.level),
            ["debug", "error", "info", "warning"]
          )
          assert.strictEqual(all[1]!.logger, "db")
          yield* request("logging/setLevel", { level: "warning" })
          yield* request("tools/call", { name: "chatty", arguments: {} })
          assert.deepStrictEqual(
            messages(yield* drain).map((m) => m.level),
            ["error", "warning"]
          )
        })
    )
  }

  it.effect("2026-07-28: the level comes from each request's _meta; none means no logs", () =>
    Effect.gen(function* () {
      const { session: client, drain } = yield* McpTest.connectRaw(testServer(features), { revision: "2026-07-28" })
      yield* client.request("tools/call", { name: "chatty", arguments: {} })
      assert.deepStrictEqual(messages(yield* drain), [])
      yield* client.request("tools/call", {
        name: "chatty",
        arguments: {},
        _meta: { "io.modelcontextprotocol/logLevel": "warning" }
      })
      assert.deepStrictEqual(
        messages(yield* drain).map((m) => m.level),
        ["error", "warning"]
      )
    })
  )

  it.effect("server-wide logs reach stateful sessions by their level", () =>
    Effect.gen(function* () {
      const { server, request, drain } = yield* McpTest.connectRaw(testServer(features), { revision: "2025-06-18" })
      yield* request("logging/setLevel", { level: "error" })
      yield* drain
      yield* server.log("info", "ignored")
      yield* server.log("critical", "kept", "core")
      assert.deepStrictEqual(messages(yield* drain), [{ level: "critical", logger: "core", data: "kept" }])
    })
  )
})
