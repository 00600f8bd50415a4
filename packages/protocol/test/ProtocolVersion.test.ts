import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import { Effect, Schema } from "effect"

describe("ProtocolVersion", () => {
  it.effect("decodes known revisions", () =>
    Effect.gen(function* () {
      const v = yield* Schema.decodeUnknownEffect(ProtocolVersion.ProtocolVersion)("2025-11-25")
      assert.strictEqual(v, "2025-11-25")
    })
  )
})
