/**
 * The everything server (apps/everything-server) the demo's host talks to:
 * its bin (run with this process's Node and flags, since inside the
 * repository it is not on the PATH), and its HTTP instance, spawned here on
 * 127.0.0.1, port 0. Its stderr is kept as a `ServerLog` the demo can watch:
 * the server writes `started <id>` and `cancelled <id>` lines there for its
 * long-running tool.
 */
import { fileURLToPath } from "node:url"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

export class DemoError extends Data.TaggedError("DemoError")<{ readonly message: string; readonly cause?: unknown }> {}

/** The everything server's bin script, as `npx mcp-everything-server` runs it. */
export const everythingBin = fileURLToPath(
  new URL("bin/mcp-everything-server.js", import.meta.resolve("@effect-mcp/everything-server/package.json"))
)

/** What the server wrote to stderr, to wait on. */
export interface ServerLog {
  readonly write: (text: string) => Effect.Effect<void>
  /** The first match of `pattern` in the text written after `from` (an offset from `length`). */
  readonly waitFor: (
    pattern: RegExp,
    options?: { readonly from?: number; readonly timeout?: Duration.Input }
  ) => Effect.Effect<RegExpMatchArray, DemoError>
  readonly length: Effect.Effect<number>
}

export const makeServerLog: Effect.Effect<ServerLog> = Effect.map(SubscriptionRef.make(""), (text) => ({
  write: (chunk) => SubscriptionRef.update(text, (all) => all + chunk),
  length: Effect.map(SubscriptionRef.get(text), (all) => all.length),
  waitFor: (pattern, options) => {
    const matchIn = (all: string) => all.slice(options?.from ?? 0).match(pattern)
    return SubscriptionRef.changes(text).pipe(
      Stream.filter((all) => matchIn(all) !== null),
      Stream.runHead,
      Effect.timeoutOption(options?.timeout ?? Duration.seconds(5)),
      Effect.flatMap((found) => {
        const all = Option.getOrUndefined(Option.flatten(found))
        const match = all === undefined ? null : matchIn(all)
        return match === null
          ? Effect.fail(new DemoError({ message: `the server never wrote ${pattern} on stderr` }))
          : Effect.succeed(match)
      })
    )
  }
}))

/** Spawns `mcp-everything-server --http --port 0` and reads its URL from stderr; the scope stops it. */
export const spawnHttp: Effect.Effect<{ readonly url: string; readonly log: ServerLog }, DemoError, Scope.Scope> =
  Effect.gen(function* () {
    const log = yield* makeServerLog
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const server = yield* spawner
      .spawn(
        ChildProcess.make(process.execPath, [...process.execArgv, everythingBin, "--http", "--port", "0"], {
          stdin: "ignore"
        })
      )
      .pipe(Effect.mapError((cause) => new DemoError({ message: "spawning the HTTP server failed", cause })))
    yield* server.stderr.pipe(Stream.decodeText(), Stream.runForEach(log.write), Effect.ignore, Effect.forkScoped)
    // Starting a Node process can take a while on a busy machine.
    const url = (yield* log.waitFor(/listening on (http:\/\/\S+\/mcp)/, { timeout: Duration.seconds(15) }))[1]!
    return { url, log }
  }).pipe(Effect.provide(NodeServices.layer))
