import { assert, describe, it } from "@effect/vitest"
import * as JsonEquality from "@effect-mcp/protocol/JsonEquality"
import * as Effect from "effect/Effect"

describe("JsonEquality", () => {
  it.effect("equal JSON values, key order aside; any other difference is not", () =>
    Effect.sync(() => {
      const value = { a: [1, "x", null, { b: true }], c: { d: {} } }
      assert.isTrue(JsonEquality.equals(value, JSON.parse(JSON.stringify(value))))
      assert.isTrue(JsonEquality.equals({ a: 1, b: 2 }, { b: 2, a: 1 }))
      assert.isFalse(JsonEquality.equals({ a: 1 }, { a: 1, b: 2 }))
      assert.isFalse(JsonEquality.equals({ a: 1, b: 2 }, { a: 1 }))
      assert.isFalse(JsonEquality.equals({ a: 1 }, { b: 1 }))
      assert.isFalse(JsonEquality.equals([1, 2], [2, 1]))
      assert.isFalse(JsonEquality.equals([1], { 0: 1 }))
      assert.isFalse(JsonEquality.equals({ a: "1" }, { a: 1 }))
      assert.isFalse(JsonEquality.equals(null, {}))
    })
  )

  it.effect("what is not plain data equals only itself", () =>
    Effect.sync(() => {
      const date = new Date(0)
      assert.isTrue(JsonEquality.equals(date, date))
      assert.isFalse(JsonEquality.equals(new Date(0), new Date(0)))
      assert.isFalse(JsonEquality.equals({ at: new Date(0) }, { at: new Date(0) }))
    })
  )

  it.effect("with a bound, values past it make the answer false", () =>
    Effect.sync(() => {
      const wide = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]))
      assert.isTrue(JsonEquality.equals(wide, { ...wide }, 11))
      assert.isFalse(JsonEquality.equals(wide, { ...wide }, 10))
    })
  )
})
