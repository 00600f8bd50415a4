/**
 * `effect-mcp` run where a package cannot be loaded (withoutPackages.mjs makes
 * it unresolvable, as in an install without it): an optional peer left out is
 * a failure that says what to install, and a failure nothing expected (a
 * defect, inside the command, around it, or before the program is loaded)
 * still prints its one line with exit code 4, never a stack, never silence.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import { errorLine, runCli } from "./runCli.ts"

const withoutPackages = fileURLToPath(new URL("./withoutPackages.mjs", import.meta.url))

/** The environment of a run where `specifiers` (a package, or a path inside one) cannot be resolved. */
const without = (...specifiers: ReadonlyArray<string>) => ({
  // Keeps the inherited options (the source condition vitest passes on).
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${withoutPackages}`.trim(),
  WITHOUT_PACKAGES: specifiers.join(",")
})

/** A gateway config with no upstreams: these runs fail before any would start. */
const emptyConfig = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-missing-"))
    fs.writeFileSync(path.join(dir, "mcp.json"), JSON.stringify({ mcpServers: {} }))
    return { dir, file: path.join(dir, "mcp.json") }
  }),
  ({ dir }) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const TIMEOUT = 120_000

describe.concurrent("effect-mcp without a package it needs", () => {
  it.live(
    "3: gateway --cluster postgres:// without @effect/sql-pg says to install it, and not the URL",
    () =>
      Effect.gen(function* () {
        const { file } = yield* emptyConfig
        const [dbPort, runnerPort] = [yield* ServerProcess.closedPort, yield* ServerProcess.closedPort]
        const url = `postgres://mcp:s3cret-password@127.0.0.1:${dbPort}/x`
        const args = ["gateway", "--config", file, "--port", "0", "--cluster", url, "--runner-port", String(runnerPort)]
        const ran = yield* runCli(args, { env: without("@effect/sql-pg") })
        assert.strictEqual(ran.code, 3, ran.stderr)
        assert.strictEqual(
          errorLine(ran),
          `cannot serve as a cluster runner on 127.0.0.1:0 (runner port ${runnerPort}): ` +
            "PostgreSQL needs the optional package @effect/sql-pg: npm install @effect/sql-pg"
        )
        assert.notInclude(ran.stderr, "s3cret")
      }),
    TIMEOUT
  )

  it.live(
    "4: a defect in the command (gateway --cluster without @effect-mcp/cluster) is one line, not silence",
    () =>
      Effect.gen(function* () {
        const { file } = yield* emptyConfig
        const runnerPort = yield* ServerProcess.closedPort
        const args = ["gateway", "--config", file, "--port", "0", "--cluster", "sqlite::memory:"]
        const ran = yield* runCli([...args, "--runner-port", String(runnerPort)], {
          env: without("@effect-mcp/cluster")
        })
        assert.strictEqual(ran.code, 4, ran.stderr)
        assert.match(errorLine(ran), /^Cannot find package '@effect-mcp\/cluster' imported from /)
      }),
    TIMEOUT
  )

  it.live(
    "4: a defect around the command (its telemetry's exporters cannot be loaded) is one line, not silence",
    () =>
      Effect.gen(function* () {
        // An OTLP endpoint makes the CLI load the exporters before the command runs (nothing is sent: --version).
        const ran = yield* runCli(["--version"], {
          env: { ...without("effect/observability"), OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }
        })
        assert.strictEqual(ran.code, 4, ran.stderr)
        assert.match(errorLine(ran), /^Cannot find package 'effect' imported from /)
      }),
    TIMEOUT
  )

  it.live(
    "4: a program that cannot be loaded at all (no @effect-mcp/client) is one line, not Node's stack trace",
    () =>
      Effect.gen(function* () {
        const ran = yield* runCli(["--version"], { env: without("@effect-mcp/client") })
        assert.strictEqual(ran.code, 4, ran.stderr)
        assert.match(errorLine(ran), /^Cannot find package '@effect-mcp\/client' imported from /)
      }),
    TIMEOUT
  )
})
