/**
 * W1, in process: 20,000 sequential `tools/call` of `echo`, then 20,000 with
 * 64 in flight, over each implementation's in-memory transport pair.
 */
import * as EffectMcp from "../EffectMcp.ts"
import * as Floor from "../Floor.ts"
import * as Mixed from "../Mixed.ts"
import type { Pair } from "../Pair.ts"
import * as Sdk from "../Sdk.ts"
import * as Traced from "../Traced.ts"
import type { Metric, Series, Table } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"
import { cpuMetric, latencyMetrics, project, standardRatios } from "./common.ts"

interface InProcess extends Candidate {
  readonly connect: () => Promise<Pair>
}

export const candidates: ReadonlyArray<InProcess> = [
  {
    id: "effect",
    label: "effect-mcp",
    connect: () => EffectMcp.inProcess({ supportedVersions: ["2025-11-25"] })
  },
  { id: "sdk", label: "SDK 1.32.2", connect: Sdk.inProcess },
  { id: "floor", label: "floor", connect: Floor.inProcess },
  { id: "sdk-client", label: "SDK client -> effect-mcp server", connect: Mixed.sdkClientEffectServer },
  { id: "effect-client", label: "effect-mcp client -> SDK server", connect: Mixed.effectClientSdkServer },
  { id: "effect-stateless", label: "effect-mcp, negotiated (2026-07-28)", connect: () => EffectMcp.inProcess() }
]

/** With `--tracing`: effect-mcp with a tracer on both sides (spans made, ended and counted; see Traced.ts). */
export const tracedCandidate: InProcess = {
  id: "effect-traced",
  label: "effect-mcp, traced",
  connect: () => EffectMcp.inProcess({ supportedVersions: ["2025-11-25"], tracer: Traced.tracer })
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * The cost of tracing per call: the median over rounds of (traced - untraced)
 * for each measurement, both measured in the same round.
 */
export const tracingOverhead = (series: ReadonlyArray<Series>): string | undefined => {
  const plain = series.find((s) => s.id === "effect")
  const traced = series.find((s) => s.id === tracedCandidate.id)
  if (plain === undefined || traced === undefined) return undefined
  const delta = (key: string) =>
    median(traced.rounds.map((m, round) => (m[key] ?? Number.NaN) - (plain.rounds[round]?.[key] ?? Number.NaN)))
  const us = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} µs`
  return (
    `Tracing overhead per call (traced - untraced, median of the rounds): CPU ${us(delta("seqCpu"))} sequential, ` +
    `${us(delta("concCpu"))} concurrent; p50 latency ${us(delta("seqP50"))} sequential, ${us(delta("concP50"))} concurrent.`
  )
}

export const workload: Workload = {
  id: "W1",
  title: "in-process",
  run: async (settings) => {
    const count = byMode(settings, { full: 20_000, quick: 300, smoke: 50 })
    const inFlight = 64
    const text = "hello"
    const series: Array<Series> = await rounds(
      settings,
      settings.tracing === true ? [...candidates, tracedCandidate] : candidates,
      async (candidate) => {
        const pair = await candidate.connect()
        try {
          if ((await pair.call(text)) !== text) throw new Error(`${candidate.label}: echo returned something else`)
          const sequential = await pair.sequential(count, text)
          const concurrent = await pair.concurrent(count, inFlight, text)
          return {
            seqRate: sequential.callsPerSecond,
            seqP50: sequential.p50 * 1000,
            seqP99: sequential.p99 * 1000,
            concRate: concurrent.callsPerSecond,
            concP50: concurrent.p50 * 1000,
            concP99: concurrent.p99 * 1000,
            seqCpu: sequential.cpuPerCall,
            concCpu: concurrent.cpuPerCall
          }
        } finally {
          await pair.close()
        }
      },
      async (candidate) => {
        const pair = await candidate.connect()
        await pair.sequential(Math.min(count, 2000), text)
        await pair.concurrent(Math.min(count, 2000), inFlight, text)
        await pair.close()
      }
    )
    const seq: ReadonlyArray<Metric> = [...latencyMetrics("seq"), cpuMetric("seq")]
    const conc: ReadonlyArray<Metric> = [...latencyMetrics("conc"), cpuMetric("conc")]
    const notes = [
      "effect-mcp rows speak 2025-11-25, the SDK's newest revision, unless marked; latencies in microseconds.",
      "CPU µs/call: the process's CPU time (client and server together) over calls; for it a ratio below 1 is better.",
      "Mixed rows run over one effect-mcp MemoryTransport pair, the SDK side through its Transport interface."
    ]
    const overhead = tracingOverhead(series)
    if (overhead !== undefined) {
      if (Traced.exportedSpans() === 0) throw new Error("--tracing: the traced rows made no spans")
      notes.push(
        "The traced row installs a tracer on both sides whose exporter only counts the spans (no wire format, no network).",
        overhead
      )
      settings.log(overhead)
    }
    const tracedRatio = { label: "effect-mcp traced / untraced", numerator: tracedCandidate.id, denominator: "effect" }
    const tables: Array<Table> = [
      {
        id: "W1-sequential",
        title: `W1 in-process: ${count.toLocaleString("en-US")} sequential calls`,
        metrics: seq,
        ratios: [...standardRatios(["seqRate", "seqCpu"]), { ...tracedRatio, metrics: ["seqRate", "seqCpu"] }],
        notes,
        series: project(series, seq)
      },
      {
        id: "W1-concurrent",
        title: `W1 in-process: ${count.toLocaleString("en-US")} calls, ${inFlight} in flight`,
        metrics: conc,
        ratios: [...standardRatios(["concRate", "concCpu"]), { ...tracedRatio, metrics: ["concRate", "concCpu"] }],
        notes,
        series: project(series, conc)
      }
    ]
    return tables
  }
}
