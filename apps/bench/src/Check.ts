/**
 * The well-formedness of a run's tables, checked by `--quick` and `--smoke`
 * (the harness checks) before they exit: each workload wrote the tables it
 * should (`tableIds`), every table has an id of its own,
 * implementation rows with the same metrics, ratio rows over those metrics,
 * summaries in order, and an effect-mcp row that measured something. The
 * installed cold-start table (W2, too costly for `npm test`) is checked here
 * in full: all eight servers, all five ratios, every start timed in every
 * mode with its modules counted, the shipped bundle a handful of files; and
 * so is the table of the echo server's start by package (every row, each
 * package the echo server loads seen loading and costing time).
 */
import type { Summary } from "./Stats.ts"
import type { TableResult } from "./Table.ts"

/** The tables each workload writes, in order (`--smoke` leaves out the installed ones). */
export const tableIds: { readonly [workload: string]: ReadonlyArray<string> } = {
  W1: ["W1-sequential", "W1-concurrent"],
  W2: ["W2-stdio", "W2-cold-installed", "W2-start-by-package"],
  W3: ["W3-json-sequential", "W3-json-concurrent", "W3-sse-sequential", "W3-sse-concurrent"],
  W4: ["W4-memory", "W4-clients"],
  W5: ["W5-in-process", "W5-stdio", "W5-http"],
  W6: ["W6-cancellation"],
  W7: ["W7-in-flight"],
  W8: ["W8-sequential", "W8-concurrent", "W8-sessions"],
  W9: ["W9-workers", "W9-runtimes-sequential", "W9-runtimes-concurrent"],
  W10: ["W10-sequential", "W10-concurrent"]
}

/** The ids of the tables a run of `workloads` writes, in order. */
export const expectedIds = (workloads: ReadonlyArray<string>, smoke: boolean): Array<string> =>
  workloads.flatMap((id) => tableIds[id] ?? [`${id}-?`]).filter((id) => !(smoke && installedTables.has(id)))

/** The tables made from the packed and installed packages (W2), which `--smoke` leaves out. */
const installedTables: ReadonlySet<string> = new Set(["W2-cold-installed", "W2-start-by-package"])

/** The rows of `W2-cold-installed`, in order: eight servers, then five ratios. */
export const coldInstalledRows: ReadonlyArray<string> = [
  "effect-mcp echo",
  "SDK echo",
  "effect-mcp echo, bundled by its user (examples/shipping)",
  "SDK echo, bundled the same way",
  "effect-mcp everything (mcp-everything-server)",
  "SDK everything (server-everything)",
  "effect floor (effect imported, no MCP library)",
  "Node floor (no library)",
  "effect-mcp echo / SDK echo",
  "effect-mcp echo bundled / SDK echo",
  "effect-mcp echo bundled / SDK echo bundled",
  "effect-mcp everything / SDK everything",
  "effect floor / SDK echo"
]

const coldInstalledKeys = ["plain", "noCache", "cache", "cpuNoCache", "cpuCache", "modules"]

/** The rows of `W2-start-by-package`, in order (see `workloads/W2ColdStart.ts`). */
export const startByPackageRows: ReadonlyArray<string> = [
  "effect-mcp, all packages",
  "@effect-mcp/protocol",
  "@effect-mcp/engine",
  "@effect-mcp/server",
  "@effect-mcp/platform-node",
  "effect",
  "@effect/platform-node (and -shared)",
  "other packages",
  "the server script",
  "Node (bootstrap, linking, event loop)",
  "garbage collection",
  "whole start",
  "effect floor: effect",
  "effect floor: whole start"
]

/** An effect-mcp row: `effect-mcp` itself or a variant of it (`effect-mcp echo`, `effect-mcp, traced`). */
export const isEffectRow = (label: string): boolean =>
  label === "effect-mcp" || label.startsWith("effect-mcp ") || label.startsWith("effect-mcp,")

const sameKeys = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((key, i) => key === b[i])

const summaryProblem = (summary: Summary | undefined): string | undefined => {
  if (summary === undefined) return "no summary"
  const { median, min, max } = summary
  if (!Number.isFinite(median))
    return Number.isFinite(min) || Number.isFinite(max) ? "a range without a median" : undefined
  if (!(min <= median && median <= max)) return `median ${median} outside (${min}-${max})`
  return undefined
}

const coldInstalledProblems = (table: TableResult): Array<string> => {
  const problems: Array<string> = []
  const labels = table.rows.map((row) => row.label)
  if (!sameKeys(labels, coldInstalledRows)) problems.push(`${table.id}: rows ${labels.join(" | ")}`)
  for (const row of table.rows.filter((r) => r.kind === "implementation")) {
    for (const key of coldInstalledKeys) {
      const median = row.values[key]?.median ?? Number.NaN
      if (!(median > 0)) problems.push(`${table.id}: ${row.label} ${key} is ${median}, not a positive number`)
    }
  }
  // The recipe's bundle holds the whole server: a handful of files, not the installed modules.
  const shipped = table.rows.find((row) => row.label.startsWith("effect-mcp echo, bundled"))
  const modules = shipped?.values.modules?.median ?? Number.NaN
  if (!(modules < 10)) problems.push(`${table.id}: the shipped effect-mcp echo loads ${modules} modules, not under 10`)
  return problems
}

const startByPackageProblems = (table: TableResult): Array<string> => {
  const problems: Array<string> = []
  const labels = table.rows.map((row) => row.label)
  if (!sameKeys(labels, startByPackageRows)) problems.push(`${table.id}: rows ${labels.join(" | ")}`)
  // Every package an echo server loads was seen loading (its modules) and costing something; so was the whole.
  for (const label of [...startByPackageRows.slice(0, 6), "whole start", "effect floor: whole start"]) {
    const row = table.rows.find((r) => r.label === label)
    for (const key of ["total", "modules"]) {
      const median = row?.values[key]?.median ?? Number.NaN
      if (!(median > 0)) problems.push(`${table.id}: ${label} ${key} is ${median}, not a positive number`)
    }
  }
  return problems
}

/** What is wrong with a run's tables (`expected`: their ids, in order); empty when they are well formed. */
export const problems = (tables: ReadonlyArray<TableResult>, expected: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  const ids = tables.map((table) => table.id)
  if (tables.length === 0 || !sameKeys(ids, expected)) {
    out.push(`tables ${ids.join(", ")}; expected ${expected.join(", ")}`)
  }
  const seen = new Set<string>()
  for (const table of tables) {
    const id = table.id
    if (id === "" || seen.has(id)) out.push(`table id "${id}" empty or repeated`)
    seen.add(id)
    if (table.title === "") out.push(`${id}: no title`)
    const implementations = table.rows.filter((row) => row.kind === "implementation")
    if (implementations.length === 0) {
      out.push(`${id}: no implementation rows`)
      continue
    }
    const labels = table.rows.map((row) => row.label)
    if (labels.some((label) => label === "") || new Set(labels).size !== labels.length) {
      out.push(`${id}: row labels empty or repeated: ${labels.join(" | ")}`)
    }
    const metrics = Object.keys(implementations[0]!.values)
    if (metrics.length === 0) out.push(`${id}: no metrics`)
    for (const row of table.rows) {
      const keys = Object.keys(row.values)
      const fits =
        row.kind === "implementation"
          ? sameKeys(keys, metrics)
          : keys.length > 0 && keys.every((k) => metrics.includes(k))
      if (!fits) out.push(`${id}: ${row.label} has metrics ${keys.join(", ")}, the table ${metrics.join(", ")}`)
      for (const key of keys) {
        const problem = summaryProblem(row.values[key])
        if (problem !== undefined) out.push(`${id}: ${row.label} ${key}: ${problem}`)
      }
    }
    // Ratio rows come after every implementation row.
    const firstRatio = table.rows.findIndex((row) => row.kind === "ratio")
    if (firstRatio !== -1 && table.rows.slice(firstRatio).some((row) => row.kind !== "ratio")) {
      out.push(`${id}: an implementation row after a ratio row`)
    }
    const effect = implementations.find((row) => isEffectRow(row.label))
    if (effect === undefined) out.push(`${id}: no effect-mcp row`)
    else if (!Object.values(effect.values).some((summary) => Number.isFinite(summary.median))) {
      out.push(`${id}: the effect-mcp row measured nothing`)
    }
    if (id === "W2-cold-installed") out.push(...coldInstalledProblems(table))
    if (id === "W2-start-by-package") out.push(...startByPackageProblems(table))
  }
  return out
}
