/**
 * The tool listing and SEP-2243: on 2026-07-28 a tool whose `x-mcp-header`
 * annotations are invalid is left out (with a warning naming it and the
 * reason) and the valid ones are kept; earlier revisions have no such
 * annotations and list every tool.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import { connect } from "./fixtures.ts"

const schema = (properties: Record<string, unknown>) => ({ type: "object" as const, properties })

const listed = [
  { name: "valid", inputSchema: schema({ region: { type: "string", "x-mcp-header": "Region" } }) },
  { name: "empty-name", inputSchema: schema({ value: { type: "string", "x-mcp-header": "" } }) },
  { name: "number", inputSchema: schema({ score: { type: "number", "x-mcp-header": "Score" } }) },
  {
    name: "duplicate",
    inputSchema: schema({
      a: { type: "string", "x-mcp-header": "MyField" },
      b: { type: "string", "x-mcp-header": "myfield" }
    })
  },
  { name: "in-items", inputSchema: schema({ a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } }) },
  { name: "unannotated", inputSchema: schema({ text: { type: "string" } }) }
]

const server = { handlers: [["tools/list", () => () => Effect.succeed({ tools: listed })]] as const }

const captured = () => {
  const warnings: Array<string> = []
  const layer = Logger.layer([
    Logger.make((options) => {
      if (options.logLevel === "Warn") warnings.push(String(options.message))
    })
  ])
  return { warnings, layer }
}

const names = (tools: ReadonlyArray<{ readonly name: string }>) => tools.map((t) => t.name)

describe("tools/list and x-mcp-header", () => {
  it.effect("2026-07-28: tools with invalid annotations are left out with a warning each, the others kept", () => {
    const { warnings, layer } = captured()
    return Effect.gen(function* () {
      const { client } = yield* connect("2026-07-28", { server })
      assert.deepStrictEqual(names(yield* Stream.runCollect(client.tools)), ["valid", "unannotated"])
      assert.deepStrictEqual(names((yield* client.listTools()).tools), ["valid", "unannotated"])
      assert.strictEqual(warnings.length, 8)
      const [empty, number, duplicate, items] = warnings
      assert.include(empty, "tool empty-name")
      assert.include(empty, '"" is not a header name')
      assert.include(number, "tool number")
      assert.include(number, "only string, integer and boolean")
      assert.include(duplicate, "tool duplicate")
      assert.include(duplicate, "declared twice")
      assert.include(items, "tool in-items")
      assert.include(items, "not reachable through properties alone")
    }).pipe(Effect.provide(layer))
  })

  it.effect("2025-11-25: the annotation means nothing and every tool is listed", () => {
    const { warnings, layer } = captured()
    return Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25", { server })
      assert.deepStrictEqual(names(yield* Stream.runCollect(client.tools)), names(listed))
      assert.deepStrictEqual(warnings, [])
    }).pipe(Effect.provide(layer))
  })

  it.effect("2026-07-28: a listing of valid tools only is kept whole, without warnings", () => {
    const { warnings, layer } = captured()
    return Effect.gen(function* () {
      const valid = [listed[0]!, listed[5]!]
      const { client } = yield* connect("2026-07-28", {
        server: { handlers: [["tools/list", () => () => Effect.succeed({ tools: valid })]] }
      })
      const page = yield* client.listTools()
      assert.deepStrictEqual(page.tools, valid)
      assert.deepStrictEqual(warnings, [])
    }).pipe(Effect.provide(layer))
  })
})
