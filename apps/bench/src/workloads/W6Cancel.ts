/**
 * W6, cancellation: a tool sleeping 10 s, cancelled 10 ms after the call;
 * how long after the `notifications/cancelled` reaches the server the
 * handler stops, and the heap after 1,000 such cancellations. Each
 * measurement runs in a fresh child process (`servers/cancel.ts`), in process
 * (in-memory transports), 2025-11-25 for effect-mcp.
 */
import { fork } from "node:child_process"
import * as EffectMcp from "../EffectMcp.ts"
import { quantile } from "../Stats.ts"
import type { Metric } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"

interface Outcome {
  readonly delays: ReadonlyArray<number>
  readonly stoppedShare: number
  readonly heapGrowth: number
  readonly running: number
}

const candidates: ReadonlyArray<Candidate & { readonly impl: string }> = [
  { id: "effect", label: "effect-mcp", impl: "effect" },
  { id: "sdk", label: "SDK 1.32.2 (handler ignores its AbortSignal)", impl: "sdk" },
  { id: "floor", label: "floor (a timer cleared on cancel)", impl: "floor" }
]

const run = (impl: string, samples: number, cancels: number): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = fork(EffectMcp.serverScript("cancel.ts"), [impl, String(samples), String(cancels)], {
      execArgv: ["--expose-gc"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    let outcome: Outcome | undefined
    child.once("message", (m) => {
      outcome = m as Outcome
    })
    child.once("error", reject)
    child.once("exit", (code) =>
      outcome === undefined ? reject(new Error(`cancel.ts ${impl} exited with ${code}`)) : resolve(outcome)
    )
  })

export const workload: Workload = {
  id: "W6",
  title: "cancellation",
  run: async (settings) => {
    const samples = byMode(settings, { full: 50, quick: 5, smoke: 2 })
    const cancels = byMode(settings, { full: 1_000, quick: 50, smoke: 10 })
    const metrics: ReadonlyArray<Metric> = [
      { key: "p50", label: "handler stopped after arrival, p50 µs", digits: 0 },
      { key: "max", label: "max µs", digits: 0 },
      { key: "stopped", label: "stopped within 100 ms, %", digits: 0 },
      { key: "heap", label: `heap growth over ${cancels.toLocaleString("en-US")} more cancels, KiB`, digits: 0 },
      { key: "running", label: "handlers still running", digits: 0 }
    ]
    const series = await rounds(settings, candidates, async (candidate) => {
      const outcome = await run(candidate.impl, samples, cancels)
      const finite = outcome.delays.filter((d) => Number.isFinite(d))
      return {
        p50: finite.length === 0 ? Number.NaN : quantile(finite, 0.5),
        max: finite.length === 0 ? Number.NaN : Math.max(...finite),
        stopped: outcome.stoppedShare * 100,
        heap: outcome.heapGrowth / 1024,
        running: outcome.running
      }
    })
    return [
      {
        id: "W6-cancellation",
        title: `W6 cancellation: a 10 s tool cancelled after 10 ms (${samples} timed, then ${cancels.toLocaleString("en-US")})`,
        metrics,
        ratios: [],
        notes: [
          "Arrival is stamped by the server's transport as the `notifications/cancelled` frame comes in; the stop by the handler's own finalizer (effect-mcp) or its return (SDK).",
          "The SDK aborts the handler's `extra.signal`, which a handler that does not look at it never sees: it runs its 10 s.",
          `Heap growth is measured over a second batch of ${cancels.toLocaleString("en-US")} cancellations, after a first one (one-time growth: code, caches, table capacities).`
        ],
        series
      }
    ]
  }
}
