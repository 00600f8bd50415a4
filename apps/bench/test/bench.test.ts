/**
 * Runs the bench once with `--smoke`: a test of the harness (the in-process
 * implementations side by side, their ratio rows, the tables printed and
 * written as Markdown and JSON), not a timed test. Numbers are only checked to
 * be there and to be finite. Every workload, with the checks of `src/Check.ts`
 * (which the smoke applies to its own tables too, and which are tested here
 * against malformed ones), runs with `npm run bench -- --quick`.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Check from "../src/Check.ts"
import { resultOf, type Series, type Table, type TableResult } from "../src/Table.ts"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

interface Summary {
  readonly median: number | null
  readonly min: number | null
  readonly max: number | null
}

interface Results {
  readonly quick: boolean
  readonly smoke: boolean
  readonly rounds: number
  readonly tables: ReadonlyArray<{
    readonly id: string
    readonly title: string
    readonly rows: ReadonlyArray<{
      readonly label: string
      readonly kind: string
      readonly values: { readonly [key: string]: Summary }
    }>
  }>
}

const runSmoke = (out: string) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--expose-gc", main, "--smoke", "--out", out],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resume(Effect.succeed({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }))
      }
    )
    return Effect.sync(() => child.kill())
  })

const w1Implementations = [
  "effect-mcp",
  "SDK 1.32.2",
  "floor",
  "SDK client -> effect-mcp server",
  "effect-mcp client -> SDK server",
  "effect-mcp, negotiated (2026-07-28)"
]
const w1Ratios = [
  "effect-mcp / SDK",
  "effect-mcp / floor",
  "effect-mcp server (SDK client) / SDK",
  "effect-mcp client (SDK server) / SDK"
]

/** The Markdown tables of a RESULTS.md (or of the bench's stdout), by title: their lines after the title. */
const markdownTables = (text: string): Map<string, Array<string>> => {
  const tables = new Map<string, Array<string>>()
  for (const section of text.split(/^### /m).slice(1)) {
    const [title, ...rest] = section.split("\n")
    tables.set(
      title!,
      rest.filter((line) => line.startsWith("|"))
    )
  }
  return tables
}

describe("bench --smoke", () => {
  it.live(
    "runs the in-process workloads for every implementation and writes well-formed tables",
    () =>
      Effect.gen(function* () {
        const out = mkdtempSync(path.join(tmpdir(), "effect-mcp-bench-test-"))
        try {
          const run = yield* runSmoke(out)
          assert.strictEqual(run.code, 0, run.stderr)
          // The smoke checked its own tables (Check.ts) before it exited.
          assert.include(run.stderr, "smoke: 3 tables well formed")
          const results = JSON.parse(readFileSync(path.join(out, "results.json"), "utf8")) as Results
          assert.isTrue(results.smoke)
          assert.isTrue(results.quick)
          assert.strictEqual(results.rounds, 1)
          assert.deepStrictEqual(
            results.tables.map((t) => t.id),
            ["W1-sequential", "W1-concurrent", "W7-in-flight"]
          )
          const expectedRows: { readonly [id: string]: { rows: Array<string>; keys: Array<string> } } = {
            "W1-sequential": {
              rows: [...w1Implementations, ...w1Ratios],
              keys: ["seqRate", "seqP50", "seqP99", "seqCpu"]
            },
            "W1-concurrent": {
              rows: [...w1Implementations, ...w1Ratios],
              keys: ["concRate", "concP50", "concP99", "concCpu"]
            },
            "W7-in-flight": {
              rows: ["effect-mcp", "SDK 1.32.2", "effect-mcp / SDK"],
              keys: ["rate1", "cpu1", "rate4", "cpu4", "rate16", "cpu16"]
            }
          }
          for (const table of results.tables) {
            const expected = expectedRows[table.id]!
            assert.deepStrictEqual(
              table.rows.map((r) => r.label),
              expected.rows,
              `${table.id} rows`
            )
            const ratios = table.rows.filter((r) => r.kind === "ratio").map((r) => r.label)
            assert.deepStrictEqual(
              ratios,
              expected.rows.filter((label) => label.includes(" / ")),
              `${table.id} ratios`
            )
            // Every implementation measured every metric, and every ratio was computed from two measurements.
            for (const row of table.rows) {
              const keys = Object.keys(row.values)
              if (row.kind === "implementation") assert.deepStrictEqual(keys, expected.keys, `${table.id} ${row.label}`)
              else assert.isTrue(keys.length > 0 && keys.every((k) => expected.keys.includes(k)))
              for (const key of keys) {
                const { median, min, max } = row.values[key]!
                assert.isTrue(
                  Number.isFinite(median) && Number.isFinite(min) && Number.isFinite(max),
                  `${table.id} ${row.label} ${key}: ${median} (${min}-${max})`
                )
                if (key.endsWith("Rate") || key.startsWith("rate")) assert.isAbove(median!, 0)
              }
            }
          }
          // The same tables as Markdown, in RESULTS.md and on stdout: a header, its rule, one line per row.
          const markdown = readFileSync(path.join(out, "RESULTS.md"), "utf8")
          assert.match(markdown, /^# effect-mcp benchmarks\n/)
          for (const source of [markdown, run.stdout]) {
            const tables = markdownTables(source)
            assert.deepStrictEqual(
              [...tables.keys()],
              results.tables.map((t) => t.title)
            )
            for (const table of results.tables) {
              const lines = tables.get(table.title)!
              const columns = Object.keys(table.rows[0]!.values).length + 1
              assert.strictEqual(lines.length, table.rows.length + 2, table.title)
              for (const line of lines) assert.strictEqual(line.split("|").length, columns + 2, line)
              assert.match(lines[1]!, /^\| --- \|( ---: \|)+$/)
            }
          }
          assert.include(markdown, "### W1 in-process")
          assert.include(run.stdout, "| effect-mcp |")
          assert.include(run.stdout, "| *effect-mcp / SDK* |")
        } finally {
          rmSync(out, { recursive: true, force: true })
        }
      }),
    // Generous: the smoke takes seconds; this fires only when it hangs.
    { timeout: 120_000 }
  )
})

describe("Check.problems", () => {
  const series = (id: string, label: string, values: Record<string, number>): Series => ({
    id,
    label,
    rounds: [values]
  })
  const table = (id: string, all: ReadonlyArray<Series>, keys: ReadonlyArray<string>): Table => ({
    id,
    title: `${id} title`,
    metrics: keys.map((key) => ({ key, label: key, digits: 0 })),
    ratios: [{ label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: keys }],
    series: all
  })
  const echo = (effect: number, sdk: number) =>
    resultOf(
      table(
        "W1-sequential",
        [series("effect", "effect-mcp", { seqRate: effect }), series("sdk", "SDK", { seqRate: sdk })],
        ["seqRate"]
      )
    )
  const coldKeys = ["plain", "noCache", "cache", "cpuNoCache", "cpuCache", "modules"]
  const servers = [
    ["effect-echo", "effect-mcp echo"],
    ["sdk-echo", "SDK echo"],
    ["effect-echo-shipped", "effect-mcp echo, bundled by its user (examples/shipping)"],
    ["sdk-echo-shipped", "SDK echo, bundled the same way"],
    ["effect-everything", "effect-mcp everything (mcp-everything-server)"],
    ["sdk-everything", "SDK everything (server-everything)"],
    ["effect-floor", "effect floor (effect imported, no MCP library)"],
    ["node-floor", "Node floor (no library)"]
  ] as const
  const cold = (value: (id: string, key: string) => number): TableResult => {
    const result = resultOf({
      ...table(
        "W2-cold-installed",
        servers.map(([id, label]) => series(id, label, Object.fromEntries(coldKeys.map((k) => [k, value(id, k)])))),
        coldKeys
      ),
      ratios: Check.coldInstalledRows.slice(servers.length).map((label) => ({
        label,
        numerator: "effect-echo",
        denominator: "sdk-echo",
        metrics: coldKeys
      }))
    })
    return result
  }
  const healthyCold = (id: string, key: string) => (key === "modules" && id.endsWith("-shipped") ? 4 : 100)
  const byPackageKeys = ["load", "run", "total", "modules"]
  const byPackage = (value: (label: string, key: string) => number): TableResult =>
    resultOf({
      ...table(
        "W2-start-by-package",
        Check.startByPackageRows.map((label, i) =>
          series(`row-${i}`, label, Object.fromEntries(byPackageKeys.map((k) => [k, value(label, k)])))
        ),
        byPackageKeys
      ),
      ratios: []
    })
  const healthyByPackage = (label: string) => (label === "other packages" ? 0 : 10)

  it("passes well-formed tables", () => {
    assert.deepStrictEqual(Check.problems([echo(10, 20)], ["W1-sequential"]), [])
    assert.deepStrictEqual(Check.problems([cold(healthyCold)], ["W2-cold-installed"]), [])
    assert.deepStrictEqual(Check.expectedIds(["W1", "W2"], true), ["W1-sequential", "W1-concurrent", "W2-stdio"])
    assert.deepStrictEqual(Check.expectedIds(["W2"], false), ["W2-stdio", "W2-cold-installed", "W2-start-by-package"])
    assert.deepStrictEqual(Check.problems([byPackage(healthyByPackage)], ["W2-start-by-package"]), [])
  })

  it("finds a missing or repeated table, and an effect-mcp row that measured nothing", () => {
    assert.isNotEmpty(Check.problems([echo(10, 20)], ["W1-sequential", "W1-concurrent"]))
    assert.isNotEmpty(Check.problems([echo(10, 20), echo(10, 20)], ["W1-sequential", "W1-sequential"]))
    assert.isNotEmpty(Check.problems([echo(Number.NaN, 20)], ["W1-sequential"]))
    const sdkOnly = resultOf(table("W1-sequential", [series("sdk", "SDK", { seqRate: 1 })], ["seqRate"]))
    assert.isNotEmpty(Check.problems([sdkOnly], ["W1-sequential"]))
  })

  it("finds a package of the echo server's start not seen loading, or a row missing", () => {
    const expected = ["W2-start-by-package"]
    assert.isNotEmpty(
      Check.problems(
        [
          byPackage((label, key) => (label === "@effect-mcp/server" && key === "modules" ? 0 : healthyByPackage(label)))
        ],
        expected
      )
    )
    assert.isNotEmpty(
      Check.problems([byPackage((label) => (label === "whole start" ? Number.NaN : healthyByPackage(label)))], expected)
    )
    const missing = byPackage(healthyByPackage)
    assert.isNotEmpty(
      Check.problems([{ ...missing, rows: missing.rows.filter((r) => r.label !== "@effect-mcp/engine") }], expected)
    )
  })

  it("finds a cold start not timed, modules not counted, a shipped bundle of many files, a missing server", () => {
    const expected = ["W2-cold-installed"]
    assert.isNotEmpty(
      Check.problems(
        [cold((id, key) => (id === "sdk-everything" && key === "cache" ? Number.NaN : healthyCold(id, key)))],
        expected
      )
    )
    assert.isNotEmpty(
      Check.problems(
        [cold((id, key) => (id === "node-floor" && key === "modules" ? 0 : healthyCold(id, key)))],
        expected
      )
    )
    assert.isNotEmpty(Check.problems([cold(() => 100)], expected))
    const missing = cold(healthyCold)
    assert.isNotEmpty(
      Check.problems(
        [{ ...missing, rows: missing.rows.filter((r) => r.label !== "SDK echo, bundled the same way") }],
        expected
      )
    )
  })
})
