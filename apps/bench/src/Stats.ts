/**
 * Summaries of timed runs: percentiles of per-call latencies, and medians
 * with min-max over rounds. Ratios are computed round by round (both sides
 * measured in the same round) before they are summarised, so drifting load
 * on a shared machine cancels out.
 */

/** The `q`-quantile (0..1) of `values`, nearest rank; NaN for no values. */
export const quantile = (values: ArrayLike<number>, q: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]!
}

export interface Summary {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly values: ReadonlyArray<number>
}

/** Median and range of the finite values (NaN summary when none is finite). */
export const summarize = (values: ReadonlyArray<number>): Summary => {
  const finite = values.filter((v) => Number.isFinite(v))
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, values }
  const sorted = [...finite].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, values }
}

/** Round-by-round ratios `a[i] / b[i]` (rounds where either side is missing are skipped). */
export const ratios = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    if (Number.isFinite(x) && Number.isFinite(y) && y !== 0) out.push(x / y)
  }
  return out
}

/** The result of one timed run of a latency workload. */
export interface RunResult {
  /** Completed calls per second of wall time. */
  readonly callsPerSecond: number
  /** Median per-call latency, milliseconds. */
  readonly p50: number
  /** 99th percentile per-call latency, milliseconds. */
  readonly p99: number
  /**
   * This process's CPU time (user + system) per call, microseconds. In process
   * that is client and server together; over stdio or HTTP, the client's side.
   */
  readonly cpuPerCall: number
}

/** Starts a CPU clock for {@link runResult}: `process.cpuUsage()` now. */
export const cpuStart = (): NodeJS.CpuUsage => process.cpuUsage()

/**
 * Summarises `count` calls that took `elapsedMs` in all, with their per-call
 * latencies and the CPU used since `cpu` (from {@link cpuStart}).
 */
export const runResult = (
  count: number,
  elapsedMs: number,
  latencies: ArrayLike<number>,
  cpu: NodeJS.CpuUsage
): RunResult => {
  const used = process.cpuUsage(cpu)
  return {
    callsPerSecond: (count * 1000) / elapsedMs,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    cpuPerCall: (used.user + used.system) / count
  }
}
