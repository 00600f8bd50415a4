/**
 * What a tool costs before anyone uses it (issue 12, found under attack 13:
 * registering 10,000 tools took ~0.54 s, most of it generating JSON Schemas
 * nobody had listed yet). A tool derives nothing from its Schemas when it is
 * made or registered: its JSON Schema waits for the `tools/list` page that
 * shows it, its decoder for its first call. Counted by reads of `input`, not
 * timed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, testServer } from "./fixtures.ts"

describe("tool cost", () => {
  it.effect("making and registering 1,000 tools derives nothing; a list page derives its own tools' schemas only", () =>
    Effect.gen(function* () {
      const reads = new Map<string, number>()
      const tools = Array.from({ length: 1000 }, (_, i) => {
        const name = `tool-${String(i).padStart(4, "0")}`
        const input = Schema.Struct({ text: Schema.String })
        const options = {
          handler: ({ text }: { readonly text: string }) => Effect.succeed(text),
          get input() {
            reads.set(name, (reads.get(name) ?? 0) + 1)
            return input
          }
        }
        return Tool.make(name, options)
      })
      assert.strictEqual(reads.size, 0, "made")
      const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(...tools), { pageSize: 10 }), {
        revision: "2025-11-25"
      })
      assert.strictEqual(reads.size, 0, "registered")
      const page = (yield* request("tools/list")) as Obj
      const listed: Array<string> = page.tools.map((t: Obj) => t.name)
      assert.strictEqual(listed.length, 10)
      assert.deepStrictEqual([...reads.keys()].sort(), listed)
      assert.deepStrictEqual(page.tools[0].inputSchema.properties, { text: { type: "string" } })
      // A call derives that tool's decoder, and nothing of the others.
      const result = (yield* request("tools/call", { name: "tool-0500", arguments: { text: "hi" } })) as Obj
      assert.strictEqual(result.content[0].text, "hi")
      assert.strictEqual(reads.size, 11)
    })
  )
})
