/**
 * The objects read on every message keep fast properties: every connected
 * McpClient (its methods are read on each call), a toolkit's tools as a
 * host serves them, and every revision's and method's spec (read by the gate
 * on each message). V8 makes an object literal with a getter a dictionary,
 * where each read is a hash lookup, and also each object after the first
 * given a getter function of its own; those getters moved to prototypes or
 * are added after with one shared function (FastGetter). Checked with V8's
 * `%HasFastProperties` in a process of its own
 * (`test/support/FastShapesProbe.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import * as HeapScript from "../../apps/bench/src/HeapScript.ts"

const probe = fileURLToPath(new URL("../support/FastShapesProbe.ts", import.meta.url))

describe("fast shapes on the message path", () => {
  it.live(
    "every client, every toolkit tool and every revision and method spec have fast properties",
    () =>
      Effect.gen(function* () {
        const report = yield* HeapScript.run<Record<string, boolean>>(probe, ["--allow-natives-syntax"])
        const slow = Object.entries(report)
          .filter(([, fast]) => !fast)
          .map(([name]) => name)
        assert.isAbove(Object.keys(report).length, 100)
        assert.includeMembers(Object.keys(report), ["client 3", "toolkit tool echo", "toolkit tool greet"])
        assert.deepStrictEqual(slow, [])
      }),
    30_000
  )
})
