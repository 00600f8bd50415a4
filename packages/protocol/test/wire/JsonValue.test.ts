/**
 * The declared `JSONValue` / `JSONObject` schemas (a guard instead of a
 * `Schema.suspend` cycle) accept exactly what the recursive schema the spec
 * describes accepts, return the input itself, and are what the 2026-07-28
 * capability schemas use.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import * as fc from "fast-check"
import * as JsonValue from "../../src/internal/jsonValue.ts"
import { wire } from "./specFiles.ts"

// The spec's definitions, spelled out the way the generator used to emit them.
type JSONObject = { readonly [x: string]: JSONValue }
type JSONValue = JSONObject | ReadonlyArray<JSONValue> | (string | number | boolean)
const RecursiveObject: Schema.Codec<JSONObject> = Schema.Record(
  Schema.String,
  Schema.suspend((): Schema.Codec<JSONValue> => RecursiveValue)
)
const RecursiveValue: Schema.Codec<JSONValue> = Schema.Union([
  Schema.suspend((): Schema.Codec<JSONObject> => RecursiveObject),
  Schema.Array(Schema.suspend((): Schema.Codec<JSONValue> => RecursiveValue)),
  Schema.Union([Schema.String, Schema.Int, Schema.Boolean])
])

const accepts = (schema: Schema.Codec<unknown>, u: unknown): boolean =>
  Exit.isSuccess(Schema.decodeUnknownExit(schema)(u))

const nested = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value }
  return value
}

// Values close to JSON, including the near misses (null, fractions, undefined members, unsafe integers).
const candidate = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.double(),
    fc.constant(2 ** 53)
  ),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("array"), tie("object")),
  array: fc.array(tie("node"), { maxLength: 4 }),
  object: fc.dictionary(fc.string(), tie("node"), { maxKeys: 4 })
})).node

describe("JSONValue", () => {
  it.effect("accepts JSON values and rejects null, fractions, unsafe integers and non-JSON members", () =>
    Effect.sync(() => {
      for (const ok of [{}, [], "", 0, -7, true, { a: [1, "b", { c: false }] }, [[[]]]]) {
        assert.isTrue(JsonValue.isJSONValue(ok), JSON.stringify(ok))
      }
      for (const bad of [null, 1.5, Number.NaN, Infinity, 2 ** 53, undefined, { a: null }, { a: undefined }, [null]]) {
        assert.isFalse(JsonValue.isJSONValue(bad), String(bad))
      }
      assert.isFalse(JsonValue.isJSONValue(() => 1))
      assert.isFalse(JsonValue.isJSONValue(Symbol.for("x")))
      assert.isTrue(JsonValue.isJSONObject({ a: 1 }))
      assert.isFalse(JsonValue.isJSONObject([]))
      assert.isFalse(JsonValue.isJSONObject("a"))
    })
  )

  it.effect("bounds the nesting, which also ends the walk over a cyclic object", () =>
    Effect.sync(() => {
      assert.isTrue(JsonValue.isJSONValue(nested(1000)))
      assert.isFalse(JsonValue.isJSONValue(nested(1001)))
      const cyclic: Record<string, unknown> = {}
      cyclic["self"] = cyclic
      assert.isFalse(JsonValue.isJSONValue(cyclic))
    })
  )

  it.effect("agrees with the recursive schema on arbitrary values", () =>
    Effect.sync(() => {
      fc.assert(
        fc.property(candidate, (u) => {
          assert.strictEqual(accepts(JsonValue.JSONValue, u), accepts(RecursiveValue, u))
          assert.strictEqual(accepts(JsonValue.JSONObject, u), accepts(RecursiveObject, u))
        }),
        { numRuns: 500, seed: 7 }
      )
    })
  )

  it.effect("decodes and encodes to the input itself", () =>
    Effect.sync(() => {
      const value = { a: [1, { b: "c" }] }
      assert.strictEqual(Schema.decodeUnknownSync(JsonValue.JSONObject)(value), value)
      assert.strictEqual(Schema.encodeUnknownSync(JsonValue.JSONObject)(value), value)
    })
  )

  it.effect("2026-07-28 capabilities use it: a null capability member is rejected, a nested object kept", () =>
    Effect.sync(() => {
      const capabilities = wire["2026-07-28"]["ClientCapabilities"] as Schema.Codec<unknown>
      const ok = { sampling: { tools: { nested: { deep: [1, "x"] } } } }
      assert.deepStrictEqual(Schema.decodeUnknownSync(capabilities)(ok), ok)
      assert.isFalse(accepts(capabilities, { sampling: { tools: { x: null } } }))
    })
  )
})
