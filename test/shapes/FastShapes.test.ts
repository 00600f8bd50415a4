/**
 * The objects read on every message keep fast properties: the connected
 * McpClient (its methods are read on each call) and every revision's and
 * method's spec (read by the gate on each message). V8 makes an object
 * literal with a getter a dictionary, where each read is a hash lookup;
 * those getters moved to prototypes or were added after (W1 sequential
 * +11% in steady state). Checked with V8's `%HasFastProperties` in a
 * process of its own (`test/support/FastShapesProbe.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import * as HeapScript from "../../apps/bench/src/HeapScript.ts"

const probe = fileURLToPath(new URL("../support/FastShapesProbe.ts", import.meta.url))

describe("fast shapes on the message path", () => {
  it.live(
    "the client and every revision and method spec have fast properties",
    () =>
      Effect.gen(function* () {
        const report = yield* HeapScript.run<Record<string, boolean>>(probe, ["--allow-natives-syntax"])
        const slow = Object.entries(report)
          .filter(([, fast]) => !fast)
          .map(([name]) => name)
        assert.isAbove(Object.keys(report).length, 100)
        assert.deepStrictEqual(slow, [])
      }),
    30_000
  )
})
