/**
 * The everything server (apps/everything-server) as a child process, and an
 * McpClient connected to it: over stdio (the client spawns the server and
 * speaks over its stdin/stdout) or over Streamable HTTP (the server listens on
 * 127.0.0.1, port 0, and prints its URL on stderr). Either way the server's
 * stderr is kept as a `ServerLog` the demo can watch: the server writes
 * `started <id>` and `cancelled <id>` lines there for its long-running tool.
 */
import { fileURLToPath } from "node:url"
import * as McpClient from "@effect-mcp/client/McpClient"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
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

/** A client connected to one everything server, with that server's stderr. */
export interface Connection {
  readonly transport: string
  readonly client: McpClient.McpClientShape
  readonly log: ServerLog
  /** The endpoint, for HTTP. */
  readonly url?: string | undefined
}

const clientOptions: McpClient.Options = { clientInfo: { name: "effect-mcp-demo", version: "0.1.0" } }

const connect = <E>(transport: Layer.Layer<Transport.Transport, E>) =>
  McpClient.connect(transport, clientOptions).pipe(
    Effect.mapError((cause) => new DemoError({ message: `connecting failed: ${String(cause)}`, cause }))
  )

/** Spawns `mcp-everything-server --stdio` and connects over its standard streams. */
export const overStdio: Effect.Effect<Connection, DemoError, Scope.Scope> = Effect.gen(function* () {
  const log = yield* makeServerLog
  const decoder = new TextDecoder()
  const client = yield* connect(
    NodeStdio.layerClient({
      command: process.execPath,
      // The server runs with this process's Node flags (in the repository: the source condition).
      args: [...process.execArgv, everythingBin, "--stdio"],
      stderr: (chunk) => log.write(decoder.decode(chunk, { stream: true }))
    })
  )
  return { transport: "stdio", client, log }
})

/** Spawns `mcp-everything-server --http --port 0`, reads its URL from stderr and connects over Streamable HTTP. */
export const overHttp: Effect.Effect<Connection, DemoError, Scope.Scope> = Effect.gen(function* () {
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
  const client = yield* connect(NodeHttpClient.layerStreamableHttp({ url }))
  return { transport: "Streamable HTTP", client, log, url }
}).pipe(Effect.provide(NodeServices.layer))
