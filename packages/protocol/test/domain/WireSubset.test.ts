/**
 * Wire ⊆ domain: for every revision and every spec shape with a domain
 * counterpart, arbitrary values valid against the revision's schema.json decode
 * with the domain schema to themselves (nothing rejected, nothing lost).
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { cases } from "./cases.ts"
import { arbitrary, loadSpec, locate } from "./specArbitrary.ts"

const docs = ProtocolVersion.all.map(loadSpec)
const depth = 5

describe("wire values decode into the domain model", () => {
  it.effect("every case exists in at least one revision", () =>
    Effect.sync(() => {
      const missing = cases.filter((x) => docs.every((doc) => locate(doc, x.spec) === undefined))
      assert.deepStrictEqual(
        missing.map((x) => x.spec.join(".")),
        []
      )
    })
  )

  for (const doc of docs) {
    describe(doc.revision, () => {
      for (const x of cases) {
        const at = locate(doc, x.spec)
        if (at === undefined) continue
        it.effect(x.spec.join("."), () =>
          Effect.sync(() => {
            const decode = Schema.decodeUnknownExit(x.domain)
            fc.assert(
              fc.property(arbitrary(doc, at, depth), (value) => {
                const exit = decode(value)
                if (Exit.isFailure(exit)) {
                  throw new Error(`rejected ${JSON.stringify(value)}: ${String(exit.cause)}`)
                }
                assert.deepStrictEqual(exit.value, value)
              }),
              { numRuns: 60 }
            )
          })
        )
      }
    })
  }
})
