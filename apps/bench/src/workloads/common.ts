/**
 * Metric and ratio definitions shared by the workloads.
 */
import type { Pair } from "../Pair.ts"
import type { Measurement, Metric, RatioSpec, Series } from "../Table.ts"

/** calls/s, p50 and p99 (microseconds) under a key prefix. */
export const latencyMetrics = (prefix: string): ReadonlyArray<Metric> => [
  { key: `${prefix}Rate`, label: "calls/s", digits: 0 },
  { key: `${prefix}P50`, label: "p50 µs", digits: 0 },
  { key: `${prefix}P99`, label: "p99 µs", digits: 0 }
]

/** CPU microseconds per call under a key prefix (`<prefix>Cpu`, from `RunResult.cpuPerCall`). */
export const cpuMetric = (prefix: string): Metric => ({ key: `${prefix}Cpu`, label: "CPU µs/call", digits: 1 })

/**
 * The servers' CPU microseconds per call under a key prefix
 * (`<prefix>ServerCpu`): user + system time of the server process(es), the
 * difference over the run divided by its calls.
 */
export const serverCpuMetric = (prefix: string): Metric => ({
  key: `${prefix}ServerCpu`,
  label: "server CPU µs/call",
  digits: 0
})

/** effect-mcp over the SDK and over the floor, and each half alone against the SDK. */
export const standardRatios = (metrics: ReadonlyArray<string>): ReadonlyArray<RatioSpec> => [
  { label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics },
  { label: "effect-mcp / floor", numerator: "effect", denominator: "floor", metrics },
  { label: "effect-mcp server (SDK client) / SDK", numerator: "sdk-client", denominator: "sdk", metrics },
  { label: "effect-mcp client (SDK server) / SDK", numerator: "effect-client", denominator: "sdk", metrics }
]

/** Keeps only the series' measurements of `metrics` (for tables cut from one run). */
export const project = (series: ReadonlyArray<Series>, metrics: ReadonlyArray<Metric>): Array<Series> =>
  series.map((s) => ({
    ...s,
    rounds: s.rounds.map((m) => Object.fromEntries(metrics.map((metric) => [metric.key, m[metric.key] ?? Number.NaN])))
  }))

/**
 * One round of echo calls on a fresh pair (W3, W8): checks the echo, then
 * `count` sequential calls and `count` with `inFlight` at once; the pair is
 * closed after. Rates in calls/s, latencies in microseconds. With
 * `serverCpu` (the servers' CPU time so far, µs), each run also gives the
 * servers' CPU per call.
 */
export const echoRound = async (
  label: string,
  connect: () => Promise<Pair>,
  count: number,
  inFlight: number,
  text: string,
  serverCpu?: () => Promise<number>
): Promise<Measurement> => {
  const pair = await connect()
  try {
    if ((await pair.call(text)) !== text) throw new Error(`${label}: echo returned something else`)
    const cpu = serverCpu ?? (async () => Number.NaN)
    const before = await cpu()
    const sequential = await pair.sequential(count, text)
    const between = await cpu()
    const concurrent = await pair.concurrent(count, inFlight, text)
    const after = await cpu()
    return {
      seqRate: sequential.callsPerSecond,
      seqP50: sequential.p50 * 1000,
      seqP99: sequential.p99 * 1000,
      seqServerCpu: (between - before) / count,
      concRate: concurrent.callsPerSecond,
      concP50: concurrent.p50 * 1000,
      concP99: concurrent.p99 * 1000,
      concServerCpu: (after - between) / count
    }
  } finally {
    await pair.close()
  }
}
