/**
 * The MCP `JSONValue` / `JSONObject` definitions (2026-07-28: object, array,
 * string, integer or boolean; no `null`, no fractions) as declared schemas
 * over a hand-written guard. The generated wire modules use these instead of
 * a `Schema.suspend` cycle: effect's JIT compiler does not compile
 * suspensions, so every `_meta` capability object went through the
 * interpreter on each request. Generated values (property tests), JSON codecs
 * and JSON Schema come from the equivalent recursive schema, linked below.
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

export type JSONObject = { readonly [x: string]: JSONValue }
export type JSONValue = JSONObject | ReadonlyArray<JSONValue> | string | number | boolean

/**
 * Values nested in more containers than this fail: a peer has no reason to
 * nest capabilities that deep, the guard's recursion stays far from the stack
 * limit, and the bound also ends the walk over a cyclic (non-JSON) object.
 */
const maxDepth = 1000

const isValue = (u: unknown, depth: number): boolean => {
  switch (typeof u) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isSafeInteger(u)
    case "object":
      if (u === null || depth >= maxDepth) return false
      if (Array.isArray(u)) {
        for (let i = 0; i < u.length; i++) if (!isValue(u[i], depth + 1)) return false
        return true
      }
      return isObjectAt(u, depth)
    default:
      return false
  }
}

const isObjectAt = (u: object, depth: number): boolean => {
  const record = u as Record<string, unknown>
  for (const key of Object.keys(record)) if (!isValue(record[key], depth + 1)) return false
  return true
}

/** Whether `u` is a `JSONValue`. */
export const isJSONValue = (u: unknown): u is JSONValue => isValue(u, 0)

/** Whether `u` is a `JSONObject` (a non-array object whose own values are `JSONValue`s). */
export const isJSONObject = (u: unknown): u is JSONObject =>
  typeof u === "object" && u !== null && !Array.isArray(u) && isObjectAt(u, 0)

// The recursive form, for generation and JSON codecs only.
const RecursiveObject: Schema.Codec<JSONObject> = Schema.Record(
  Schema.String,
  Schema.suspend((): Schema.Codec<JSONValue> => RecursiveValue)
).annotate({ identifier: "JSONObject" })
const RecursiveValue: Schema.Codec<JSONValue> = Schema.Union([
  Schema.suspend((): Schema.Codec<JSONObject> => RecursiveObject),
  Schema.Array(Schema.suspend((): Schema.Codec<JSONValue> => RecursiveValue)),
  Schema.Union([Schema.String, Schema.Int, Schema.Boolean])
]).annotate({ identifier: "JSONValue" })

const same = <T>() => ({ decode: SchemaGetter.passthrough<T>(), encode: SchemaGetter.passthrough<T>() })

/** `JSONValue`: decoding and encoding return the input itself once the guard accepts it. */
export const JSONValue: Schema.declare<JSONValue> = Schema.declare(isJSONValue, {
  expected: "a JSON value",
  toCodecArbitrary: () => Schema.link<JSONValue>()(RecursiveValue, same<JSONValue>()),
  toCodecJson: () => Schema.link<JSONValue>()(RecursiveValue, same<JSONValue>())
})

/** `JSONObject`: as `JSONValue`, for objects. */
export const JSONObject: Schema.declare<JSONObject> = Schema.declare(isJSONObject, {
  expected: "a JSON object",
  toCodecArbitrary: () => Schema.link<JSONObject>()(RecursiveObject, same<JSONObject>()),
  toCodecJson: () => Schema.link<JSONObject>()(RecursiveObject, same<JSONObject>())
})
