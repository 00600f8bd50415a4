/**
 * The bench's tracing mode (`--tracing`): the traced pair really traces both
 * sides (spans made and "exported" per call), and the overhead per call is
 * the median over rounds of traced minus untraced.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EffectMcp from "../src/EffectMcp.ts"
import * as Traced from "../src/Traced.ts"
import * as W1 from "../src/workloads/W1InProcess.ts"

describe("bench --tracing", () => {
  it.live("the traced pair makes a CLIENT and a SERVER span per call; the untraced one none", () =>
    Effect.promise(async () => {
      const plain = await EffectMcp.inProcess({ supportedVersions: ["2025-11-25"] })
      const before = Traced.exportedSpans()
      await plain.sequential(10, "hi")
      await plain.close()
      assert.strictEqual(Traced.exportedSpans(), before)
      const traced = await W1.tracedCandidate.connect()
      const start = Traced.exportedSpans()
      await traced.sequential(10, "hi")
      await traced.concurrent(10, 4, "hi")
      assert.strictEqual(await traced.call("hi"), "hi")
      await traced.close()
      assert.isAtLeast(Traced.exportedSpans() - start, 2 * 21)
    })
  )

  it("reports the overhead per call as the median of the rounds' differences", () => {
    const round = (seqCpu: number, concCpu: number, seqP50: number, concP50: number) => ({
      seqCpu,
      concCpu,
      seqP50,
      concP50
    })
    const overhead = W1.tracingOverhead([
      { id: "effect", label: "effect-mcp", rounds: [round(10, 5, 20, 40), round(12, 5, 22, 40), round(11, 6, 21, 41)] },
      {
        id: "effect-traced",
        label: "effect-mcp, traced",
        rounds: [round(13, 6, 30, 40), round(14, 7, 23, 45), round(20, 7, 25, 42)]
      }
    ])
    assert.strictEqual(
      overhead,
      "Tracing overhead per call (traced - untraced, median of the rounds): CPU +3.0 µs sequential, +1.0 µs concurrent; p50 latency +4.0 µs sequential, +1.0 µs concurrent."
    )
    assert.isUndefined(W1.tracingOverhead([{ id: "effect", label: "effect-mcp", rounds: [] }]))
  })
})
