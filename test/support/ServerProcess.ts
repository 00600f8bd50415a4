/**
 * The everything server as a real child process (`node bin/mcp-everything-server.js`),
 * owned by the test's scope: closing the scope terminates it (SIGTERM, then
 * SIGKILL) and waits for its exit. Its stderr is kept for assertions.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** The repository root. */
export const root = fileURLToPath(new URL("../../", import.meta.url))

/** The everything server's bin script, as `npx mcp-everything-server` runs it. */
export const everythingBin = fileURLToPath(
  new URL("../../apps/everything-server/bin/mcp-everything-server.js", import.meta.url)
)

/** The Node running the tests (the pinned Node 24). */
export const node = process.execPath

/**
 * Node flags that make a child resolve `@effect-mcp/*` (and the bins' `#main`) to the `.ts` sources.
 * Children that inherit the environment get them from NODE_OPTIONS (set in vitest.workspace.ts);
 * pass these where a spawner filters the environment (the SDK's StdioClientTransport does).
 */
export const sourceConditions: ReadonlyArray<string> = ["--conditions=@effect-mcp/source"]

export class ProcessError extends Error {
  override readonly name = "ProcessError"
}

export interface Child {
  readonly process: ChildProcess
  /** Everything written to stderr so far. */
  readonly stderr: () => string
  /** Waits (up to `timeoutMs`) until stderr has a line matching `pattern`; returns the match. */
  readonly waitForStderr: (pattern: RegExp, timeoutMs?: number) => Effect.Effect<RegExpMatchArray, ProcessError>
}

export interface HttpServer extends Child {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** `http://127.0.0.1:<port>` */
  readonly base: string
}

/** Waits (up to `timeoutMs`, default 15 s) until `read()` matches `pattern`; returns the match. */
export const waitFor = (
  read: () => string,
  pattern: RegExp,
  timeoutMs = 15_000
): Effect.Effect<RegExpMatchArray, ProcessError> => {
  const poll: Effect.Effect<RegExpMatchArray> = Effect.suspend(() => {
    const match = read().match(pattern)
    return match === null ? Effect.andThen(Effect.sleep("20 millis"), poll) : Effect.succeed(match)
  })
  return poll.pipe(
    Effect.timeoutOption(`${timeoutMs} millis`),
    Effect.flatMap((found) =>
      found._tag === "Some"
        ? Effect.succeed(found.value)
        : Effect.fail(new ProcessError(`nothing matched ${pattern} within ${timeoutMs} ms in:\n${read()}`))
    )
  )
}

const exited = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

/** Terminates `child` (SIGTERM, SIGKILL after 3 s) and waits for it to exit. */
export const terminate = (child: ChildProcess): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const done = yield* exited(child).pipe(Effect.timeoutOption("3 seconds"))
    if (done._tag === "None") {
      child.kill("SIGKILL")
      yield* exited(child).pipe(Effect.timeoutOption("3 seconds"))
    }
  })

/** Spawns `command args` in the test's scope, keeping its stderr; stdin and stdout are as `stdio` says. */
export const spawnChild = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly stdin?: "pipe" | "ignore"; readonly env?: NodeJS.ProcessEnv } = {}
): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(command, [...args], {
        cwd: root,
        env: options.env ?? process.env,
        stdio: [options.stdin ?? "ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr?.setEncoding("utf8")
      child.stderr?.on("data", (chunk: string) => {
        stderr += chunk
      })
      // Nothing reads stdout here; drain it so the child never blocks on a full pipe.
      child.stdout?.resume()
      const waitForStderr = (pattern: RegExp, timeoutMs?: number) => waitFor(() => stderr, pattern, timeoutMs)
      return { process: child, stderr: () => stderr, waitForStderr } satisfies Child
    }),
    (child) => terminate(child.process)
  )

/** Starts the everything server over HTTP on 127.0.0.1, port 0, with `flags` (`--stateless`, `--json`). */
export const spawnHttp = (flags: ReadonlyArray<string> = []): Effect.Effect<HttpServer, ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const child = yield* spawnChild(node, [everythingBin, "--http", "--port", "0", ...flags])
    const match = yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/)
    const base = match[1]!
    return { ...child, base, url: `${base}/mcp` }
  })
