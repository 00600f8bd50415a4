import { assert, describe, it } from "@effect/vitest"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { advanceUntilDone, linked } from "./fixtures.ts"

const reporting =
  (values: ReadonlyArray<number>): Session.Handler =>
  () =>
    Effect.gen(function* () {
      const current = yield* CurrentRequest.CurrentRequest
      for (const progress of values) {
        yield* Effect.sleep("100 millis")
        yield* current.progress({ progress, total: 10, message: `step ${progress}` })
      }
      return { content: [{ type: "text", text: "done" }] }
    })

const versions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ["2025-11-25", "2026-07-28"]

describe("progress", () => {
  for (const version of versions) {
    it.effect(`${version}: arrives as a Stream in order, ends with the result, non-increasing values dropped`, () =>
      Effect.gen(function* () {
        const { client } = yield* linked({
          clientVersions: [version],
          server: { capabilities: { tools: {} }, handlers: new Map([["tools/call", reporting([1, 2, 2, 1.5, 3, 7])]]) }
        })
        const fiber = yield* client
          .requestWithProgress("tools/call", { name: "x" })
          .pipe(Stream.runCollect, Effect.forkChild)
        const events = yield* advanceUntilDone(fiber, "50 millis")
        assert.deepStrictEqual(
          events.map((e) => (e._tag === "Progress" ? e.update.progress : "result")),
          [1, 2, 3, 7, "result"]
        )
        assert.deepStrictEqual(events[0], { _tag: "Progress", update: { progress: 1, total: 10, message: "step 1" } })
        const last = events[events.length - 1]
        assert.strictEqual(last?._tag, "Result")
        if (last?._tag === "Result") {
          assert.deepStrictEqual((last.value as { content: unknown }).content, [{ type: "text", text: "done" }])
        }
      })
    )
  }

  it.effect("2024-11-05: progress notifications carry no message, a field the revision does not have", () =>
    Effect.gen(function* () {
      const { client } = yield* linked({
        clientVersions: ["2024-11-05"],
        server: { capabilities: { tools: {} }, handlers: new Map([["tools/call", reporting([1, 2])]]) }
      })
      const fiber = yield* client
        .requestWithProgress("tools/call", { name: "x" })
        .pipe(Stream.runCollect, Effect.forkChild)
      const events = yield* advanceUntilDone(fiber, "50 millis")
      const updates = events.flatMap((e) => (e._tag === "Progress" ? [e.update] : []))
      assert.deepStrictEqual(
        updates.map((u) => [u.progress, u.total, u.message]),
        [
          [1, 10, undefined],
          [2, 10, undefined]
        ]
      )
    })
  )

  it.effect("a caller that asked no progress gets only the result", () =>
    Effect.gen(function* () {
      const { client } = yield* linked({
        clientVersions: ["2025-11-25"],
        server: { capabilities: { tools: {} }, handlers: new Map([["tools/call", reporting([1, 2])]]) }
      })
      const fiber = yield* client.request("tools/call", { name: "x" }).pipe(Effect.forkChild)
      const result = yield* advanceUntilDone(fiber, "50 millis")
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "done" }] })
    })
  )
})
