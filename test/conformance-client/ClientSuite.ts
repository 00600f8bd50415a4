/**
 * Runs the official conformance suite in client mode against
 * `apps/conformance-client`: `conformance client --command <client> --suite all`,
 * with the suite's mock servers held on 127.0.0.1 by `loopback.ts`, and reads
 * what it recorded (exit code, every check of every scenario).
 *
 * The suite starts every scenario at once; left alone, that is up to 50
 * clients starting together on 2 cores, where its one timed check
 * (`sse-retry`) measured the machine's load rather than the client. So the
 * command it runs is `gate.ts` in front of the client: each waits for a permit
 * from a gate this module serves on a Unix socket, so only `concurrency`
 * clients run at a time (the scenarios' mock servers, idle until their client
 * comes, all start at once as before); a timed scenario's client runs alone
 * (`timedScenarios`). The suite runs in its own process
 * group, so a run that overstays its bound is ended together with every
 * client it started.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Net from "node:net"
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

/** The client the suite runs (it appends the server URL). */
export const clientCommand = `${node} ${path.join(root, "apps/conformance-client/bin/mcp-conformance-client.js")}`

/** The command that waits for a permit from the gate at `socketPath`, then runs `clientCommand` (see gate.ts). */
export const gatedCommand = (socketPath: string) => `${node} ${here("./gate.ts")} ${socketPath} ${clientCommand}`

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
  /** Clients the gate let start; one per scenario run, or the suite ran a client around the gate. */
  readonly clientsStarted: number
  readonly output: string
  readonly scenarios: ReadonlyArray<Scenario>
  readonly scenario: (name: string) => Scenario | undefined
  readonly count: (status: Status) => number
}

export interface ClientRunOptions {
  readonly suite: keyof typeof suites
  /** `--spec-version` (the `next` line only); omitted: every scenario, extensions included. */
  readonly specVersion?: string | undefined
  /**
   * How many clients run at once (3 by default): enough to keep both cores busy, few enough that a
   * client's own timing is what the timed check measures.
   */
  readonly concurrency?: number | undefined
  /**
   * Per-client bound the suite enforces (`--timeout`), counted from the scenario's start, so it includes
   * the wait for a permit; 4 minutes by default, meant to fire only when a client hangs.
   */
  readonly clientTimeoutMs?: number | undefined
  /** Bound of the whole run; meant to fire only when something hangs. */
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

/**
 * Scenarios whose checks time the client (`sse-retry`: the reconnection delay against the server's `retry`,
 * at most 200 ms late). Their client runs alone: the suite's mock servers share one process, so a crowd of
 * other scenarios (authorization flows, each signing and verifying tokens) would delay the suite's own
 * record of the reconnection as much as the client.
 */
export const timedScenarios: ReadonlySet<string> = new Set(["sse-retry"])

/**
 * A Unix socket at `socketPath` that grants at most `permits` connections at a time, in arrival order, by
 * writing them a line; a permit returns when its connection closes (see gate.ts). Each launcher first
 * names its scenario on a line; a timed one takes every permit.
 */
const serveGate = (
  socketPath: string,
  permits: number
): Effect.Effect<{ readonly granted: () => number }, ProcessError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<
      { readonly server: Net.Server; readonly open: Set<Net.Socket>; readonly granted: () => number },
      ProcessError
    >((resume) => {
      const open = new Set<Net.Socket>()
      const waiting: Array<{ readonly socket: Net.Socket; readonly weight: number }> = []
      let free = permits
      let granted = 0
      // First come, first served: a timed launcher at the head waits for every permit, and those behind it wait too.
      const grant = () => {
        while (waiting.length > 0 && free >= waiting[0]!.weight) {
          const { socket, weight } = waiting.shift()!
          free -= weight
          granted++
          socket.once("close", () => {
            free += weight
            grant()
          })
          socket.write("go\n")
        }
      }
      const server = Net.createServer((socket) => {
        open.add(socket)
        // A launcher that goes away resets its end; `close` follows and settles the permit.
        socket.on("error", () => {})
        socket.once("close", () => {
          open.delete(socket)
          const queued = waiting.findIndex((w) => w.socket === socket)
          if (queued >= 0) waiting.splice(queued, 1)
        })
        let name = ""
        const onData = (chunk: Buffer) => {
          name += chunk.toString("utf8")
          const end = name.indexOf("\n")
          if (end === -1) return
          socket.off("data", onData)
          waiting.push({ socket, weight: timedScenarios.has(name.slice(0, end)) ? permits : 1 })
          grant()
        }
        socket.on("data", onData)
      })
      server.once("error", (error) => resume(Effect.fail(new ProcessError(`gate: ${error.message}`))))
      server.listen(socketPath, () => resume(Effect.succeed({ server, open, granted: () => granted })))
    }),
    ({ server, open }) =>
      Effect.sync(() => {
        for (const socket of open) socket.destroy()
        server.close()
      })
  )

/** `conformance client --command <gated client> --suite all ...`, bounded by `timeoutMs`. */
export const runClient = (options: ClientRunOptions): Effect.Effect<Run, ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const outDir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-conformance-client-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    // Beside the results, not under them: `-o` is read back as scenario folders only.
    const socketPath = path.join(outDir, "gate.sock")
    const resultsDir = path.join(outDir, "results")
    fs.mkdirSync(resultsDir)
    const gate = yield* serveGate(socketPath, options.concurrency ?? 3)
    const args = [
      "--import",
      loopbackPreload,
      suites[options.suite],
      "client",
      "--command",
      gatedCommand(socketPath),
      "--suite",
      "all",
      "--expected-failures",
      expectedFailures[options.suite],
      "--timeout",
      String(options.clientTimeoutMs ?? 240_000),
      "-o",
      resultsDir,
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
    const timeoutMs = options.timeoutMs ?? 280_000
    const exitCode = yield* exit.code.pipe(
      Effect.timeoutOption(`${timeoutMs} millis`),
      Effect.flatMap((code) =>
        code._tag === "Some"
          ? Effect.succeed(code.value)
          : Effect.fail(new ProcessError(`the suite did not finish within ${timeoutMs} ms; output:\n${output}`))
      )
    )
    const scenarios = readResults(resultsDir).toSorted((a, b) => a.name.localeCompare(b.name))
    const all = scenarios.flatMap((s) => s.checks)
    return {
      exitCode,
      clientsStarted: gate.granted(),
      output,
      scenarios,
      scenario: (name) => scenarios.find((s) => s.name === name),
      count: (status) => all.filter((c) => c.status === status).length
    }
  })

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
