import { assert, describe, it } from "@effect/vitest"
import * as Features from "@effect-mcp/protocol/Features"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import { loadSpec, locate } from "./specArbitrary.ts"

const docs = ProtocolVersion.all.map(loadSpec)

describe("Features", () => {
  for (const name of Features.names) {
    it.effect(`${name} exists exactly where the schemas show its evidence`, () =>
      Effect.sync(() => {
        const feature: Features.Feature = Features.features[name]
        const inSchema = docs.filter((doc) => locate(doc, feature.evidence) !== undefined).map((doc) => doc.revision)
        assert.deepStrictEqual(Features.revisionsWith(name), inSchema)
        // The boundary the brief asks for, stated directly: present at `since`, absent just before.
        assert.include(inSchema, feature.since)
        const before = ProtocolVersion.all[ProtocolVersion.all.indexOf(feature.since) - 1]
        if (before !== undefined) assert.notInclude(inSchema, before)
        for (const doc of docs) {
          assert.strictEqual(Features.has(doc.revision, name), inSchema.includes(doc.revision), doc.revision)
        }
      })
    )
  }

  it.effect("per-revision sets agree with has", () =>
    Effect.sync(() => {
      for (const revision of ProtocolVersion.all) {
        const set = Features.of(revision)
        for (const name of Features.names) assert.strictEqual(set.has(name), Features.has(revision, name))
      }
      assert.isTrue(Features.has("2025-03-26", "batches"))
      assert.isFalse(Features.has("2025-06-18", "batches"))
      assert.isTrue(Features.has("2026-07-28", "stateless"))
      assert.isFalse(Features.has("2026-07-28", "initialize"))
      assert.deepStrictEqual(Features.revisionsWith("tasks"), ["2025-11-25"])
    })
  )
})
