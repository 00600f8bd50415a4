import { assert, describe, it } from "@effect/vitest"
import * as JsonSchema from "../src/internal/jsonSchema.ts"

const valid = (schema: JsonSchema.JsonSchema, value: unknown) => JsonSchema.validate(schema, value).length === 0

describe("JSON Schema validation of tool arguments", () => {
  it("types, required and additionalProperties", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: ["string", "null"] } },
      required: ["a"],
      additionalProperties: false
    }
    assert.isTrue(valid(schema, { a: 1 }))
    assert.isTrue(valid(schema, { a: 1, b: null }))
    assert.isFalse(valid(schema, { a: 1.5 }))
    assert.isFalse(valid(schema, { b: "x" }))
    assert.isFalse(valid(schema, { a: 1, c: 2 }))
    assert.isFalse(valid(schema, []))
    assert.deepStrictEqual(JsonSchema.validate(schema, { a: "1", c: 2 }), [
      { path: "/a", message: "must be integer, got string" },
      { path: "/c", message: "is not an allowed property" }
    ])
  })

  it("numbers, strings, enums and consts", () => {
    assert.isTrue(valid({ type: "number", minimum: 0, exclusiveMaximum: 10, multipleOf: 0.5 }, 9.5))
    assert.isFalse(valid({ type: "number", minimum: 0 }, -1))
    assert.isFalse(valid({ exclusiveMaximum: 10 }, 10))
    assert.isFalse(valid({ multipleOf: 3 }, 10))
    assert.isTrue(valid({ type: "string", minLength: 2, maxLength: 3, pattern: "^a" }, "ab"))
    assert.isFalse(valid({ type: "string", pattern: "^a" }, "ba"))
    assert.isTrue(valid({ maxLength: 1 }, "😀"))
    assert.isTrue(valid({ enum: [1, "x", { a: [1] }] }, { a: [1] }))
    assert.isFalse(valid({ enum: [1, "x"] }, 2))
    assert.isFalse(valid({ const: "x" }, "y"))
  })

  it("arrays: items, prefixItems, contains, uniqueItems", () => {
    assert.isTrue(valid({ type: "array", items: { type: "string" }, minItems: 1 }, ["a"]))
    assert.isFalse(valid({ type: "array", items: { type: "string" } }, ["a", 1]))
    assert.isTrue(valid({ prefixItems: [{ type: "number" }, { type: "string" }], items: false }, [1, "a"]))
    assert.isFalse(valid({ prefixItems: [{ type: "number" }], items: false }, [1, "a"]))
    assert.isFalse(valid({ contains: { const: 3 } }, [1, 2]))
    assert.isFalse(valid({ uniqueItems: true }, [{ a: 1 }, { a: 1 }]))
  })

  it("composition, conditionals and $ref into $defs and definitions", () => {
    const schema = {
      type: "object",
      properties: { shape: { oneOf: [{ $ref: "#/$defs/circle" }, { $ref: "#/definitions/square" }] } },
      $defs: {
        circle: { type: "object", properties: { r: { type: "number" } }, required: ["r"], additionalProperties: false }
      },
      definitions: {
        square: { type: "object", properties: { s: { type: "number" } }, required: ["s"], additionalProperties: false }
      }
    }
    assert.isTrue(valid(schema, { shape: { r: 1 } }))
    assert.isTrue(valid(schema, { shape: { s: 1 } }))
    assert.isFalse(valid(schema, { shape: { r: 1, s: 1 } }))
    assert.isTrue(valid({ anyOf: [{ type: "string" }, { type: "number" }] }, 1))
    assert.isFalse(valid({ allOf: [{ minimum: 1 }, { maximum: 2 }] }, 3))
    assert.isFalse(valid({ not: { type: "string" } }, "x"))
    const conditional = {
      if: { properties: { kind: { const: "a" } } },
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
      then: { required: ["a"] },
      else: { required: ["b"] }
    }
    assert.isTrue(valid(conditional, { kind: "a", a: 1 }))
    assert.isFalse(valid(conditional, { kind: "a", b: 1 }))
    assert.isTrue(valid(conditional, { kind: "z", b: 1 }))
    const recursive = {
      $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } },
      $ref: "#/$defs/node"
    }
    assert.isTrue(valid(recursive, { next: { next: {} } }))
    assert.isFalse(valid(recursive, { next: { next: 1 } }))
  })

  it("patternProperties, propertyNames, dependentRequired, min/maxProperties, boolean schemas", () => {
    assert.isFalse(valid({ patternProperties: { "^x-": { type: "string" } } }, { "x-a": 1 }))
    assert.isFalse(valid({ propertyNames: { pattern: "^[a-z]+$" } }, { A: 1 }))
    assert.isFalse(valid({ dependentRequired: { a: ["b"] } }, { a: 1 }))
    assert.isFalse(valid({ minProperties: 1 }, {}))
    assert.isTrue(valid(true, 1))
    assert.isFalse(valid(false, 1))
  })
})
