/**
 * `npm run bench`: every workload for effect-mcp, the official SDK and a
 * bare floor, side by side, in interleaved rounds. Prints one table per
 * workload and writes them as Markdown (`RESULTS.md`) and JSON (`results.json`).
 *
 *   node --expose-gc src/main.ts [--quick | --smoke] [--rounds N] [--only W1,W3] [--out DIR] [--tracing]
 *
 * `--quick` runs a few hundred iterations of everything (a check that the
 * harness works end to end, not a measurement) and writes to a temporary
 * directory unless `--out` is given. `--smoke` is the check `npm test` runs
 * (`test/bench.test.ts`), in seconds: one round of tens of iterations of the
 * workloads in `smokeWorkloads` (any other with `--only`), W2 without its
 * installed cold-start table. Both check the tables they wrote (`Check.ts`)
 * and exit 1 when one is malformed. `--tracing` adds an effect-mcp row with
 * a tracer installed on both sides to W1, next to the untraced one, and
 * reports the tracing overhead per call.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Check from "./Check.ts"
import { markdown, resultOf, type Table } from "./Table.ts"
import type { Settings, Workload } from "./Workload.ts"
import * as W1 from "./workloads/W1InProcess.ts"
import * as W2 from "./workloads/W2Stdio.ts"
import * as W3 from "./workloads/W3Http.ts"
import * as W4 from "./workloads/W4Memory.ts"
import * as W5 from "./workloads/W5Large.ts"
import * as W6 from "./workloads/W6Cancel.ts"
import * as W7 from "./workloads/W7InFlight.ts"
import * as W8 from "./workloads/W8Cluster.ts"
import * as W9 from "./workloads/W9Runtimes.ts"
import * as W10 from "./workloads/W10Gateway.ts"

const workloads: ReadonlyArray<Workload> = [
  W1.workload,
  W2.workload,
  W3.workload,
  W4.workload,
  W5.workload,
  W6.workload,
  W7.workload,
  W8.workload,
  W9.workload,
  W10.workload
]

/**
 * What `--smoke` runs without `--only`: every implementation side by side in
 * process (W1), with their ratio rows, and the in-flight curve (W7). The
 * others start servers in child processes (seconds each on two cores); the
 * full structural checks of all of them run with `--quick`.
 */
const smokeWorkloads: ReadonlySet<string> = new Set(["W1", "W7"])

interface Args {
  readonly quick: boolean
  readonly smoke: boolean
  readonly rounds: number | undefined
  readonly only: ReadonlySet<string> | undefined
  readonly out: string | undefined
  readonly tracing: boolean
}

const parseArgs = (argv: ReadonlyArray<string>): Args => {
  let quick = false
  let smoke = false
  let rounds: number | undefined
  let only: Set<string> | undefined
  let out: string | undefined
  let tracing = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${arg} needs a value`)
      return v
    }
    if (arg === "--quick") quick = true
    else if (arg === "--smoke") smoke = true
    else if (arg === "--rounds") rounds = Number(value())
    else if (arg === "--only")
      only = new Set(
        value()
          .split(",")
          .map((s) => s.trim().toUpperCase())
      )
    else if (arg === "--out") out = value()
    else if (arg === "--tracing") tracing = true
    else throw new Error(`unknown argument ${arg}`)
  }
  if (quick && smoke) throw new Error("--quick and --smoke are two different runs: choose one")
  return { quick, smoke, rounds, only, out, tracing }
}

const environment = () => {
  const cpus = os.cpus()
  return {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: `${cpus[0]?.model ?? "unknown"} x ${cpus.length}`,
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    gc: typeof (globalThis as { gc?: unknown }).gc === "function"
  }
}

const main = async () => {
  const args = parseArgs(process.argv.slice(2))
  // A smoke run is a quick run with smaller counts still.
  const quick = args.quick || args.smoke
  const mode = args.smoke ? "smoke" : args.quick ? "quick" : undefined
  const rounds = args.rounds ?? (quick ? 1 : 5)
  const only = args.only ?? (args.smoke ? smokeWorkloads : undefined)
  const settings: Settings = {
    quick,
    smoke: args.smoke,
    rounds,
    log: (line) => process.stderr.write(`${line}\n`),
    tracing: args.tracing
  }
  const env = environment()
  const started = performance.now()
  process.stderr.write(
    `effect-mcp bench: ${rounds} rounds${mode === undefined ? "" : ` (${mode})`}; ${env.node}, ${env.cpu}\n`
  )
  if (!env.gc) process.stderr.write("note: run with --expose-gc for a collection before each measurement\n")
  const tables: Array<Table> = []
  const ran: Array<string> = []
  for (const workload of workloads) {
    if (only !== undefined && !only.has(workload.id)) continue
    ran.push(workload.id)
    process.stderr.write(`${workload.id} ${workload.title}\n`)
    const workloadStart = performance.now()
    for (const table of await workload.run(settings)) {
      tables.push(table)
      process.stdout.write(`\n${markdown(table)}\n`)
    }
    process.stderr.write(`${workload.id} done in ${((performance.now() - workloadStart) / 1000).toFixed(1)} s\n`)
  }
  const seconds = (performance.now() - started) / 1000
  const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
  const out = args.out ?? (mode === undefined ? here : path.join(os.tmpdir(), `effect-mcp-bench-${mode}`))
  mkdirSync(out, { recursive: true })
  const header = [
    "# effect-mcp benchmarks",
    "",
    `Run ${env.date} in ${seconds.toFixed(0)} s: Node ${env.node}, ${env.cpu}, ${env.platform};`,
    `load average at start ${env.loadAverage.join(" / ")}. ${rounds} rounds; each cell is the median with (min-max);`,
    "ratios are computed round by round. Reproduce with `npm run bench` from the repository root",
    "(`npm run bench -- --only W1,W3` for some workloads, `--rounds N`, `--quick` or `--smoke` to check the harness).",
    ""
  ]
  writeFileSync(path.join(out, "RESULTS.md"), `${[...header, ...tables.map(markdown)].join("\n\n")}\n`)
  const results = tables.map(resultOf)
  writeFileSync(
    path.join(out, "results.json"),
    `${JSON.stringify({ environment: env, rounds, quick, smoke: args.smoke, seconds, tables: results }, null, 2)}\n`
  )
  process.stderr.write(`wrote ${path.join(out, "RESULTS.md")} and results.json (${seconds.toFixed(0)} s)\n`)
  // A harness check fails on malformed tables (after writing them, so they can be looked at).
  if (mode !== undefined) {
    const problems = Check.problems(results, Check.expectedIds(ran, args.smoke))
    if (problems.length > 0) throw new Error(`malformed tables:\n  ${problems.join("\n  ")}`)
    process.stderr.write(`${mode}: ${results.length} tables well formed\n`)
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
)
