import { assert, describe, it } from "@effect/vitest"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { connect, structuredTool } from "./fixtures.ts"

const advertising = () => () =>
  Effect.succeed({
    tools: [
      structuredTool,
      { ...structuredTool, name: "bad-structured" },
      { name: "tool-0", inputSchema: { type: "object" } }
    ]
  })

const Sum = Schema.Struct({ sum: Schema.Number, label: Schema.String })

describe("tool output", () => {
  for (const version of ["2025-06-18", "2026-07-28"] as const) {
    it.effect(`${version}: structured content is checked against the advertised outputSchema once known`, () =>
      Effect.gen(function* () {
        const { client, server } = yield* connect(version, { server: { handlers: [["tools/list", advertising]] } })
        // Not listed yet: nothing is known about the tool, the result passes as it is.
        const before = yield* client.callTool("bad-structured")
        assert.deepStrictEqual(before.structuredContent, { sum: "not a number" })
        yield* Stream.runDrain(client.tools)
        const error = yield* Effect.flip(client.callTool("bad-structured"))
        assert.strictEqual(error._tag, "InvalidResult")
        if (error._tag === "InvalidResult") assert.strictEqual(error.reason, "OutputSchema")
        const good = yield* client.callTool("structured", { a: 1, b: 1 })
        assert.deepStrictEqual(good.structuredContent, { sum: 2, label: "sum" })
        // A changed tool list makes what was learnt stale.
        // At rest once the stream listens (stateful: on the client's hub).
        const changed = yield* McpTest.forkIdle(client.toolListChanged.pipe(Stream.take(1), Stream.runDrain))
        // Stateless: once the server has the listen stream.
        if (version === "2026-07-28") yield* server.awaitLog((log) => log.listens.length > 0)
        yield* server.emit("notifications/tools/list_changed")
        yield* Fiber.join(changed)
        // The client's own reset runs in its own fiber, woken by the same notification before
        // this request is even sent: it runs before the answer can arrive (a listing that
        // leaves tool schemas alone, so it cannot teach the client the schema again).
        yield* client.listPrompts()
        const after = yield* client.callTool("bad-structured")
        assert.deepStrictEqual(after.structuredContent, { sum: "not a number" })
      })
    )
  }

  it.effect("the caller's schema decodes structured content; a mismatch is a typed error", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25")
      const typed = yield* client.callTool("structured", { a: 40, b: 2 }, { outputSchema: Sum })
      assert.strictEqual(typed.structuredContent.sum, 42)
      const wrong = yield* Effect.flip(
        client.callTool("structured", {}, { outputSchema: Schema.Struct({ sum: Schema.String }) })
      )
      assert.strictEqual(wrong._tag, "InvalidResult")
      if (wrong._tag === "InvalidResult") assert.strictEqual(wrong.reason, "OutputSchema")
    })
  )

  it.effect("a tool without structured content fails a typed call; one that failed is a ToolError", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25")
      const missing = yield* Effect.flip(client.callTool("tool-0", {}, { outputSchema: Sum }))
      assert.strictEqual(missing._tag, "InvalidResult")
      if (missing._tag === "InvalidResult") assert.strictEqual(missing.reason, "MissingStructuredContent")
      const failed = yield* Effect.flip(client.callTool("failing", {}, { outputSchema: Sum }))
      assert.strictEqual(failed._tag, "ToolError")
      assert.strictEqual(failed.message, "it broke")
      // Untyped, a tool-level failure is an ordinary result the model can read.
      const untyped = yield* client.callTool("failing")
      assert.strictEqual(untyped.isError, true)
    })
  )

  it.effect("a typed call with progress decodes the final result", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25")
      const events = yield* Stream.runCollect(
        client.callToolWithProgress("structured", { a: 1, b: 2 }, { outputSchema: Sum })
      )
      const last = events.at(-1)
      assert.isTrue(last?._tag === "Result" && last.value.structuredContent.sum === 3)
    })
  )
})
