/**
 * The official 2026-07-28 examples (realistic values, unlike the arbitrary
 * ones) decode into the domain model unchanged.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as InputRequired from "@effect-mcp/protocol/InputRequired"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { byDefinition, cases } from "./cases.ts"
import { specDir } from "./specArbitrary.ts"

const examplesDir = path.join(specDir, "2026-07-28", "examples")

const caseAt = (spec: ReadonlyArray<string>) => cases.find((x) => x.spec.join("/") === spec.join("/"))?.domain

interface Target {
  readonly schema: Schema.Decoder<unknown>
  readonly select: (example: Record<string, unknown>) => unknown
}

/** Where an example named after a definition goes in the domain model; `undefined` for error envelopes. */
const targetFor = (name: string): Target | undefined => {
  const direct = byDefinition.get(name)
  if (direct !== undefined) return { schema: direct, select: (x) => x }
  if (name.endsWith("ResultResponse")) {
    const schema = byDefinition.get(name.slice(0, -"Response".length))
    return schema && { schema, select: (x) => x.result }
  }
  if (name.endsWith("Params")) {
    const schema = caseAt([name.slice(0, -"Params".length), "params"])
    return schema && { schema, select: (x) => x }
  }
  if (name.endsWith("Request") || name.endsWith("Notification")) {
    const schema = caseAt([name, "params"])
    return schema && { schema, select: (x) => x.params ?? {} }
  }
  return undefined
}

const examples = fs
  .readdirSync(examplesDir)
  .sort()
  .flatMap((name) =>
    fs
      .readdirSync(path.join(examplesDir, name))
      .filter((file) => file.endsWith(".json"))
      .map((file) => ({
        name,
        file,
        json: JSON.parse(fs.readFileSync(path.join(examplesDir, name, file), "utf8")) as Record<string, unknown>
      }))
  )

describe("2026-07-28 examples decode into the domain model", () => {
  it.effect("every example has a domain target, except error envelopes", () =>
    Effect.sync(() => {
      const untargeted = [...new Set(examples.filter((x) => targetFor(x.name) === undefined).map((x) => x.name))]
      assert.isTrue(
        untargeted.every((name) => name.endsWith("Error")),
        untargeted.join(", ")
      )
      assert.isAbove(examples.length - untargeted.length, 80)
    })
  )

  for (const example of examples) {
    const target = targetFor(example.name)
    if (target === undefined) continue
    it.effect(`${example.name}/${example.file}`, () =>
      Effect.gen(function* () {
        const input = target.select(example.json)
        const decoded = yield* Schema.decodeUnknownEffect(target.schema)(input)
        assert.deepStrictEqual(decoded, input)
      })
    )
  }

  it.effect("input requests decode as InputRequest, keeping method and params", () =>
    Effect.gen(function* () {
      const inputRequests = examples.filter((x) =>
        ["CreateMessageRequest", "ElicitRequest", "ListRootsRequest"].includes(x.name)
      )
      assert.isAbove(inputRequests.length, 2)
      for (const { json } of inputRequests) {
        const decoded = yield* Schema.decodeUnknownEffect(InputRequired.InputRequest)(json)
        const { method, params } = json
        assert.deepStrictEqual<unknown>(decoded, params === undefined ? { method } : { method, params })
      }
    })
  )
})
