/**
 * What a connected client holds. Its notification and progress PubSubs are
 * made when first subscribed to: a bounded PubSub allocates its whole ring
 * when made (two arrays of `Hub.backlog` slots each), which was most of a
 * client's heap and of the time to open one (177 KiB per client and server
 * session before, 36 KiB since). The heap is measured by
 * `apps/bench/src/ClientSessionHeap.ts` in a process of its own (a worker
 * has no `gc`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import * as HeapScript from "../../../apps/bench/src/HeapScript.ts"

const heapScript = fileURLToPath(new URL("../../../apps/bench/src/ClientSessionHeap.ts", import.meta.url))

const measureHeap = HeapScript.run<{ readonly perSession: number }>(heapScript)

describe("McpClient: the heap of a connected client", () => {
  it.live(
    "a client nobody reads notifications from holds no ring for them (under 80 KiB with its server session)",
    () =>
      Effect.gen(function* () {
        const { perSession } = yield* measureHeap
        // Two rings of 4,096 slots for each of the two PubSubs are 128 KiB by themselves.
        assert.isAtMost(perSession, 80 * 1024, `${(perSession / 1024).toFixed(1)} KiB per session`)
      }),
    30_000
  )
})
