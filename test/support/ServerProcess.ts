/**
 * The everything server as a real child process (`node bin/mcp-everything-server.js`),
 * owned by the test's scope: closing the scope terminates it (SIGTERM, then
 * SIGKILL) and waits for its exit. Its stderr is kept for assertions.
 */
import { type ChildProcess, spawn } from "node:child_process"
import type { Stream } from "node:stream"
import * as Net from "node:net"
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

/**
 * What a wait listens to: `subscribe` calls its listener after each change (and once more when the
 * source ends) and returns the unsubscribe; `ended` says why nothing more will come, once that is so.
 */
export interface Signal {
  readonly subscribe: (listener: () => void) => () => void
  readonly ended?: () => string | undefined
}

/** A signal someone fires: `notify` after each change, `end` when no more will come. */
export interface Changes extends Signal {
  readonly notify: () => void
  readonly end: (reason: string) => void
  readonly ended: () => string | undefined
}

/** Makes a {@link Changes}. */
export const makeChanges = (): Changes => {
  const listeners = new Set<() => void>()
  let reason: string | undefined
  const notify = () => {
    for (const listener of [...listeners]) listener()
  }
  return {
    subscribe: (listener) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    ended: () => reason,
    notify,
    end: (why) => {
      if (reason !== undefined) return
      reason = why
      notify()
    }
  }
}

/** A growing text (a child's stderr, a captured stream): call it to read it; it is its own {@link Signal}. */
export interface Watched extends Signal {
  (): string
  readonly ended: () => string | undefined
}

/** A {@link Watched} text its writer appends to, and ends when the stream closes. */
export interface Recorder extends Watched {
  readonly append: (chunk: string) => void
  readonly end: (reason: string) => void
}

/** Makes an empty {@link Recorder}. */
export const makeRecorder = (): Recorder => {
  const changes = makeChanges()
  let text = ""
  return Object.assign(() => text, {
    subscribe: changes.subscribe,
    ended: changes.ended,
    append: (chunk: string) => {
      text += chunk
      changes.notify()
    },
    end: changes.end
  })
}

/** Records everything `stream` emits (decoded as UTF-8), ending when it ends or closes. */
export const record = (stream: Stream | null | undefined, name = "the stream"): Recorder => {
  const recorder = makeRecorder()
  const decoder = new TextDecoder()
  stream?.on("data", (chunk: Uint8Array | string) =>
    recorder.append(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }))
  )
  stream?.on("end", () => recorder.end(`${name} ended`))
  stream?.on("close", () => recorder.end(`${name} closed`))
  return recorder
}

export interface Child {
  readonly process: ChildProcess
  /** Everything written to stderr so far (a {@link Watched}: `waitFor(child.stderr, ...)` waits on its writes). */
  readonly stderr: Watched
  /** Waits (up to `timeoutMs`) until stderr has a line matching `pattern`; returns the match. */
  readonly waitForStderr: (pattern: RegExp, timeoutMs?: number) => Effect.Effect<RegExpMatchArray, ProcessError>
  /** The last 4,000 characters written to stdout (an HTTP server's logs, for a failing test to show). */
  readonly stdoutTail: () => string
}

export interface HttpServer extends Child {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** `http://127.0.0.1:<port>` */
  readonly base: string
}

/**
 * Waits until `read()` matches `pattern` and returns the match. It checks at once and then on each change
 * `on` reports (a {@link Watched} text is its own signal); it fails as soon as `on` ends without a match
 * (the child exited: its stderr is in the error). `timeoutMs` (default 60 s: a loaded 2-core machine can take
 * over 15 s to start a server from the sources) only fires when something is broken.
 */
export function waitFor(
  read: Watched,
  pattern: RegExp,
  timeoutMs?: number
): Effect.Effect<RegExpMatchArray, ProcessError>
export function waitFor(
  read: () => string,
  pattern: RegExp,
  timeoutMs: number | undefined,
  on: Signal
): Effect.Effect<RegExpMatchArray, ProcessError>
export function waitFor(
  read: () => string,
  pattern: RegExp,
  timeoutMs = 60_000,
  on: Signal = read as Watched
): Effect.Effect<RegExpMatchArray, ProcessError> {
  const found = Effect.callback<RegExpMatchArray, ProcessError>((resume) => {
    let settled = false
    let unsubscribe = () => {}
    const check = () => {
      if (settled) return
      const match = read().match(pattern)
      const reason = match === null ? on.ended?.() : undefined
      if (match === null && reason === undefined) return
      settled = true
      unsubscribe()
      resume(
        match !== null
          ? Effect.succeed(match)
          : Effect.fail(new ProcessError(`${reason} before anything matched ${pattern} in:\n${read()}`))
      )
    }
    check()
    if (settled) return
    unsubscribe = on.subscribe(check)
    return Effect.sync(() => unsubscribe())
  })
  return found.pipe(
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
      const stderr = makeRecorder()
      child.stderr?.setEncoding("utf8")
      child.stderr?.on("data", (chunk: string) => stderr.append(chunk))
      // Nothing reads stdout here; its end is kept (a failing program may print its error there), and
      // reading it keeps the child from blocking on a full pipe.
      let stdoutTail = ""
      child.stdout?.setEncoding("utf8")
      child.stdout?.on("data", (chunk: string) => {
        stdoutTail = (stdoutTail + chunk).slice(-4_000)
      })
      // "close" comes after the exit and after the last output chunk: a wait still pending then fails at once.
      child.on("close", (code, signal) =>
        stderr.end(
          `the child exited (code ${code}, signal ${signal})${stdoutTail === "" ? "" : `; its stdout ended with:\n${stdoutTail}`}`
        )
      )
      child.on("error", (error) => stderr.end(`the child failed to start (${error.message})`))
      const waitForStderr = (pattern: RegExp, timeoutMs?: number) => waitFor(stderr, pattern, timeoutMs)
      return { process: child, stderr, waitForStderr, stdoutTail: () => stdoutTail } satisfies Child
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

/**
 * A port on 127.0.0.1 that nothing listens on: one the OS just handed out, closed again. Connecting to it is
 * refused. (A fixed low port such as 1 is not safe for that here: the tests run as root in CI, where any
 * process may bind it.)
 */
export const closedPort: Effect.Effect<number> = Effect.callback<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
