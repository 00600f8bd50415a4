/**
 * W4, memory: 1,000 idle initialized Streamable HTTP sessions (2025-11-25,
 * JSON responses) opened on a fresh server process by the same bare client,
 * after 500 warm-up sessions; the server's heap and RSS after a full
 * collection, per session.
 */
import { Agent } from "node:http"
import * as Http from "../Http.ts"
import type { Metric } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"

const candidates: ReadonlyArray<Candidate & { readonly impl: Http.Impl }> = [
  { id: "effect", label: "effect-mcp", impl: "effect" },
  { id: "sdk", label: "SDK 1.32.2", impl: "sdk" },
  { id: "floor", label: "floor (an id in a map)", impl: "floor" }
]

const metrics: ReadonlyArray<Metric> = [
  { key: "heap", label: "heap per session, KiB", digits: 2 },
  { key: "rss", label: "RSS per session, KiB", digits: 2 }
]

export const workload: Workload = {
  id: "W4",
  title: "memory of idle sessions",
  run: async (settings) => {
    const sessions = byMode(settings, { full: 1_000, quick: 20, smoke: 5 })
    // The warm-up pays the one-time costs: V8 keeps compiling the session paths for hundreds of sessions
    // (measured on effect-mcp: 50 warm-up sessions left ~600 B of freshly compiled code in each of the
    // next 1,000 sessions' share, 400 left ~0), and that code is no session's memory.
    const warmup = byMode(settings, { full: 500, quick: 5, smoke: 2 })
    const series = await rounds(settings, candidates, async (candidate) => {
      const server = await Http.spawnServer(candidate.impl, "json")
      const agent = new Agent({ keepAlive: true, maxSockets: 16 })
      try {
        const open = async (n: number) => {
          // 16 at a time: fast, and not a burst that leaves transient garbage behind.
          let next = 0
          await Promise.all(
            Array.from({ length: 16 }, async () => {
              while (next < n) {
                next++
                await Http.openIdleSession(server.url, agent)
              }
            })
          )
        }
        // One-time costs (lazy modules, caches, JIT) are paid before the baseline.
        await open(warmup)
        const before = await server.memory()
        await open(sessions)
        const after = await server.memory()
        return {
          heap: (after.heapUsed - before.heapUsed) / sessions / 1024,
          rss: (after.rss - before.rss) / sessions / 1024
        }
      } finally {
        agent.destroy()
        await server.close()
      }
    })
    return [
      {
        id: "W4-memory",
        title: `W4 memory: ${sessions.toLocaleString("en-US")} idle initialized HTTP sessions`,
        metrics,
        ratios: [
          { label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: ["heap", "rss"] },
          { label: "effect-mcp / floor", numerator: "effect", denominator: "floor", metrics: ["heap", "rss"] }
        ],
        notes: [
          "Growth of the server process after a full collection, divided by the sessions; RSS is coarse (pages, allocator)."
        ],
        series
      }
    ]
  }
}
