/**
 * Node wiring for the engine's stdio transports: the server side over this
 * process's stdin/stdout (a `Stdio` over @effect/platform-node's sinks, with
 * direct access to both streams), the client side spawning servers with
 * `node:child_process` and handing their pipes to the engine directly.
 * Everything else lives in the engine's `StdioTransport`, which knows no Node.
 */
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PlatformError from "effect/PlatformError"
import type * as Scope from "effect/Scope"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import { directReader } from "./internal/directReader.ts"
import { directWriter } from "./internal/directWriter.ts"
import { consoleToStderr } from "./internal/stdoutReserved.ts"

/**
 * Spawns servers with Node's child processes, their pipes wired straight to
 * the transport. Loaded on first use: a server process (this module serves
 * both sides) never spawns.
 */
const launch: StdioTransport.Launch = (options) =>
  Effect.flatMap(
    Effect.promise(() => import("./internal/launch.ts")),
    (module) => module.launch(options)
  )

/**
 * `process.stdout` written to directly while nothing is queued, one `write(2)`
 * on descriptor 1 per line (the `Stdio` sink still owns the stream: write
 * errors and the end go through the sink).
 */
const directStdout = directWriter(
  () => process.stdout,
  () => process.stdout.fd
)

/** `process.stdin`'s bytes pushed to the transport as they arrive (no fiber in between). */
const directStdin = directReader(() => process.stdin, "stdin")

const stdioError = (method: string) => (cause: unknown) =>
  PlatformError.systemError({ module: "Stdio", method, _tag: "Unknown", cause })

/**
 * `Stdio` as @effect/platform-node builds it, except that stdin's stream
 * module loads on first use: the server reads stdin directly (`serverStreams`), and
 * that module and the ones it pulls in are a noticeable part of a start.
 */
const nodeStdio = Stdio.make({
  args: Effect.sync(() => process.argv.slice(2)),
  stdinIsTerminal: Effect.sync(() => process.stdin.isTTY === true),
  stdoutIsTerminal: Effect.sync(() => process.stdout.isTTY === true),
  stderrIsTerminal: Effect.sync(() => process.stderr.isTTY === true),
  stdout: (options) =>
    NodeSink.fromWritable({
      evaluate: () => process.stdout,
      onError: stdioError("stdout"),
      endOnDone: options?.endOnDone ?? false
    }),
  stderr: (options) =>
    NodeSink.fromWritable({
      evaluate: () => process.stderr,
      onError: stdioError("stderr"),
      endOnDone: options?.endOnDone ?? false
    }),
  stdin: Stream.unwrap(
    Effect.map(
      Effect.promise(() => import("@effect/platform-node/NodeStream")),
      (NodeStream) =>
        NodeStream.fromReadable({ evaluate: () => process.stdin, onError: stdioError("stdin"), closeOnDone: false })
    )
  )
})

const serverStdio = Layer.succeed(Stdio.Stdio, nodeStdio)

/** This process's stdin and stdout, for the transport to use directly. */
const serverStreams: StdioTransport.ServerStreams = { stdin: directStdin, stdout: directStdout }

/**
 * The server side over this process's stdin and stdout. The built-in loggers
 * write to stderr for everything built on it, and while it is open `console`
 * output (`console.log`, `console.info`, ...) goes to stderr too, so nothing
 * but MCP messages reaches stdout; the console is restored when it closes.
 *
 * @example
 * ```ts
 * import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
 * import * as Effect from "effect/Effect"
 *
 * const Server = McpServer.layer({ name: "empty", version: "1.0.0" })
 *
 * // `NodeMcpServer.serveStdio(Server)` does the same in one call.
 * NodeRuntime.runMain(McpServer.serve.pipe(Effect.provide(NodeStdio.layerServer()), Effect.provide(Server)))
 * ```
 */
export const layerServer = (options?: StdioTransport.ServerOptions): Layer.Layer<Transport.Transport> =>
  StdioTransport.layerServerWith(serverStreams, options).pipe(
    Layer.provide(serverStdio),
    Layer.provideMerge(Layer.effectDiscard(consoleToStderr))
  )

/** The server side over this process's stdin and stdout, as a scoped Effect (see `layerServer`). */
export const makeServer = (
  options?: StdioTransport.ServerOptions
): Effect.Effect<StdioTransport.StdioServer, never, Scope.Scope> =>
  Effect.andThen(
    consoleToStderr,
    StdioTransport.makeServerWith(serverStreams, options).pipe(Effect.provide(serverStdio))
  )

/**
 * The client side: spawns the server as a Node child process; releasing the layer shuts it down.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
 * import * as Layer from "effect/Layer"
 *
 * export const Client = McpClient.layer({ clientInfo: { name: "my-host", version: "1.0.0" } }).pipe(
 *   Layer.provide(
 *     NodeStdio.layerClient({
 *       command: "npx",
 *       args: ["-y", "@modelcontextprotocol/server-everything"],
 *       env: { LOG_LEVEL: "debug" },
 *       stderr: NodeStdio.forwardStderr // the tail is kept for error reports as well
 *     })
 *   )
 * )
 * ```
 */
export const layerClient = (
  options: StdioTransport.ClientOptions
): Layer.Layer<Transport.Transport, Transport.TransportError> => StdioTransport.layerClientWith(launch, options)

/** Spawns the server as a Node child process, as a scoped Effect (see `layerClient`). */
export const makeClient = (
  options: StdioTransport.ClientOptions
): Effect.Effect<StdioTransport.StdioClient, Transport.TransportError, Scope.Scope> =>
  StdioTransport.makeClientWith(launch, options)

/** A `stderr` handler that copies the child's stderr to this process's stderr (the tail is kept too). */
export const forwardStderr: StdioTransport.StderrHandler = (chunk) =>
  Effect.sync(() => {
    process.stderr.write(chunk)
  })
