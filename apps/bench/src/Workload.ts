/**
 * What a workload is given and how it runs its candidates: in rounds, every
 * candidate once per round, the order rotated from round to round, with a
 * garbage collection before each measurement (when `--expose-gc` is on).
 */
import type { Measurement, Series, Table } from "./Table.ts"

export interface Settings {
  /** A few hundred iterations and few rounds: checks the harness, measures nothing. */
  readonly quick: boolean
  /**
   * `--smoke` (which sets `quick` too): tens of iterations, and the costly
   * setup a harness check does not need (the packed install of W2) left out,
   * so that `npm test` can run the harness end to end in seconds.
   */
  readonly smoke?: boolean | undefined
  readonly rounds: number
  readonly log: (line: string) => void
  /** `--tracing`: workloads add effect-mcp rows with a tracer installed, next to the untraced ones. */
  readonly tracing?: boolean | undefined
}

export interface Workload {
  readonly id: string
  readonly title: string
  readonly run: (settings: Settings) => Promise<ReadonlyArray<Table>>
}

export interface Candidate {
  readonly id: string
  readonly label: string
}

/** The value for the run's mode: `smoke` under `--smoke`, `quick` under `--quick`, `full` otherwise. */
export const byMode = <A>(settings: Settings, values: { readonly full: A; readonly quick: A; readonly smoke: A }): A =>
  settings.smoke === true ? values.smoke : settings.quick ? values.quick : values.full

/** Collects garbage when the process allows it, so one measurement does not pay for the last one's garbage. */
export const collectGarbage = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) {
    gc()
    gc()
  }
}

/**
 * Measures every candidate in every round (rotating the order) and returns
 * one series per candidate. `warmup` runs once per candidate before round one
 * (not in quick mode).
 */
export const rounds = async <C extends Candidate>(
  settings: Settings,
  candidates: ReadonlyArray<C>,
  measure: (candidate: C, round: number) => Promise<Measurement>,
  warmup?: (candidate: C) => Promise<void>
): Promise<Array<Series>> => {
  const series = candidates.map((c): Series => ({ id: c.id, label: c.label, rounds: [] }))
  if (warmup !== undefined && !settings.quick) {
    for (const candidate of candidates) {
      collectGarbage()
      await warmup(candidate)
    }
  }
  for (let round = 0; round < settings.rounds; round++) {
    for (let k = 0; k < candidates.length; k++) {
      const index = (k + round) % candidates.length
      const candidate = candidates[index]!
      collectGarbage()
      const measurement = await measure(candidate, round)
      series[index]!.rounds[round] = measurement
      settings.log(`  round ${round + 1}/${settings.rounds} ${candidate.label}: ${describe(measurement)}`)
    }
  }
  return series
}

const describe = (m: Measurement): string =>
  Object.entries(m)
    .map(([k, v]) => `${k}=${Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)) : "n/a"}`)
    .join(" ")
