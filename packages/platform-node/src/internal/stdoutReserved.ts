/**
 * Keeps this process's stdout for the protocol: while it is held, the console
 * methods that print to stdout (`console.log`, `console.info`, ..., and the
 * default loggers, which print through them) print to stderr instead.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import type * as Scope from "effect/Scope"

/** The console methods that write to stdout. */
const stdoutMethods = [
  "log",
  "info",
  "debug",
  "dir",
  "dirxml",
  "table",
  "group",
  "groupCollapsed",
  "groupEnd",
  "count",
  "countReset",
  "time",
  "timeEnd",
  "timeLog"
] as const

type ConsoleMethods = Pick<Console, (typeof stdoutMethods)[number]>

// Holders of the redirect (servers over this process's stdio); the console is restored when the last lets go.
let holders = 0
let saved: ConsoleMethods | undefined

const acquire = Effect.sync(() => {
  if (holders++ > 0) return
  const target = console as unknown as Record<string, unknown>
  const toStderr = new console.Console({ stdout: process.stderr, stderr: process.stderr }) as unknown as Record<
    string,
    unknown
  >
  const previous: Record<string, unknown> = {}
  for (const method of stdoutMethods) {
    previous[method] = target[method]
    target[method] = toStderr[method]
  }
  saved = previous as unknown as ConsoleMethods
})

const release = Effect.sync(() => {
  if (--holders > 0 || saved === undefined) return
  Object.assign(console, saved)
  saved = undefined
})

/**
 * While a server speaks over stdout, console output goes to stderr: a stray
 * `console.log` would otherwise corrupt the stream (only MCP messages may
 * reach stdout). Restored when the scope closes.
 */
export const consoleToStderr: Effect.Effect<void, never, Scope.Scope> = Effect.acquireRelease(acquire, () => release)

/**
 * Runs a stdio server's whole program (its Layer's build included) with stdout
 * kept for the protocol: the built-in loggers write to stderr, and the console
 * is routed to stderr from before the Layer builds. When the program fails,
 * the console stays routed: the runner reports the failure next
 * (`NodeRuntime.runMain` logs it with the default logger, which prints through
 * `console.log`), outside this program, and the process is ending anyway.
 */
export const reserveStdout = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    acquire,
    () => Effect.provideService(program, Logger.LogToStderr, true),
    (_, exit) => (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? Effect.void : release)
  )
