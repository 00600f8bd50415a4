import { assert, describe, it } from "@effect/vitest"
import * as FrozenJson from "@effect-mcp/protocol/FrozenJson"
import * as JsonEquality from "@effect-mcp/protocol/JsonEquality"
import * as Effect from "effect/Effect"

describe("FrozenJson", () => {
  it.effect("copy: a deep-frozen copy equal to the value, which is left as it was", () =>
    Effect.sync(() => {
      const value = { tools: { listChanged: true }, list: [1, "a", null, { b: false }], empty: {} }
      const copied = FrozenJson.copy(value)
      assert.isDefined(copied)
      assert.notStrictEqual(copied!.value, value)
      assert.isTrue(JsonEquality.equals(copied!.value, value))
      assert.isTrue(FrozenJson.isFrozen(copied!.value))
      assert.isFalse(Object.isFrozen(value))
      assert.isFalse(Object.isFrozen(value.tools))
    })
  )

  it.effect("copy: undefined for what is not plain JSON, and past the bound", () =>
    Effect.sync(() => {
      assert.isUndefined(FrozenJson.copy({ at: new Date(0) }))
      assert.isUndefined(FrozenJson.copy({ n: Number.NaN }))
      assert.isUndefined(FrozenJson.copy({ f: () => 1 }))
      assert.isUndefined(FrozenJson.copy({ u: undefined }))
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      assert.isUndefined(FrozenJson.copy(cyclic, 1_000))
      // Three values: the object and its two members.
      assert.isDefined(FrozenJson.copy({ a: 1, b: 2 }, 3))
      assert.isUndefined(FrozenJson.copy({ a: 1, b: 2 }, 2))
    })
  )

  it.effect("isFrozen: only plain JSON frozen all the way down, with data properties only", () =>
    Effect.sync(() => {
      assert.isTrue(FrozenJson.isFrozen("text"))
      assert.isTrue(FrozenJson.isFrozen(Object.freeze({ a: Object.freeze([1, Object.freeze({})]) })))
      assert.isFalse(FrozenJson.isFrozen({ a: 1 }))
      // Frozen on top only: what it holds may still change.
      assert.isFalse(FrozenJson.isFrozen(Object.freeze({ a: { b: 1 } })))
      // A getter may answer differently on each read, frozen or not.
      let n = 0
      const withGetter = Object.freeze(
        Object.defineProperty({}, "n", {
          get: () => n++,
          enumerable: true
        })
      )
      assert.isFalse(FrozenJson.isFrozen(withGetter))
      assert.isFalse(FrozenJson.isFrozen(Object.freeze(new Date(0))))
      assert.isFalse(FrozenJson.isFrozen(Object.freeze({ a: 1, b: 2 }), 2))
    })
  )
})
