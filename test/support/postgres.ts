/**
 * A real PostgreSQL for tests, from the Debian packages (`postgresql`, which
 * `.ci/run` installs when absent): `initdb` into a temporary directory,
 * `pg_ctl start` on 127.0.0.1 with a free port (its unix socket in that
 * directory too), stopped and deleted when the test's scope closes.
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the
 * `postgres` user the package creates (through `runuser`, else `su`).
 *
 * `unavailable` says, before any test runs, why PostgreSQL cannot be started
 * here (no binaries, no user to run it as); `describePostgres` uses it for a
 * visible, explained skip, and only then: a server that should start but does
 * not fails the suite.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

/** A running PostgreSQL. */
export interface Postgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string
  readonly port: number
  /** The directory of its data, log and unix socket. */
  readonly dir: string
  /** Creates a database of its own for a test and returns its URL. */
  readonly createDatabase: (name: string) => Effect.Effect<string, PostgresError>
}

export class PostgresError extends Error {
  override readonly name = "PostgresError"
}

interface Setup {
  readonly bin: string
  /** The user the server runs as when the tests run as root; undefined when they do not. */
  readonly user: { readonly name: string; readonly uid: number; readonly gid: number } | undefined
  /** How a command is run as that user. */
  readonly wrap: (file: string, args: ReadonlyArray<string>) => readonly [string, ReadonlyArray<string>]
}

const versionOf = (dir: string) => Number.parseInt(dir, 10) || 0

/** `EFFECT_MCP_PG_BIN` when set (the only place looked at), else the newest `/usr/lib/postgresql/<n>/bin`. */
const findBin = (): string | undefined => {
  const given = process.env["EFFECT_MCP_PG_BIN"]
  const candidates = given !== undefined ? [given] : []
  const base = "/usr/lib/postgresql"
  if (given === undefined && fs.existsSync(base)) {
    for (const version of fs.readdirSync(base).sort((a, b) => versionOf(b) - versionOf(a))) {
      candidates.push(path.join(base, version, "bin"))
    }
  }
  return candidates.find((dir) => fs.existsSync(path.join(dir, "initdb")) && fs.existsSync(path.join(dir, "pg_ctl")))
}

const userOf = (name: string): { readonly name: string; readonly uid: number; readonly gid: number } | undefined => {
  try {
    const line = fs
      .readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((entry) => entry.startsWith(`${name}:`))
    const fields = line?.split(":")
    return fields === undefined ? undefined : { name, uid: Number(fields[2]), gid: Number(fields[3]) }
  } catch {
    return undefined
  }
}

const which = (file: string): string | undefined =>
  ["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map((dir) => path.join(dir, file)).find((p) => fs.existsSync(p))

const probe = (): Setup | string => {
  const bin = findBin()
  if (bin === undefined) {
    const where = process.env["EFFECT_MCP_PG_BIN"] ?? "/usr/lib/postgresql/*/bin"
    return `no PostgreSQL server binaries (initdb, pg_ctl) in ${where} (install the Debian package postgresql; .ci/run does)`
  }
  if (process.getuid?.() !== 0) return { bin, user: undefined, wrap: (file, args) => [file, args] }
  const user = userOf("postgres")
  if (user === undefined)
    return "running as root and there is no postgres user to run PostgreSQL as (initdb refuses root)"
  const runuser = which("runuser")
  if (runuser !== undefined)
    return { bin, user, wrap: (file, args) => [runuser, ["-u", user.name, "--", file, ...args]] }
  const su = which("su")
  if (su === undefined) return "running as root and neither runuser nor su is there to run PostgreSQL as postgres"
  const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`
  return {
    bin,
    user,
    wrap: (file, args) => [su, [user.name, "-s", "/bin/sh", "-c", [file, ...args].map(quote).join(" ")]]
  }
}

const setup = probe()

/** Why PostgreSQL cannot be started on this machine, or undefined when it can. */
export const unavailable: string | undefined = typeof setup === "string" ? setup : undefined

const run = (file: string, args: ReadonlyArray<string>, timeoutMs = 60_000): Effect.Effect<string, PostgresError> =>
  Effect.callback<string, PostgresError>((resume) => {
    const child = execFile(file, args, { timeout: timeoutMs, cwd: "/" }, (error, stdout, stderr) =>
      resume(
        error === null
          ? Effect.succeed(stdout)
          : Effect.fail(new PostgresError(`${path.basename(file)} failed: ${error.message}\n${stdout}\n${stderr}`))
      )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const freePort = Effect.callback<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * Starts a PostgreSQL owned by the current scope (stopped, its directory
 * deleted, when the scope closes). Fails with the reason when it cannot.
 */
export const start: Effect.Effect<Postgres, PostgresError, Scope.Scope> = Effect.gen(function* () {
  if (typeof setup === "string") return yield* Effect.fail(new PostgresError(setup))
  const { bin, user, wrap } = setup
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-pg-"))
      if (user !== undefined) fs.chownSync(dir, user.uid, user.gid)
      return dir
    }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const data = path.join(dir, "data")
  const as = (tool: string, args: ReadonlyArray<string>) => {
    const [file, argv] = wrap(path.join(bin, tool), args)
    return run(file, argv)
  }
  yield* as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
  // The port is free when asked; another process may take it before the server binds, so try a few.
  let port = 0
  for (let attempt = 0; ; attempt++) {
    port = yield* freePort
    const options = `-h 127.0.0.1 -p ${port} -k ${dir} -F -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`
    const started = yield* Effect.result(
      as("pg_ctl", ["start", "-D", data, "-w", "-t", "60", "-l", path.join(dir, "log"), "-o", options])
    )
    if (started._tag === "Success") break
    if (attempt === 2) {
      const log = fs.existsSync(path.join(dir, "log")) ? fs.readFileSync(path.join(dir, "log"), "utf8") : ""
      return yield* Effect.fail(new PostgresError(`${started.failure.message}\n${log}`))
    }
  }
  yield* Effect.addFinalizer(() => Effect.ignore(as("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"])))
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  return {
    url: url("postgres"),
    port,
    dir,
    createDatabase: (name) =>
      Effect.as(
        run(path.join(bin, "psql"), [
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
          "-U",
          "postgres",
          "-d",
          "postgres",
          "-v",
          "ON_ERROR_STOP=1",
          "-c",
          `CREATE DATABASE "${name.replaceAll('"', "")}"`
        ]),
        url(name)
      )
  } satisfies Postgres
})

/**
 * A suite on one PostgreSQL started for it (before its tests, stopped after):
 * `body` registers the tests and reads the running server with `server()`.
 * Where PostgreSQL cannot be started the suite is skipped, its name saying why.
 */
export const describePostgres = (name: string, body: (server: () => Postgres) => void): void => {
  const title = unavailable === undefined ? name : `${name} (skipped: ${unavailable})`
  describe.skipIf(unavailable !== undefined)(title, () => {
    const scope = Effect.runSync(Scope.make())
    let running: Postgres | undefined
    beforeAll(async () => {
      running = await Effect.runPromise(Scope.provide(start, scope))
    }, 120_000)
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    body(() => {
      if (running === undefined) throw new PostgresError("PostgreSQL did not start (see beforeAll)")
      return running
    })
  })
}
