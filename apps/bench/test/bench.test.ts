/**
 * Runs the bench once with `--quick`: a test of the harness (every
 * workload, every implementation, the tables and the JSON it writes), not a
 * timed test. Numbers are only checked to be there and to be numbers.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

interface Summary {
  readonly median: number
}

interface Results {
  readonly quick: boolean
  readonly tables: ReadonlyArray<{
    readonly id: string
    readonly rows: ReadonlyArray<{
      readonly label: string
      readonly kind: string
      readonly values: { readonly [key: string]: Summary }
    }>
  }>
}

const runQuick = (out: string) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--expose-gc", main, "--quick", "--out", out],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resume(Effect.succeed({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }))
      }
    )
    return Effect.sync(() => child.kill())
  })

describe("bench --quick", () => {
  it.live(
    "runs every workload for every implementation and writes the tables",
    () =>
      Effect.gen(function* () {
        const out = mkdtempSync(path.join(tmpdir(), "effect-mcp-bench-test-"))
        try {
          const run = yield* runQuick(out)
          assert.strictEqual(run.code, 0, run.stderr)
          const results = JSON.parse(readFileSync(path.join(out, "results.json"), "utf8")) as Results
          assert.isTrue(results.quick)
          const ids = results.tables.map((t) => t.id)
          for (const prefix of [
            "W1-",
            "W2-stdio",
            "W2-cold-installed",
            "W3-json-",
            "W3-sse-",
            "W4-",
            "W5-in-process",
            "W5-stdio",
            "W5-http",
            "W6-",
            "W7-in-flight",
            "W8-"
          ]) {
            assert.isTrue(
              ids.some((id) => id.startsWith(prefix)),
              `a table ${prefix}* in ${ids.join(", ")}`
            )
          }
          // Every effect-mcp row measured something; every ratio row of a rate is there.
          for (const table of results.tables) {
            const effect = table.rows.find((r) => r.label === "effect-mcp" || r.label.startsWith("effect-mcp "))
            assert.isDefined(effect, `${table.id} has an effect-mcp row`)
            const values = Object.values(effect!.values).map((v) => v.median)
            assert.isTrue(
              values.some((v) => Number.isFinite(v)),
              `${table.id}: effect-mcp measured`
            )
          }
          const w1 = results.tables.find((t) => t.id === "W1-sequential")!
          assert.deepStrictEqual(
            w1.rows.filter((r) => r.kind === "ratio").map((r) => r.label),
            [
              "effect-mcp / SDK",
              "effect-mcp / floor",
              "effect-mcp server (SDK client) / SDK",
              "effect-mcp client (SDK server) / SDK"
            ]
          )
          assert.isTrue(w1.rows.every((r) => Number.isFinite(r.values.seqRate?.median)))
          // The installed packages' cold starts: every server answered initialize in every mode, modules counted.
          const cold = results.tables.find((t) => t.id === "W2-cold-installed")!
          assert.deepStrictEqual(
            cold.rows.map((r) => r.label),
            [
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
          )
          // The recipe's bundle holds the whole server: a handful of files, not the installed modules.
          const shipped = cold.rows.find((r) => r.label.startsWith("effect-mcp echo, bundled"))!
          assert.isBelow(shipped.values.modules!.median, 10)
          for (const row of cold.rows.filter((r) => r.kind === "implementation")) {
            for (const key of ["plain", "noCache", "cache", "cpuNoCache", "cpuCache"]) {
              assert.isTrue(row.values[key]!.median > 0, `${row.label} ${key}`)
            }
            assert.isTrue(row.values.modules!.median > 0, `${row.label} loads modules`)
          }
          const markdown = readFileSync(path.join(out, "RESULTS.md"), "utf8")
          assert.include(markdown, "### W1 in-process")
          assert.include(run.stdout, "| effect-mcp |")
        } finally {
          rmSync(out, { recursive: true, force: true })
        }
      }),
    { timeout: 420_000 }
  )
})
