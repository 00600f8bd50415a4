/**
 * The child-process side of the stdio client: building the command, learning
 * how the child ended, and signalling it. Written against effect's abstract
 * `ChildProcessSpawner`, so no platform module is imported here.
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as ChildProcess from "effect/process/ChildProcess"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import type * as StdioTransport from "../StdioTransport.ts"

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

/** Watches the child for its exit in a fiber of the current scope. */
export const watchExit = (
  handle: ChildProcessSpawner.ChildProcessHandle
): Effect.Effect<Deferred.Deferred<StdioTransport.ProcessExit>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const exited = Deferred.makeUnsafe<StdioTransport.ProcessExit>()
    yield* handle.exitCode.pipe(
      Effect.match({
        onSuccess: (code): StdioTransport.ProcessExit => ({ code, signal: null }),
        onFailure: (error): StdioTransport.ProcessExit => ({ code: null, signal: signalOf(error) })
      }),
      Effect.flatMap((exit) => Deferred.succeed(exited, exit)),
      Effect.forkScoped
    )
    return exited
  })

/** Waits up to `grace` for the exit; true when it came. */
export const exitWithin = (
  exited: Deferred.Deferred<StdioTransport.ProcessExit>,
  grace: Duration.Input
): Effect.Effect<boolean> => Effect.map(Effect.timeoutOption(Deferred.await(exited), grace), Option.isSome)

/**
 * Sends `signal` (to the child's process group when it has one) and waits up
 * to `grace` for the exit. The spawner's own kill waits for the exit without
 * a bound, so the bound here comes from the Clock.
 */
export const signalAndWait = (
  handle: ChildProcessSpawner.ChildProcessHandle,
  exited: Deferred.Deferred<StdioTransport.ProcessExit>,
  signal: ChildProcess.Signal,
  grace: Duration.Input
): Effect.Effect<boolean> =>
  Effect.map(
    Effect.timeoutOption(
      // A failed kill (the child exited meanwhile) still ends in the exit.
      Effect.andThen(Effect.ignore(handle.kill({ killSignal: signal })), Deferred.await(exited)),
      grace
    ),
    Option.isSome
  )
