import { assert, describe, it } from "@effect/vitest"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { attach, connect, drain, type Obj } from "./fixtures.ts"

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
      const a = yield* connect({ features, version: "2025-11-25" })
      const b = yield* attach(a.context, { version: "2025-11-25" })
      yield* drain(a.notifications)
      yield* drain(b.notifications)
      yield* a.request("logging/setLevel", { level: "debug" })
      yield* b.request("tools/call", { name: "chatty", arguments: {} })
      assert.deepStrictEqual(summary(yield* drain(b.notifications)), [
        "log:warning",
        "notifications/tools/list_changed"
      ])
      assert.deepStrictEqual(summary(yield* drain(a.notifications)), [])
      yield* a.request("tools/call", { name: "chatty", arguments: {} })
      assert.deepStrictEqual(summary(yield* drain(a.notifications)), [
        "log:debug",
        "log:warning",
        "notifications/tools/list_changed"
      ])
      assert.deepStrictEqual(summary(yield* drain(b.notifications)), [])
    })
  )
})
