/**
 * Runs the official conformance suite (`@modelcontextprotocol/conformance`,
 * both pinned lines) as a child process on loopback and reads what it
 * recorded: the exit code and every check of every scenario.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { node, ProcessError, terminate } from "./ServerProcess.ts"

const fromRoot = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url))

/** The two pinned lines of the suite (both install a `conformance` bin, so they are run by path). */
export const suites = {
  /** `@modelcontextprotocol/conformance@0.1.16`: revisions 2025-06-18 and 2025-11-25. */
  stable: fromRoot("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
  /** `conformance-next` = `@modelcontextprotocol/conformance@0.2.0-alpha.12`: adds 2026-07-28 and extensions. */
  next: fromRoot("node_modules/conformance-next/dist/index.js")
} as const

/** Forces the suite's own servers onto 127.0.0.1 (see loopback.ts). */
export const loopbackPreload = fromRoot("test/conformance/loopback.ts")

/** Known failures the suite tolerates (auth and unbuilt extension scenarios only). */
export const expectedFailures = fromRoot("test/conformance/expected-failures.yml")

export type Status = "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO"

export interface Check {
  readonly id: string
  readonly status: Status
  readonly errorMessage?: string
}

export interface Scenario {
  readonly name: string
  readonly checks: ReadonlyArray<Check>
}

export interface Run {
  readonly exitCode: number | null
  readonly output: string
  readonly scenarios: ReadonlyArray<Scenario>
  readonly count: (status: Status) => number
  /** `scenario: status check-id: message` for every FAILURE and WARNING. */
  readonly problems: ReadonlyArray<string>
}

export interface ServerRunOptions {
  readonly suite: keyof typeof suites
  readonly url: string
  /** `--spec-version` (the `next` line only); omitted: every scenario, extensions included. */
  readonly specVersion?: string | undefined
  readonly expectedFailures?: string | undefined
  readonly timeoutMs?: number | undefined
}

// `-o` writes one folder per scenario, named `server-<scenario>-<ISO time>`, holding checks.json.
const scenarioName = (folder: string) => folder.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")

const readResults = (dir: string): ReadonlyArray<Scenario> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(dir, entry.name, "checks.json")))
    .map((entry) => ({
      name: scenarioName(entry.name),
      checks: JSON.parse(fs.readFileSync(path.join(dir, entry.name, "checks.json"), "utf8")) as ReadonlyArray<Check>
    }))
    .sort((a, b) => a.name.localeCompare(b.name))

const toRun = (exitCode: number | null, output: string, scenarios: ReadonlyArray<Scenario>): Run => {
  const all = scenarios.flatMap((s) => s.checks.map((c) => ({ scenario: s.name, check: c })))
  return {
    exitCode,
    output,
    scenarios,
    count: (status) => all.filter((c) => c.check.status === status).length,
    problems: all
      .filter((c) => c.check.status === "FAILURE" || c.check.status === "WARNING")
      .map((c) => `${c.scenario}: ${c.check.status} ${c.check.id}: ${c.check.errorMessage ?? ""}`)
  }
}

/** `conformance server --url <url> --suite all ...`, with the loopback preload; bounded by `timeoutMs`. */
export const runServer = (options: ServerRunOptions): Effect.Effect<Run, ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const outDir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-conformance-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const args = [
      "--import",
      loopbackPreload,
      suites[options.suite],
      "server",
      "--url",
      options.url,
      "--suite",
      "all",
      "-o",
      outDir,
      ...(options.specVersion === undefined ? [] : ["--spec-version", options.specVersion]),
      ...(options.expectedFailures === undefined ? [] : ["--expected-failures", options.expectedFailures])
    ]
    let output = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(node, args, { cwd: outDir, stdio: ["ignore", "pipe", "pipe"] })
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
        return child
      }),
      terminate
    )
    const timeoutMs = options.timeoutMs ?? 120_000
    const exitCode = yield* Effect.callback<number | null>((resume) => {
      child.once("exit", (code) => resume(Effect.succeed(code)))
    }).pipe(
      Effect.timeoutOption(`${timeoutMs} millis`),
      Effect.flatMap((code) =>
        code._tag === "Some"
          ? Effect.succeed(code.value)
          : Effect.fail(new ProcessError(`the suite did not finish within ${timeoutMs} ms; output:\n${output}`))
      )
    )
    return toRun(exitCode, output, readResults(outDir))
  })

/** One line per leg for the test log: scenarios run and checks by status. */
export const summary = (leg: string, run: Run): string =>
  `${leg}: exit ${run.exitCode}, ${run.scenarios.length} scenarios, ${run.count("SUCCESS")} passed, ` +
  `${run.count("FAILURE")} failed, ${run.count("WARNING")} warnings, ${run.count("SKIPPED")} skipped`
