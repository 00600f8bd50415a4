/**
 * The stdio client's `Launch` on Node: the server is spawned with
 * `node:child_process` and its pipes are handed to the transport directly.
 * The child's stdout is pushed into the transport from its `data` events and
 * frames are written to its stdin synchronously while nothing is queued,
 * where effect's `ChildProcessSpawner` would put a pass-through stream, a
 * reading fiber and a writing fiber between them (a scheduler turn or two per
 * frame). Like that spawner, the child gets a process group of its own on
 * POSIX, and signals go to the group.
 */
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import * as NodeChildProcess from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { directReader } from "./directReader.ts"
import { directWriter, handleFd } from "./directWriter.ts"

// A group of its own lets the shutdown signals reach the server's own children too.
const detached = process.platform !== "win32"

const ignore = () => {}

const envOf = (options: StdioTransport.ClientOptions): NodeJS.ProcessEnv | undefined => {
  const inherit = options.inheritEnv ?? true
  // Without `env` the child inherits everything.
  if (options.env === undefined && inherit) return undefined
  const env: NodeJS.ProcessEnv = inherit ? { ...process.env } : {}
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

const stderrOf = (options: StdioTransport.ClientOptions): NodeChildProcess.IOType => {
  const mode = options.stderr ?? "capture"
  return mode === "inherit" ? "inherit" : mode === "ignore" ? "ignore" : "pipe"
}

const hasExited = (child: NodeChildProcess.ChildProcess) => child.exitCode !== null || child.signalCode !== null

/** Signals the child's process group (POSIX); false when there is none left to signal. */
const signalGroup = (child: NodeChildProcess.ChildProcess, name: NodeJS.Signals): boolean => {
  if (!detached || child.pid === undefined) return false
  try {
    process.kill(-child.pid, name)
    return true
  } catch {
    return false
  }
}

/** Signals the child's group, or the child alone when it has none (or the group is gone); failures are ignored. */
const signal = (child: NodeChildProcess.ChildProcess, name: NodeJS.Signals): void => {
  if (!signalGroup(child, name) && !hasExited(child)) child.kill(name)
}

const spawn = (options: StdioTransport.ClientOptions, exited: Deferred.Deferred<StdioTransport.ProcessExit>) =>
  Effect.callback<NodeChildProcess.ChildProcess, Transport.TransportError>((resume) => {
    const failed = (cause: unknown) => resume(Effect.fail(StdioTransport.startFailed(options, cause)))
    let child: NodeChildProcess.ChildProcess
    try {
      child = NodeChildProcess.spawn(options.command, options.args ?? [], {
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        env: envOf(options),
        stdio: ["pipe", "pipe", stderrOf(options)],
        detached,
        windowsHide: true
      })
    } catch (cause) {
      // Invalid arguments (a NUL byte, say) throw instead of emitting `error`.
      failed(cause)
      return
    }
    // Later `error` events (a signal that could not be delivered) and pipe
    // errors while nobody listens (a direct write to an exited child, a write
    // left over from an aborted writer) must not go uncaught; the exit and the
    // transport's own listeners tell what happened.
    child.on("error", ignore)
    child.stdin?.on("error", ignore)
    child.stdout?.on("error", ignore)
    // Node discards what a child wrote to a pipe nobody listens to yet when the child exits (it resumes the
    // stream so the pipe can close); a server that dies at start does so before the stderr reader starts,
    // and its last words (why it died) would be lost. A `readable` listener keeps them buffered for the reader.
    child.stderr?.on("readable", ignore)
    child.once("exit", (code, signalName) => {
      Deferred.doneUnsafe(exited, Exit.succeed({ code, signal: signalName }))
      // A crashed server's own children would otherwise be left behind.
      if (code !== null && code !== 0) signalGroup(child, "SIGTERM")
    })
    const onError = (cause: Error) => {
      child.off("spawn", onSpawn)
      failed(cause)
    }
    const onSpawn = () => {
      child.off("error", onError)
      resume(Effect.succeed(child))
    }
    child.once("error", onError)
    child.once("spawn", onSpawn)
    return Effect.sync(() => {
      child.off("error", onError)
      child.off("spawn", onSpawn)
      signal(child, "SIGKILL")
    })
  })

/** Spawns the server with Node's child processes; the scope's close kills it if it is still running. */
export const launch: StdioTransport.Launch = (options) =>
  Effect.gen(function* () {
    const exited = Deferred.makeUnsafe<StdioTransport.ProcessExit>()
    const child = yield* Effect.acquireRelease(spawn(options, exited), (child) =>
      // The client's close ran the shutdown sequence before this: a server
      // still running is killed, and what it left behind in its group is ended.
      Effect.sync(() => {
        if (Deferred.isDoneUnsafe(exited)) signalGroup(child, "SIGTERM")
        else signal(child, "SIGKILL")
        // No longer read: a descendant holding it open must not keep this process alive.
        child.stdout?.destroy()
      })
    )
    const stdin = child.stdin as Writable
    const stdout = child.stdout as Readable
    const stderr: Stream.Stream<Uint8Array, unknown> =
      child.stderr === null
        ? Stream.empty
        : NodeStream.fromReadable<Uint8Array, unknown>({ evaluate: () => child.stderr as Readable, onError: (e) => e })

    const server: StdioTransport.ServerProcess = {
      pid: child.pid ?? 0,
      stdin: NodeSink.fromWritable<unknown, Uint8Array>({ evaluate: () => stdin, onError: (e) => e, endOnDone: true }),
      directStdin: directWriter(
        () => stdin,
        () => handleFd(stdin)
      ),
      stdout: directReader(() => stdout, "the server's stdout"),
      stderr,
      exit: Deferred.await(exited),
      kill: (name) => Effect.sync(() => signal(child, name))
    }
    return server
  })
