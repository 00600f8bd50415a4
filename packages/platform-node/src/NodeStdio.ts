/**
 * Node wiring for the engine's stdio transports: the server side over this
 * process's stdin/stdout (`Stdio` from @effect/platform-node), the client side
 * spawning servers with Node's child processes (`ChildProcessSpawner` from
 * @effect/platform-node). Everything else lives in the engine's
 * `StdioTransport`, which knows no Node.
 */
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as PlatformNodeStdio from "@effect/platform-node/NodeStdio"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** Node's `ChildProcessSpawner` with the file system and path services it needs. */
const spawnerLayer = NodeChildProcessSpawner.layer.pipe(
  Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
)

/**
 * The server side over this process's stdin and stdout. The built-in loggers
 * write to stderr for everything built on it; `console.log` from user code
 * would still corrupt stdout.
 */
export const layerServer = (options?: StdioTransport.ServerOptions): Layer.Layer<Transport.Transport> =>
  StdioTransport.layerServer(options).pipe(Layer.provide(PlatformNodeStdio.layer))

export const makeServer = (
  options?: StdioTransport.ServerOptions
): Effect.Effect<StdioTransport.StdioServer, never, Scope.Scope> =>
  StdioTransport.makeServer(options).pipe(Effect.provide(PlatformNodeStdio.layer))

/** The client side: spawns the server as a Node child process; releasing the layer shuts it down. */
export const layerClient = (
  options: StdioTransport.ClientOptions
): Layer.Layer<Transport.Transport, Transport.TransportError> =>
  StdioTransport.layerClient(options).pipe(Layer.provide(spawnerLayer))

export const makeClient = (
  options: StdioTransport.ClientOptions
): Effect.Effect<StdioTransport.StdioClient, Transport.TransportError, Scope.Scope> =>
  StdioTransport.makeClient(options).pipe(Effect.provide(spawnerLayer))

/** A `stderr` handler that copies the child's stderr to this process's stderr (the tail is kept too). */
export const forwardStderr: StdioTransport.StderrHandler = (chunk) =>
  Effect.sync(() => {
    process.stderr.write(chunk)
  })
