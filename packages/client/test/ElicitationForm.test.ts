import { assert, describe, it } from "@effect/vitest"
import * as ElicitationForm from "@effect-mcp/client/ElicitationForm"
import type * as Elicitation from "@effect-mcp/protocol/Elicitation"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

const schema: Elicitation.RequestedSchema = {
  type: "object",
  properties: {
    name: { type: "string", default: "John Doe" },
    age: { type: "integer", default: 30, minimum: 0, maximum: 150 },
    score: { type: "number", default: 95.5 },
    status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
    verified: { type: "boolean", default: true },
    email: { type: "string", format: "email" },
    color: {
      type: "string",
      oneOf: [
        { const: "r", title: "Red" },
        { const: "g", title: "Green" }
      ]
    },
    tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, minItems: 1, maxItems: 2 },
    nick: { type: "string", minLength: 2, maxLength: 4 }
  },
  required: ["name", "email"]
}

describe("ElicitationForm", () => {
  it.effect("applies all 5 kinds of default (string, integer, number, enum, boolean) and keeps given values", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(ElicitationForm.applyDefaults(schema, { email: "a@b.co", age: 41 }), {
        email: "a@b.co",
        age: 41,
        name: "John Doe",
        score: 95.5,
        status: "active",
        verified: true
      })
      assert.deepStrictEqual(ElicitationForm.applyDefaults(schema, undefined), {
        name: "John Doe",
        age: 30,
        score: 95.5,
        status: "active",
        verified: true
      })
    })
  )

  it.effect("accepts a valid answer", () =>
    Effect.sync(() => {
      const result = ElicitationForm.complete(schema, { email: "a@b.co", color: "g", tags: ["a", "c"], nick: "zed" })
      assert.isTrue(Result.isSuccess(result))
    })
  )

  it.effect("reports every invalid field", () =>
    Effect.sync(() => {
      const result = ElicitationForm.validate(schema, {
        age: 30.5,
        score: "high",
        status: "gone",
        verified: "yes",
        email: "not-an-email",
        color: "b",
        tags: ["a", "z"],
        nick: "x",
        extra: 1
      })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.deepStrictEqual(
          result.failure.issues.map((i) => i.field),
          ["name", "age", "score", "status", "verified", "email", "color", "tags", "nick", "extra"]
        )
        assert.include(result.failure.message, "name: is required")
      }
    })
  )

  it.effect("checks bounds: numbers, list sizes, string lengths", () =>
    Effect.sync(() => {
      const bad = ElicitationForm.validate(schema, { name: "n", email: "a@b.co", age: 200, tags: [], nick: "toolong" })
      assert.isTrue(Result.isFailure(bad))
      if (Result.isFailure(bad)) {
        assert.deepStrictEqual(
          bad.failure.issues.map((i) => [i.field, i.message]),
          [
            ["age", "must be <= 150"],
            ["tags", "must select at least 1"],
            ["nick", "must be at most 4 characters"]
          ]
        )
      }
    })
  )
})
