/**
 * Node wiring for the engine's stdio transports: the server side over this
 * process's stdin/stdout (`Stdio` from @effect/platform-node), the client side
 * spawning servers with Node's child processes (`ChildProcessSpawner` from
 * @effect/platform-node). Everything else lives in the engine's
 * `StdioTransport`, which knows no Node.
 */
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as PlatformNodeStdio from "@effect/platform-node/NodeStdio"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/**
 * Node's `ChildProcessSpawner` with the file system and path services it
 * needs. Loaded on first use: a server process (this module serves both
 * sides) never spawns, and those modules are a noticeable part of its start.
 */
const spawnerLayer = Layer.unwrap(
  Effect.promise(async () => {
    const [spawner, fileSystem, path] = await Promise.all([
      import("@effect/platform-node/NodeChildProcessSpawner"),
      import("@effect/platform-node/NodeFileSystem"),
      import("@effect/platform-node/NodePath")
    ])
    return spawner.layer.pipe(Layer.provide(Layer.merge(fileSystem.layer, path.layer)))
  })
)

/**
 * `process.stdout` written to directly while nothing is queued (the `Stdio`
 * sink still owns it: write errors and the end go through the sink).
 */
const directStdout: StdioTransport.DirectWriter = {
  ready: () => {
    const stdout = process.stdout
    return stdout.writable && !stdout.writableNeedDrain
  },
  write: (chunk) => {
    process.stdout.write(chunk)
  }
}

/** `process.stdin`'s bytes pushed to the transport as they arrive (no fiber in between). */
const directStdin: StdioTransport.DirectReader = {
  start: (handlers) => {
    const stdin = process.stdin
    let ended = false
    let paused = false
    const onData = (chunk: Uint8Array) => handlers.chunk(chunk)
    const onEnd = () => {
      ended = true
      handlers.end()
    }
    const onError = (error: Error) => handlers.fail(error)
    const onClose = () => {
      if (!ended) handlers.fail(new Error("stdin closed before its end"))
    }
    stdin.on("data", onData)
    stdin.on("end", onEnd)
    stdin.on("error", onError)
    stdin.on("close", onClose)
    return {
      pause: () => {
        if (paused) return
        paused = true
        stdin.pause()
      },
      resume: () => {
        if (!paused) return
        paused = false
        stdin.resume()
      },
      stop: () => {
        stdin.off("data", onData)
        stdin.off("end", onEnd)
        stdin.off("error", onError)
        stdin.off("close", onClose)
        stdin.pause()
      }
    }
  }
}

const serverStdio = Layer.mergeAll(
  PlatformNodeStdio.layer,
  Layer.succeed(StdioTransport.DirectStdout, directStdout),
  Layer.succeed(StdioTransport.DirectStdin, directStdin)
)

/**
 * The server side over this process's stdin and stdout. The built-in loggers
 * write to stderr for everything built on it; `console.log` from user code
 * would still corrupt stdout.
 */
export const layerServer = (options?: StdioTransport.ServerOptions): Layer.Layer<Transport.Transport> =>
  StdioTransport.layerServer(options).pipe(Layer.provide(serverStdio))

export const makeServer = (
  options?: StdioTransport.ServerOptions
): Effect.Effect<StdioTransport.StdioServer, never, Scope.Scope> =>
  StdioTransport.makeServer(options).pipe(Effect.provide(serverStdio))

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
