/**
 * The official 2026-07-28 examples: each file under examples/<Definition>/
 * decodes with that definition's wire schema and encodes back to the same JSON.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { specDir, wire } from "./specFiles.ts"

const examplesDir = path.join(specDir, "2026-07-28", "examples")

/**
 * Examples that carry keys their definition does not declare. JSON Schema lets
 * undeclared keys through; the wire schemas (closed structs, as the spec has no
 * `additionalProperties` there) drop them. Listed with the keys dropped.
 */
const deviations: Readonly<Record<string, { readonly dropped: ReadonlyArray<string>; readonly reason: string }>> = {
  "ListRootsRequest/list-roots-request.json": {
    dropped: ["id"],
    reason: "2026-07-28 ListRootsRequest is an InputRequest (no id / jsonrpc); the example still has an id"
  },
  "ReadResourceResultResponse/read-resource-result-response.json": {
    dropped: ["result.contents"],
    reason:
      "the example omits ttlMs / cacheScope, which ReadResourceResult requires, so only the InputRequiredResult " +
      "alternative (resultType: string) matches it, and that one has no contents"
  }
}

const without = (json: unknown, dotted: string): unknown => {
  const [head, ...rest] = dotted.split(".")
  const { [head!]: inner, ...others } = json as Record<string, unknown>
  return rest.length === 0 ? others : { ...others, [head!]: without(inner, rest.join(".")) }
}

const examples = fs
  .readdirSync(examplesDir)
  .sort()
  .flatMap((definition) =>
    fs
      .readdirSync(path.join(examplesDir, definition))
      .filter((file) => file.endsWith(".json"))
      .sort()
      .map((file) => ({
        definition,
        file,
        json: JSON.parse(fs.readFileSync(path.join(examplesDir, definition, file), "utf8"))
      }))
  )

describe("2026-07-28 examples", () => {
  it("there are examples to check", () => {
    console.log(`2026-07-28: ${examples.length} example files`)
    assert.isAbove(examples.length, 100)
  })

  it("every listed deviation names an example", () => {
    const names = new Set(examples.map((e) => `${e.definition}/${e.file}`))
    for (const key of Object.keys(deviations)) assert.isTrue(names.has(key), key)
  })

  for (const { definition, file, json } of examples) {
    it.effect(`${definition}/${file}`, () =>
      Effect.gen(function* () {
        const schema = wire["2026-07-28"][definition]
        assert.isTrue(Schema.isSchema(schema), `no wire schema named ${definition}`)
        const codec = schema as Schema.Codec<unknown, unknown>
        const decoded = yield* Schema.decodeUnknownEffect(codec)(json)
        const encoded = yield* Schema.encodeEffect(codec)(decoded)
        const deviation = deviations[`${definition}/${file}`]
        assert.deepStrictEqual(encoded, deviation?.dropped.reduce(without, json) ?? json)
      })
    )
  }
})
