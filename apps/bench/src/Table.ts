/**
 * One result table per workload: a row per implementation with the median
 * (and min-max) over rounds of each metric, then the ratio rows, each
 * computed round by round (both sides measured in the same round).
 */
import { ratios, type Summary, summarize } from "./Stats.ts"

export interface Metric {
  readonly key: string
  readonly label: string
  /** Digits after the decimal point when printed. */
  readonly digits: number
}

/** The value of each metric for one implementation in one round (NaN when it has none). */
export type Measurement = { readonly [key: string]: number }

export interface Series {
  readonly id: string
  readonly label: string
  readonly rounds: Array<Measurement>
}

export interface RatioSpec {
  readonly label: string
  readonly numerator: string
  readonly denominator: string
  /** The metrics the ratio is computed for. */
  readonly metrics: ReadonlyArray<string>
}

export interface TableSpec {
  readonly id: string
  readonly title: string
  readonly metrics: ReadonlyArray<Metric>
  readonly ratios: ReadonlyArray<RatioSpec>
  readonly notes?: ReadonlyArray<string> | undefined
}

export interface Table extends TableSpec {
  readonly series: ReadonlyArray<Series>
}

export interface TableResult {
  readonly id: string
  readonly title: string
  readonly rows: ReadonlyArray<{
    readonly label: string
    readonly kind: "implementation" | "ratio"
    readonly values: { readonly [key: string]: Summary }
  }>
  readonly notes: ReadonlyArray<string>
}

/** The summaries a table prints, for the JSON output too. */
export const resultOf = (table: Table): TableResult => {
  const byId = new Map(table.series.map((s) => [s.id, s]))
  const column = (series: Series | undefined, key: string) =>
    series === undefined ? [] : series.rounds.map((m) => m[key] ?? Number.NaN)
  const rows: Array<TableResult["rows"][number]> = []
  for (const series of table.series) {
    const values: { [key: string]: Summary } = {}
    for (const metric of table.metrics) values[metric.key] = summarize(column(series, metric.key))
    rows.push({ label: series.label, kind: "implementation", values })
  }
  for (const ratio of table.ratios) {
    const numerator = byId.get(ratio.numerator)
    const denominator = byId.get(ratio.denominator)
    if (numerator === undefined || denominator === undefined) continue
    const values: { [key: string]: Summary } = {}
    for (const key of ratio.metrics) {
      values[key] = summarize(ratios(column(numerator, key), column(denominator, key)))
    }
    rows.push({ label: ratio.label, kind: "ratio", values })
  }
  return { id: table.id, title: table.title, rows, notes: table.notes ?? [] }
}

const format = (value: number, digits: number): string => {
  if (!Number.isFinite(value)) return "n/a"
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

const cell = (summary: Summary | undefined, digits: number, ratio: boolean): string => {
  if (summary === undefined) return ""
  if (!Number.isFinite(summary.median)) return "n/a"
  const d = ratio ? 2 : digits
  const suffix = ratio ? "x" : ""
  const median = format(summary.median, d) + suffix
  if (summary.min === summary.max) return median
  return `${median} (${format(summary.min, d)}-${format(summary.max, d)})`
}

/** The table as GitHub-flavoured Markdown. */
export const markdown = (table: Table): string => {
  const result = resultOf(table)
  const header = ["", ...table.metrics.map((m) => m.label)]
  const lines = [
    `### ${table.title}`,
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? " --- " : " ---: ")).join("|")}|`
  ]
  for (const row of result.rows) {
    const ratio = row.kind === "ratio"
    const cells = table.metrics.map((m) => cell(row.values[m.key], m.digits, ratio))
    lines.push(`| ${ratio ? `*${row.label}*` : row.label} | ${cells.join(" | ")} |`)
  }
  for (const note of result.notes) lines.push("", note)
  return lines.join("\n")
}
