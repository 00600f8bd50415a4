/**
 * Runs the official conformance suite in client mode against
 * `apps/conformance-client`: `conformance client --command <client> --suite all`,
 * with the suite's mock servers held on 127.0.0.1 by `loopback.ts`, and reads
 * what it recorded (exit code, every check of every scenario).
 *
 * The suite starts the client once per scenario, all scenarios at once; it
 * runs in its own process group so that a run that overstays its bound is
 * ended together with every client it started.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { suites } from "../support/ConformanceSuite.ts"
import { node, ProcessError, root } from "../support/ServerProcess.ts"

export { suites }

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

/** Binds listens without a host to 127.0.0.1, keeping `listen(0)` synchronous (see the file). */
export const loopbackPreload = here("./loopback.ts")

export const expectedFailures = {
  stable: here("./expected-failures-0.1.16.yaml"),
  next: here("./expected-failures-0.2.0.yaml")
} as const

/** The client command the suite runs (it appends the server URL). */
export const clientCommand = `${node} ${path.join(root, "apps/conformance-client/bin/mcp-conformance-client.js")}`

export type Status = "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO"

export interface Check {
  readonly id: string
  readonly status: Status
  readonly errorMessage?: string
  /** What the check observed (e.g. the timed check's `actualDelayMs` and `tooEarly`). */
  readonly details?: Readonly<Record<string, unknown>>
}

export interface Scenario {
  readonly name: string
  readonly checks: ReadonlyArray<Check>
}

export interface Run {
  readonly exitCode: number | null
  readonly output: string
  readonly scenarios: ReadonlyArray<Scenario>
  readonly scenario: (name: string) => Scenario | undefined
  readonly count: (status: Status) => number
}

export interface ClientRunOptions {
  readonly suite: keyof typeof suites
  /** `--spec-version` (the `next` line only); omitted: every scenario, extensions included. */
  readonly specVersion?: string | undefined
  /** `--scenario <name>`: that scenario alone, without the baseline; omitted: `--suite all`. */
  readonly scenario?: string | undefined
  /**
   * Per-client bound the suite enforces; 2 minutes by default. A client done
   * in a second alone can take a minute when the suite starts 50 at once on a
   * loaded 2-core machine; the whole run stays bounded by `timeoutMs`.
   */
  readonly clientTimeoutMs?: number | undefined
  /** Bound of the whole run. */
  readonly timeoutMs?: number | undefined
}

// `-o` writes one folder per scenario, `<scenario>-<ISO time>` (auth scenarios under `auth/`), holding checks.json.
const stamp = /-\d{4}-\d{2}-\d{2}T[\d-]+Z$/

const readResults = (dir: string, prefix = ""): ReadonlyArray<Scenario> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry): ReadonlyArray<Scenario> => {
    if (!entry.isDirectory()) return []
    const folder = path.join(dir, entry.name)
    const checks = path.join(folder, "checks.json")
    if (!fs.existsSync(checks)) return readResults(folder, `${prefix}${entry.name}/`)
    return [
      {
        name: `${prefix}${entry.name.replace(stamp, "")}`,
        checks: JSON.parse(fs.readFileSync(checks, "utf8")) as ReadonlyArray<Check>
      }
    ]
  })

const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is gone already.
  }
}

/** `conformance client --command <client> --suite all ...` (or `--scenario`); bounded by `timeoutMs`. */
export const runClient = (options: ClientRunOptions): Effect.Effect<Run, ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const outDir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-conformance-client-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const args = [
      "--import",
      loopbackPreload,
      suites[options.suite],
      "client",
      "--command",
      clientCommand,
      ...(options.scenario === undefined
        ? ["--suite", "all", "--expected-failures", expectedFailures[options.suite]]
        : ["--scenario", options.scenario]),
      "--timeout",
      String(options.clientTimeoutMs ?? 120_000),
      "-o",
      outDir,
      ...(options.specVersion === undefined ? [] : ["--spec-version", options.specVersion])
    ]
    let output = ""
    const exit = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(node, args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"] })
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
        const code = Effect.callback<number | null>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
          child.once("exit", (c) => resume(Effect.succeed(c)))
        })
        return { child, code }
      }),
      // Ends the suite and every client it started; the group is gone once the suite exited on its own.
      ({ child, code }) =>
        Effect.gen(function* () {
          if (child.pid === undefined) return
          signalGroup(child.pid, "SIGTERM")
          const done = yield* Effect.timeoutOption(code, "3 seconds")
          if (done._tag === "None") signalGroup(child.pid, "SIGKILL")
        })
    )
    const timeoutMs = options.timeoutMs ?? 240_000
    const exitCode = yield* exit.code.pipe(
      Effect.timeoutOption(`${timeoutMs} millis`),
      Effect.flatMap((code) =>
        code._tag === "Some"
          ? Effect.succeed(code.value)
          : Effect.fail(new ProcessError(`the suite did not finish within ${timeoutMs} ms; output:\n${output}`))
      )
    )
    const scenarios = readResults(outDir).toSorted((a, b) => a.name.localeCompare(b.name))
    const all = scenarios.flatMap((s) => s.checks)
    return {
      exitCode,
      output,
      scenarios,
      scenario: (name) => scenarios.find((s) => s.name === name),
      count: (status) => all.filter((c) => c.status === status).length
    }
  })

/**
 * The scenarios the suite reported as unexpected failures (not in the baseline) and the stale
 * baseline entries, read from its output (`✗ <name>` / `✓ <name>` under the two headings).
 */
export const baselineReport = (
  run: Run
): { readonly unexpected: ReadonlyArray<string>; readonly stale: ReadonlyArray<string> } => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the suite colours its headings
  const lines = run.output.replace(/\u001b\[\d+m/g, "").split("\n")
  const section = (heading: string, mark: string) => {
    const start = lines.findIndex((l) => l.startsWith(heading))
    if (start < 0) return []
    const names: Array<string> = []
    for (const line of lines.slice(start + 1)) {
      if (!line.startsWith(`  ${mark} `)) break
      names.push(line.slice(4).trim())
    }
    return names
  }
  return {
    unexpected: section("Unexpected failures (not in baseline)", "✗"),
    stale: section("Stale baseline entries", "✓")
  }
}

/** One line per leg for the test log: the authorization scenarios apart. */
export const summary = (leg: string, run: Run): string => {
  const isAuth = (s: Scenario) => s.name.startsWith("auth/")
  const tally = (scenarios: ReadonlyArray<Scenario>) => {
    const checks = scenarios.flatMap((s) => s.checks)
    const count = (status: Status) => checks.filter((c) => c.status === status).length
    return (
      `${scenarios.length} scenarios: ${count("SUCCESS")} checks passed, ${count("FAILURE")} failed, ` +
      `${count("WARNING")} warnings, ${count("SKIPPED")} skipped`
    )
  }
  return (
    `${leg}: exit ${run.exitCode}; non-auth ${tally(run.scenarios.filter((s) => !isAuth(s)))}; ` +
    `auth ${tally(run.scenarios.filter(isAuth))}`
  )
}
