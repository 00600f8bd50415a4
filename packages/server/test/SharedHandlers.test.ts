import { assert, describe, it } from "@effect/vitest"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, testServer } from "./fixtures.ts"

// One table of handlers serves every session of a server: what a request
// reads of its session (log level, the session it notifies) must still be its own.
const chatty = Tool.make("chatty", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.log("debug", "debug line")
      yield* Effect.logWarning("warning line")
      const request = yield* ServerRequest.ServerRequest
      yield* request.notify("notifications/tools/list_changed", {})
      return "done"
    })
})

const features = Tool.layer(chatty)
// Logs and direct notifications travel apart: compared as sets.
const summary = (got: ReadonlyArray<{ method: string; params: unknown }>) =>
  got.map((n) => (n.method === "notifications/message" ? `log:${(n.params as Obj).level}` : n.method)).sort()

describe("handlers shared by the sessions of a server", () => {
  it.effect("each request sees its own session's log level and notifies its own session", () =>
    Effect.gen(function* () {
      const a = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const b = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(a.context))
      yield* a.drain
      yield* b.drain
      yield* a.request("logging/setLevel", { level: "debug" })
      yield* b.request("tools/call", { name: "chatty", arguments: {} })
      assert.deepStrictEqual(summary(yield* b.drain), ["log:warning", "notifications/tools/list_changed"])
      assert.deepStrictEqual(summary(yield* a.drain), [])
      yield* a.request("tools/call", { name: "chatty", arguments: {} })
      assert.deepStrictEqual(summary(yield* a.drain), ["log:debug", "log:warning", "notifications/tools/list_changed"])
      assert.deepStrictEqual(summary(yield* b.drain), [])
    })
  )
})
