/**
 * The everything server on Bun and Deno as a test's child process: test/runtimes/fixtures/server.ts (`WebHandler.make`
 * served by `Bun.serve` / `Deno.serve` on 127.0.0.1, port 0), each runtime the binary its npm package (a pinned
 * devDependency) installed, and on Node as its bin serves it (`NodeMcpServer`), for the tests that compare the
 * three. A runtime that is missing or does not start fails with its stderr: never a skip.
 */
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

/** Starts the fixture on `runtime` and waits for its URL; the scope stops it. */
export const start = (runtime: Runtime): Effect.Effect<Server, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const bin = Path.join(ServerProcess.root, "node_modules", ".bin", runtime.bin)
    if (!existsSync(bin)) {
      return yield* Effect.fail(
        new ServerProcess.ProcessError(`${bin} is missing: the devDependency "${runtime.name}" installs it (npm ci)`)
      )
    }
    const child = yield* ServerProcess.spawnChild(bin, runtime.args, {
      // No update check (CI has no network but the npm registry), no telemetry, no colours in a failure's stderr.
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" }
    })
    const listening = yield* child.waitForStderr(/^(bun|deno) \S+ listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m)
    assert.strictEqual(listening[1], runtime.name)
    return { ...child, url: listening[2]! }
  })

/** The everything server on `name`: Node's bin over HTTP (stateful), or the fixture on Bun or Deno. */
export const startOn = (
  name: "node" | "bun" | "deno"
): Effect.Effect<Server, ServerProcess.ProcessError, Scope.Scope> =>
  name === "node" ? ServerProcess.spawnHttp() : start(name === "bun" ? bun : deno)
