/**
 * The stdio client's generic `Launch`: building the command, spawning it with
 * effect's abstract `ChildProcessSpawner`, learning how the child ended.
 * No platform module is imported here.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as StdioTransport from "../StdioTransport.ts"
import * as StdioStart from "./stdioStart.ts"

export const commandOf = (options: StdioTransport.ClientOptions): ChildProcess.StandardCommand => {
  const stderr = options.stderr ?? "capture"
  const inherit = options.inheritEnv ?? true
  return ChildProcess.make(options.command, options.args ?? [], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    // Without `env` the child inherits everything; `extendEnv: false` with an
    // empty `env` gives it nothing.
    ...(options.env === undefined && inherit ? {} : { env: { ...options.env }, extendEnv: inherit }),
    stdin: { stream: "pipe", endOnDone: true },
    stdout: "pipe",
    stderr: stderr === "inherit" ? "inherit" : stderr === "ignore" ? "ignore" : "pipe"
  })
}

// The spawner reports a signal death as a failed `exitCode` whose cause says
// "... due to receipt of signal: 'SIGKILL'"; the abstract API has no field for it.
const signalPattern = /signal:? '?(SIG[A-Z0-9]+)/

const signalOf = (error: unknown): string | null => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && Predicate.isObject(current); depth++) {
    const message = (current as { readonly message?: unknown }).message
    if (typeof message === "string") {
      const match = signalPattern.exec(message)
      if (match !== null) return match[1]!
    }
    current = (current as { readonly cause?: unknown }).cause
  }
  return null
}

/**
 * The `Launch` over effect's `ChildProcessSpawner`: the handle's streams and
 * sink as they are, the exit watched by a fiber of the scope.
 */
export const launcher =
  (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]): StdioTransport.Launch =>
  (options) =>
    Effect.gen(function* () {
      const handle = yield* spawner
        .spawn(commandOf(options))
        .pipe(Effect.mapError((cause) => StdioStart.startFailed(options, cause)))
      const exited = Deferred.makeUnsafe<StdioTransport.ProcessExit>()
      yield* handle.exitCode.pipe(
        Effect.match({
          onSuccess: (code): StdioTransport.ProcessExit => ({ code, signal: null }),
          onFailure: (error): StdioTransport.ProcessExit => ({ code: null, signal: signalOf(error) })
        }),
        Effect.flatMap((exit) => Deferred.succeed(exited, exit)),
        Effect.forkScoped
      )
      return {
        pid: handle.pid,
        stdin: handle.stdin,
        stdout: handle.stdout,
        stderr: handle.stderr,
        exit: Deferred.await(exited),
        // The spawner's kill waits for the exit without a bound; the caller bounds it.
        kill: (signal) => handle.kill({ killSignal: signal })
      }
    })

/** The generic `Launch` over the `ChildProcessSpawner` in context. */
export const spawnerLauncher: Effect.Effect<StdioTransport.Launch, never, ChildProcessSpawner.ChildProcessSpawner> =
  Effect.map(Effect.service(ChildProcessSpawner.ChildProcessSpawner), launcher)
