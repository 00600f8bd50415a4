/**
 * The everything server on Bun and Deno as a test's child process: test/runtimes/fixtures/server.ts (`WebHandler.make`
 * served by `Bun.serve` / `Deno.serve` on 127.0.0.1, port 0), each runtime the binary its npm package (a pinned
 * devDependency) installed, and on Node as its bin serves it (`NodeMcpServer`), for the tests that compare the
 * three. Also how each runtime runs any file of the repository from the sources (`argsFor`: stdio servers, client
 * programs) and `run`, a program run to its exit. A runtime that is missing or does not start fails with its
 * stderr: never a skip.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ServerProcess from "../support/ServerProcess.ts"

const fixture = "test/runtimes/fixtures/server.ts"
const condition = "--conditions=@effect-mcp/source"

/** A runtime that runs the fixture. */
export interface Runtime {
  readonly name: "bun" | "deno"
  /** The binary, as `npm ci` links it. */
  readonly bin: string
  readonly args: ReadonlyArray<string>
}

/** Bun, running the TypeScript fixture as it is. */
export const bun: Runtime = { name: "bun", bin: "bun", args: [condition, fixture] }

/** Deno, with only the loopback network: the modules it reads are the program's own, which needs no permission. */
export const deno: Runtime = {
  name: "deno",
  bin: "deno",
  args: ["run", "--no-prompt", "--allow-net=127.0.0.1", condition, fixture]
}

/** Both runtimes, for the tests that run on each. */
export const runtimes: ReadonlyArray<Runtime> = [bun, deno]

/** A running everything server: its `/mcp` URL and the child (its stderr). */
export interface Server extends ServerProcess.Child {
  readonly url: string
}

/** The runtime's binary as `npm ci` links it; fails, naming the devDependency, when it is missing. */
export const binary = (name: Runtime["name"]): Effect.Effect<string, ServerProcess.ProcessError> => {
  const bin = Path.join(ServerProcess.root, "node_modules", ".bin", name)
  return existsSync(bin)
    ? Effect.succeed(bin)
    : Effect.fail(new ServerProcess.ProcessError(`${bin} is missing: the devDependency "${name}" installs it (npm ci)`))
}

/** No update check (CI has no network but the npm registry), no telemetry, no colours in a failure's stderr. */
export const quiet: Readonly<Record<string, string>> = { DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" }

/**
 * The arguments that make `name` run `file` (relative to the repository root) from the sources: the source
 * condition, and for Deno `run` with only the `permissions` given (`--no-prompt`: a missing one fails at once).
 */
export const argsFor = (
  name: Runtime["name"],
  file: string,
  permissions: ReadonlyArray<string> = []
): ReadonlyArray<string> =>
  name === "bun" ? [condition, file] : ["run", "--no-prompt", ...permissions, condition, file]

/** Starts the fixture on `runtime` and waits for its URL; the scope stops it. */
export const start = (runtime: Runtime): Effect.Effect<Server, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const bin = yield* binary(runtime.name)
    const child = yield* ServerProcess.spawnChild(bin, runtime.args, { env: { ...process.env, ...quiet } })
    const listening = yield* child.waitForStderr(/^(bun|deno) \S+ listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m)
    assert.strictEqual(listening[1], runtime.name)
    return { ...child, url: listening[2]! }
  })

/** The everything server on `name`: Node's bin over HTTP (stateful), or the fixture on Bun or Deno. */
export const startOn = (
  name: "node" | "bun" | "deno"
): Effect.Effect<Server, ServerProcess.ProcessError, Scope.Scope> =>
  name === "node" ? ServerProcess.spawnHttp() : start(name === "bun" ? bun : deno)

/** How a program ended, and what it printed. */
export interface Ran {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `file` on `name` (see `argsFor`) with `args` until it exits, at most `timeoutMs` (then it fails, with what
 * the program printed so far); the scope kills a program still running.
 */
export const run = (
  name: Runtime["name"],
  file: string,
  options: { readonly args?: ReadonlyArray<string>; readonly permissions?: ReadonlyArray<string> } = {},
  timeoutMs = 60_000
): Effect.Effect<Ran, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const bin = yield* binary(name)
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(bin, [...argsFor(name, file, options.permissions), ...(options.args ?? [])], {
          cwd: ServerProcess.root,
          env: { ...process.env, ...quiet },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      ServerProcess.terminate
    )
    const stdout = ServerProcess.record(child.stdout, `${name}'s stdout`)
    const stderr = ServerProcess.record(child.stderr, `${name}'s stderr`)
    // "close" comes after the exit and after the last output chunk.
    const ended = Effect.callback<Ran, ServerProcess.ProcessError>((resume) => {
      child.once("close", (code, signal) =>
        resume(Effect.succeed({ code, signal, stdout: stdout(), stderr: stderr() }))
      )
      child.once("error", (error) =>
        resume(Effect.fail(new ServerProcess.ProcessError(`${bin} failed to start: ${error.message}`)))
      )
    })
    return yield* ended.pipe(
      Effect.timeoutOrElse({
        duration: `${timeoutMs} millis`,
        orElse: () =>
          Effect.fail(
            new ServerProcess.ProcessError(
              `${name} ${file} still ran after ${timeoutMs} ms; stdout:\n${stdout()}\nstderr:\n${stderr()}`
            )
          )
      })
    )
  })
