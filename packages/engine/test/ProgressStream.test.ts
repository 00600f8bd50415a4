/**
 * A request's progress as a Stream holds a bounded number of events for a
 * reader that falls behind: the newest, the oldest updates dropped first,
 * and never the result.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProgressStream from "@effect-mcp/engine/ProgressStream"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

describe("ProgressStream", () => {
  it.effect("a reader that falls behind gets the newest updates, then the result", () =>
    Effect.gen(function* () {
      // Ten thousand updates and the result, all reported before the reader reads one.
      const events = yield* ProgressStream.make((onProgress) =>
        Effect.sync(() => {
          for (let i = 1; i <= 10_000; i++) onProgress({ progress: i, total: 10_000 })
          return "done"
        })
      ).pipe(Stream.runCollect)
      // Before, all 10,001 were held until read.
      assert.strictEqual(events.length, ProgressStream.maxBuffered)
      assert.deepStrictEqual(events.at(-1), { _tag: "Result", value: "done" })
      const progress = events.flatMap((e) => (e._tag === "Progress" ? [e.update.progress] : []))
      assert.strictEqual(progress[0], 10_000 - ProgressStream.maxBuffered + 2)
      assert.strictEqual(progress.at(-1), 10_000)
    })
  )

  it.effect("fewer updates than the bound all arrive, in order, then the result", () =>
    Effect.gen(function* () {
      const events = yield* ProgressStream.make((onProgress) =>
        Effect.sync(() => {
          for (let i = 1; i <= 3; i++) onProgress({ progress: i })
          return "done"
        })
      ).pipe(Stream.runCollect)
      assert.deepStrictEqual(
        events.map((e) => (e._tag === "Progress" ? e.update.progress : e.value)),
        [1, 2, 3, "done"]
      )
    })
  )
})
