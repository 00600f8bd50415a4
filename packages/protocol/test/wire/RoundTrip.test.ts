/**
 * Property: for every params and result schema of every revision, a value
 * generated from the schema (effect's Schema-derived Arbitrary) survives
 * encode-then-decode unchanged. Catches lossy unions (a member that swallows a
 * richer one) and checks that would reject their own values.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type { AnyCodec } from "@effect-mcp/protocol/Revision"
import { Effect, Schema } from "effect"
import * as Arbitrary from "effect/Arbitrary"

const runs = 20

/** Each distinct schema once (revisions share unchanged schemas), labelled where it is first met. */
const targets = new Map<AnyCodec, string>()
for (const version of ProtocolVersion.all) {
  const revision = Registry.get(version)
  for (const spec of [...revision.methods.values(), ...revision.inputRequests.values()]) {
    if (!targets.has(spec.params)) targets.set(spec.params, `${version} ${spec.method} params`)
    if (spec._tag === "Request" && !targets.has(spec.result))
      targets.set(spec.result, `${version} ${spec.method} result`)
  }
}

/**
 * Structural equality of plain data. Not `isDeepStrictEqual`: generated objects
 * may have a null prototype, decoded ones have Object.prototype.
 */
const same = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  const rb = b as Record<string, unknown>
  const ra = a as Record<string, unknown>
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && same(ra[k], rb[k]))
}

const roundTrips = (schema: AnyCodec) => {
  const encode = Schema.encodeUnknownEffect(schema)
  const decode = Schema.decodeUnknownEffect(schema)
  return (value: unknown) =>
    encode(value).pipe(
      Effect.flatMap(decode),
      Effect.map((back) => same(back, value))
    )
}

describe("encode then decode is the identity", () => {
  it("covers every method schema", () => {
    console.log(`round-trip: ${targets.size} distinct params/result schemas, ${runs} runs each`)
    assert.isAbove(targets.size, 100)
  })

  for (const [schema, label] of targets) {
    it.effect(label, () =>
      Effect.gen(function* () {
        const result = yield* Arbitrary.checkEffect(Arbitrary.schema(schema), roundTrips(schema), {
          runs,
          seed: label
        })
        assert.strictEqual(result._tag, "Passed", Arbitrary.formatCheckFailure(result))
      })
    )
  }

  it.effect("would catch a lossy schema", () =>
    Effect.gen(function* () {
      // Decoding drops `b` whenever the first member matches: not an identity.
      const lossy = Schema.Union([
        Schema.Struct({ a: Schema.String }),
        Schema.Struct({ a: Schema.String, b: Schema.String })
      ])
      const result = yield* Arbitrary.checkEffect(Arbitrary.schema(lossy), roundTrips(lossy), { runs: 50, seed: 1 })
      assert.strictEqual(result._tag, "Falsified")
    })
  )
})
