/**
 * W7, the in-flight curve: in-process `tools/call` of `echo` with 1, 1,024
 * and 10,000 calls outstanding, effect-mcp against the SDK, in calls/s and
 * CPU per call. Per-request state (pending entries, fibers, closures) is what
 * grows with the number in flight; this is where it shows.
 */
import * as EffectMcp from "../EffectMcp.ts"
import type { Pair } from "../Pair.ts"
import * as Sdk from "../Sdk.ts"
import type { Metric, Series, Table } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"

interface InProcess extends Candidate {
  readonly connect: () => Promise<Pair>
}

const candidates: ReadonlyArray<InProcess> = [
  { id: "effect", label: "effect-mcp", connect: () => EffectMcp.inProcess({ supportedVersions: ["2025-11-25"] }) },
  { id: "sdk", label: "SDK 1.32.2", connect: Sdk.inProcess }
]

export const workload: Workload = {
  id: "W7",
  title: "in-flight curve",
  run: async (settings) => {
    const levels = byMode(settings, { full: [1, 1024, 10_000], quick: [1, 16, 64], smoke: [1, 4, 16] })
    // Two waves at the highest level, so the curve measures a full window, not its filling alone.
    const count = byMode(settings, { full: 20_000, quick: 300, smoke: 50 })
    const text = "hello"
    const series: Array<Series> = await rounds(
      settings,
      candidates,
      async (candidate) => {
        const pair = await candidate.connect()
        try {
          if ((await pair.call(text)) !== text) throw new Error(`${candidate.label}: echo returned something else`)
          const measurement: Record<string, number> = {}
          for (const level of levels) {
            const run = await pair.concurrent(count, level, text)
            measurement[`rate${level}`] = run.callsPerSecond
            measurement[`cpu${level}`] = run.cpuPerCall
          }
          return measurement
        } finally {
          await pair.close()
        }
      },
      async (candidate) => {
        const pair = await candidate.connect()
        for (const level of levels) await pair.concurrent(Math.min(count, 2 * level + 1000), level, text)
        await pair.close()
      }
    )
    const label = (level: number) => level.toLocaleString("en-US")
    const metrics: ReadonlyArray<Metric> = levels.flatMap(
      (level): ReadonlyArray<Metric> => [
        { key: `rate${level}`, label: `calls/s, ${label(level)} in flight`, digits: 0 },
        { key: `cpu${level}`, label: `CPU µs/call, ${label(level)}`, digits: 1 }
      ]
    )
    const table: Table = {
      id: "W7-in-flight",
      title: `W7 in-process: ${count.toLocaleString("en-US")} calls at ${levels.map(label).join(" / ")} in flight`,
      metrics,
      ratios: [
        { label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: metrics.map((m) => m.key) }
      ],
      notes: [
        "effect-mcp speaks 2025-11-25. CPU µs/call: the process's CPU time (client and server together) over calls; for it a ratio below 1 is better."
      ],
      series
    }
    return [table]
  }
}
