/**
 * The generator behind the wire-subset tests produces values the normative
 * schemas accept (checked with an independent validator, ajv), so a passing
 * subset test is not an artefact of a generator that drifted from the spec.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import AjvDraft07 from "ajv"
import Ajv2020 from "ajv/dist/2020.js"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { cases } from "./cases.ts"
import { arbitrary, loadSpec, locate } from "./specArbitrary.ts"

const validatorFor = (revision: ProtocolVersion.ProtocolVersion) => {
  const doc = loadSpec(revision)
  const options = { strict: false, validateFormats: false, allErrors: false }
  const ajv = doc.defsKey === "$defs" ? new Ajv2020.default(options) : new AjvDraft07.default(options)
  ajv.addSchema(doc.raw as object, "spec")
  return { doc, ajv }
}

describe("spec arbitrary", () => {
  for (const revision of ProtocolVersion.all) {
    it.effect(`${revision}: generated values are valid against schema.json`, () =>
      Effect.sync(() => {
        const { ajv, doc } = validatorFor(revision)
        let checked = 0
        for (const x of cases) {
          const at = locate(doc, x.spec)
          if (at === undefined) continue
          const validate = ajv.compile({ $ref: `spec${at.pointer}` })
          for (const value of fc.sample(arbitrary(doc, at, 5), { numRuns: 25 })) {
            if (!validate(value)) {
              assert.fail(`${x.spec.join(".")}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`)
            }
            checked++
          }
        }
        assert.isAbove(checked, 25 * 40)
      })
    )
  }

  it.effect("extra keys appear only where the spec allows them", () =>
    Effect.sync(() => {
      const doc = loadSpec("2025-11-25")
      const closed = locate(doc, ["TextContent"])
      const open = locate(doc, ["TextContent", "_meta"])
      assert.isDefined(closed)
      assert.isDefined(open)
      if (closed === undefined || open === undefined) return
      const extraKeys = (values: ReadonlyArray<unknown>) =>
        values.flatMap((v) => Object.keys(v as object)).filter((k) => k.startsWith("x_"))
      assert.deepStrictEqual(extraKeys(fc.sample(arbitrary(doc, closed, 5), { numRuns: 200 })), [])
      assert.isAbove(extraKeys(fc.sample(arbitrary(doc, open, 5), { numRuns: 200 })).length, 0)
    })
  )
})
