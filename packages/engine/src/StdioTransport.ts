/**
 * The stdio transport: newline-delimited JSON-RPC over a process's standard
 * streams. Written against effect's abstract services only, so the engine
 * stays free of platform imports; `@effect-mcp/platform-node` supplies them.
 *
 * - The server side reads frames from stdin and writes them to stdout through
 *   the `Stdio` service. Only protocol messages reach stdout (its layer also
 *   routes the built-in loggers to stderr); end of stdin ends `incoming`, which
 *   ends the session cleanly.
 * - The client side starts the server with a `Launch` (a platform's own, or
 *   the generic one over effect's `ChildProcessSpawner`) and speaks over the
 *   child's stdin/stdout. Its stderr is captured (a bounded tail is
 *   kept for error reports), handed to a callback, inherited or ignored. Closing
 *   follows the MCP shutdown order: close the child's stdin, wait, SIGTERM,
 *   wait, SIGKILL; every wait is a Clock sleep. A child that exits on its own
 *   fails `incoming` with a `TransportError` whose cause is `ServerExited`
 *   (exit code, signal, stderr tail), unless it closed its stdout and exited
 *   with code 0, which is an orderly end.
 *
 * Lines are split by the protocol's linear-time NDJSON splitter, so a 10 MiB
 * frame costs one pass; frames longer than `maxFrameBytes` are reported as
 * decode failures (answered with -32600) and never buffered whole.
 *
 * A platform that can write to stdout synchronously, or push stdin's bytes,
 * hands those streams to `makeServerWith`/`layerServerWith` (`ServerStreams`);
 * the server then writes a frame straight out when nothing is queued before
 * it, and reads without a fiber between stdin and the session. A platform's
 * `Launch` does the same for the client with the child's pipes (`ServerProcess`).
 *
 * Both sides have the Transport contract's fast paths: `trySend` (a frame
 * written or queued as a plain call while the outgoing buffer has room, so a
 * Peer sends without a fiber of its own) and, over a pushed `DirectReader`,
 * `attach` (frames handed to the Peer as they are decoded, with no reader
 * fiber resumed per frame). Per sequential call they save the client about a
 * fifth of its CPU (W2).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Sink from "effect/Sink"
import type * as Scope from "effect/Scope"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as Inbox from "./internal/stdioInbox.ts"
import * as Outbox from "./internal/stdioOutbox.ts"
import * as StdioStart from "./internal/stdioStart.ts"
import { Tail } from "./internal/stdioTail.ts"
import { failureOf, once, withFastPaths } from "./internal/stdioWiring.ts"
import * as McpMetrics from "./McpMetrics.ts"
import { type ProcessExit, ServerExited } from "./StdioExit.ts"
import * as Transport from "./Transport.ts"

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/** Settings of both sides of the stdio transport. */
export interface CommonOptions {
  /** Longest frame accepted in either direction, in UTF-8 bytes. Default 64 MiB. */
  readonly maxFrameBytes?: number | undefined
  /** Frames buffered for writing before `send` suspends. Default 256. */
  readonly outgoingCapacity?: number | undefined
}

/** Settings of the server side (this process's stdin and stdout). */
export interface ServerOptions extends CommonOptions {
  /** How long closing waits for buffered frames to reach stdout before dropping them. Default 5 seconds. */
  readonly flushTimeout?: Duration.Input | undefined
}

/** Receives every chunk the child writes to stderr (the tail is kept as well). */
export type StderrHandler = (chunk: Uint8Array) => Effect.Effect<void>

/**
 * What happens to the child's stderr: `"capture"` keeps only the tail;
 * a handler also receives every chunk (to forward or log it); `"inherit"`
 * passes the parent's stderr to the child (no tail); `"ignore"` discards it.
 */
export type StderrMode = "capture" | "inherit" | "ignore" | StderrHandler

/** How a spawned server is shut down when the client closes: close stdin, then SIGTERM, then SIGKILL. */
export interface ShutdownOptions {
  /** After stdin is closed: how long the server has to exit before SIGTERM. Default 2 seconds. */
  readonly exitGrace?: Duration.Input | undefined
  /** After SIGTERM: how long before SIGKILL. Default 2 seconds. */
  readonly termGrace?: Duration.Input | undefined
  /** After SIGKILL: how long to wait for the exit before giving up on it. Default 2 seconds. */
  readonly killGrace?: Duration.Input | undefined
}

/** How to spawn the server and what to do with its stderr. */
export interface ClientOptions extends CommonOptions {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Variables for the child, on top of this process's environment unless `inheritEnv` is false. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Whether the child also gets this process's environment. Default true. */
  readonly inheritEnv?: boolean | undefined
  readonly cwd?: string | undefined
  /** Default `"capture"`. */
  readonly stderr?: StderrMode | undefined
  /** Bytes of stderr kept for error reports. Default 16 KiB. */
  readonly stderrTailBytes?: number | undefined
  readonly shutdown?: ShutdownOptions | undefined
}

const defaults = {
  maxFrameBytes: 64 * 1024 * 1024,
  outgoingCapacity: 256,
  // Decoded frames waiting for the reader before reading pauses.
  incomingCapacity: 1024,
  flushTimeout: Duration.seconds(5),
  grace: Duration.seconds(2),
  stderrTailBytes: 16 * 1024
}

// ---------------------------------------------------------------------------
// Errors and handles
// ---------------------------------------------------------------------------

// How a server process ended, or failed to start: a concept of its own (StdioExit.ts), exported from here too.
export { type ProcessExit, ServerExited, serverExited, startFailed } from "./StdioExit.ts"

/** The server side: the transport plus a way to close it (flush, end stdout, stop reading stdin). */
export interface StdioServer extends Transport.TransportShape {
  readonly close: Effect.Effect<void>
}

/** The client side: the transport plus the child it runs. */
export interface StdioClient extends Transport.TransportShape {
  readonly pid: number
  /** Runs the shutdown sequence (once; later calls wait for it). The scope's close does the same. */
  readonly close: Effect.Effect<void>
  /** Waits for the child to exit. */
  readonly exit: Effect.Effect<ProcessExit>
  /** The stderr tail so far (empty unless stderr is piped). */
  readonly stderrTail: Effect.Effect<string>
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

/** Synchronous writes to the stream behind `Stdio.stdout` (whose sink still owns it: errors, end). */
export type DirectWriter = Outbox.DirectWriter

/** A push source of bytes: `start` reports chunks, the end or a failure until stopped. */
export type DirectReader = Inbox.DirectReader

/**
 * A platform's faster access to the streams behind the current `Stdio`,
 * handed to `makeServerWith` explicitly. Each is optional: without one, the
 * transport goes through `Stdio` alone.
 */
export interface ServerStreams {
  /** stdin's bytes pushed as they arrive (then `Stdio.stdin` is not read): no fiber between stdin and the session. */
  readonly stdin?: DirectReader | undefined
  /** stdout written synchronously while nothing is queued before a frame (the `Stdio.stdout` sink still owns it). */
  readonly stdout?: DirectWriter | undefined
}

/** The server side over the current `Stdio`; closing the scope closes it. */
export const makeServer = (options?: ServerOptions): Effect.Effect<StdioServer, never, Stdio.Stdio | Scope.Scope> =>
  makeServerWith({}, options)

/** The server side over the current `Stdio`, with a platform's direct access to its streams. */
export const makeServerWith = Effect.fnUntraced(function* (
  streams: ServerStreams,
  options?: ServerOptions
): Effect.fn.Return<StdioServer, never, Stdio.Stdio | Scope.Scope> {
  const stdio = yield* Stdio.Stdio
  const maxFrameBytes = options?.maxFrameBytes ?? defaults.maxFrameBytes
  // One session over this process's stdio, open as long as the transport.
  const meter = yield* McpMetrics.currentTransportMeter("stdio")
  if (meter !== undefined) {
    meter.sessions(1)
    yield* Effect.addFinalizer(() => Effect.sync(() => meter.sessions(-1)))
  }
  const outbox = yield* Outbox.make(
    stdio.stdout({ endOnDone: true }),
    {
      capacity: options?.outgoingCapacity ?? defaults.outgoingCapacity,
      maxFrameBytes,
      target: "stdout",
      meter
    },
    streams.stdout
  )

  const inbox = new Inbox.Inbox(streams.stdin ?? stdio.stdin, {
    maxFrameBytes,
    capacity: defaults.incomingCapacity,
    scope: yield* Effect.scope,
    failureMessage: "reading stdin failed",
    meter
  })
  const incoming = inbox.stream.pipe(
    // Whoever was on the other end of stdin is gone: nothing sent now would be read.
    Stream.ensuring(Effect.sync(() => outbox.refuse(Outbox.closedError("stdin has ended"))))
  )

  const close = once(
    Effect.gen(function* () {
      outbox.refuse(Outbox.closedError("the stdio transport is closed"))
      yield* inbox.halt()
      yield* Outbox.drainWithin(outbox, options?.flushTimeout ?? defaults.flushTimeout)
    })
  )
  yield* Effect.addFinalizer(() => close)
  // Pushed frames end as `incoming` does, refusing later sends first.
  const attach = (receiver: Transport.Receiver): boolean =>
    inbox.attach(receiver, (error) => {
      outbox.refuse(Outbox.closedError("stdin has ended"))
      receiver.end(error)
    })
  return withFastPaths<StdioServer>({ incoming, send: (frame) => outbox.offer(frame), close }, outbox, attach)
})

/**
 * Provides `Transport` over the current `Stdio`, and routes the built-in
 * loggers to stderr for everything built on it, so stdout carries protocol
 * messages only.
 */
export const layerServer = (options?: ServerOptions): Layer.Layer<Transport.Transport, never, Stdio.Stdio> =>
  layerServerWith({}, options)

/** `layerServer` with a platform's direct access to the streams (see `ServerStreams`). */
export const layerServerWith = (
  streams: ServerStreams,
  options?: ServerOptions
): Layer.Layer<Transport.Transport, never, Stdio.Stdio> =>
  Layer.merge(
    Layer.effect(
      Transport.Transport,
      Effect.map(makeServerWith(streams, options), (server) => Transport.Transport.of(server))
    ),
    Layer.succeed(Logger.LogToStderr, true)
  )

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

/** The signals the shutdown sequence sends. */
export type Signal = "SIGTERM" | "SIGKILL"

/**
 * A spawned server process, as the client side uses it. A platform that can
 * do better than effect's `ChildProcessSpawner` (whose streams put a fiber hop
 * between the pipes and the transport) builds it over its own processes.
 */
export interface ServerProcess {
  readonly pid: number
  /** Writes to the child's stdin and ends it when done; it is the one owner of the stream's errors and end. */
  readonly stdin: Sink.Sink<void, Uint8Array, never, unknown>
  /** Optional: synchronous writes to the same stream, used while nothing is queued in front of them. */
  readonly directStdin?: DirectWriter | undefined
  /** The child's stdout, pulled or pushed. */
  readonly stdout: Stream.Stream<Uint8Array, unknown> | DirectReader
  /** The child's stderr; empty when it is not piped. */
  readonly stderr: Stream.Stream<Uint8Array, unknown>
  /** Waits for the exit; any number of times. */
  readonly exit: Effect.Effect<ProcessExit>
  /**
   * Sends `signal` (to the child's process group where it has one). It may
   * wait for the exit; the caller bounds the wait, and a failed kill (the
   * child exited meanwhile) is ignored.
   */
  readonly kill: (signal: Signal) => Effect.Effect<void, unknown>
}

/**
 * Starts the server process for `options`; the process lives in the scope.
 * Fails with reason `Io` when it cannot be started.
 */
export type Launch = (options: ClientOptions) => Effect.Effect<ServerProcess, Transport.TransportError, Scope.Scope>

// Loaded on the first spawn, with effect's child-process modules (the spawner's
// service key included): they are a noticeable part of a server's start, and a
// server never spawns.
const loadProcess = Effect.promise(() => import("./internal/stdioProcess.ts"))

/**
 * Spawns the server with effect's `ChildProcessSpawner` and connects to it;
 * closing the scope runs the shutdown sequence. Fails with reason `Io` when
 * the process cannot be spawned.
 */
export const makeClient = Effect.fnUntraced(function* (
  options: ClientOptions
): Effect.fn.Return<StdioClient, Transport.TransportError, ChildProcessSpawner.ChildProcessSpawner | Scope.Scope> {
  const Process = yield* loadProcess
  return yield* makeClientWith(yield* Process.spawnerLauncher, options)
})

/**
 * Starts the server with `launch` and connects to it; closing the scope runs
 * the shutdown sequence.
 */
export const makeClientWith = Effect.fnUntraced(function* (
  launch: Launch,
  options: ClientOptions
): Effect.fn.Return<StdioClient, Transport.TransportError, Scope.Scope> {
  const maxFrameBytes = options.maxFrameBytes ?? defaults.maxFrameBytes
  const exitGrace = options.shutdown?.exitGrace ?? defaults.grace
  const termGrace = options.shutdown?.termGrace ?? defaults.grace
  const killGrace = options.shutdown?.killGrace ?? defaults.grace
  const stderrMode = options.stderr ?? "capture"

  const child = yield* launch(options)
  const exited = child.exit

  const tail = new Tail(options.stderrTailBytes ?? defaults.stderrTailBytes)
  const onStderr = typeof stderrMode === "function" ? stderrMode : undefined
  const stderrPump = yield* child.stderr.pipe(
    Stream.runForEachArray((chunks) => {
      for (const chunk of chunks) tail.push(chunk)
      return onStderr === undefined ? Effect.void : Effect.forEach(chunks, onStderr, { discard: true })
    }),
    Effect.ignore,
    Effect.forkScoped
  )

  const outbox = yield* Outbox.make(
    child.stdin,
    {
      capacity: options.outgoingCapacity ?? defaults.outgoingCapacity,
      maxFrameBytes,
      target: "the server's stdin"
    },
    child.directStdin
  )

  let closeStarted = false

  // The stderr written just before the exit may still be in the pipe.
  const exitError = (exit: ProcessExit) =>
    Effect.map(Effect.timeoutOption(Fiber.await(stderrPump), exitGrace), () => {
      const cause = new ServerExited({ exitCode: exit.code, signal: exit.signal, stderrTail: tail.text() })
      return new Transport.TransportError({ reason: "Closed", message: cause.message, cause })
    })

  const afterStdout = Effect.suspend(() => {
    outbox.refuse(Outbox.closedError("the server closed its stdout"))
    if (closeStarted) return Effect.void
    return Effect.flatMap(Effect.timeoutOption(exited, exitGrace), (exit) =>
      // Still running with its stdout closed: it can no longer answer; closing will stop it.
      Option.isNone(exit) || exit.value.code === 0 ? Effect.void : Effect.flatMap(exitError(exit.value), Effect.fail)
    )
  })

  const inbox = new Inbox.Inbox(child.stdout, {
    maxFrameBytes,
    capacity: defaults.incomingCapacity,
    scope: yield* Effect.scope,
    failureMessage: "reading the server's stdout failed"
  })
  // A descendant that inherited the child's stdout could hold it open after the child exited.
  yield* exited.pipe(Effect.andThen(Effect.sleep(exitGrace)), Effect.andThen(inbox.halt()), Effect.forkScoped)
  // A process that dies at start can break its stdout pipe before its exit is seen: the exit (code or signal,
  // stderr tail) is the root cause, and is what the error says when it follows within the grace.
  const readFailed = (error: Transport.TransportError) =>
    Effect.flatMap(closeStarted ? Effect.succeedNone : Effect.timeoutOption(exited, exitGrace), (exit) =>
      Option.isSome(exit) && exit.value.code !== 0
        ? Effect.flatMap(exitError(exit.value), Effect.fail)
        : Effect.fail(
            new Transport.TransportError({
              reason: error.reason,
              message: `${error.message}: ${StdioStart.describe(error.cause)}`,
              cause: error.cause
            })
          )
    )
  const incoming = inbox.stream.pipe(
    Stream.catch((error) => Stream.fromEffectDrain(readFailed(error))),
    Stream.concat(Stream.fromEffectDrain(afterStdout))
  )

  // Pushed frames end as `incoming` does: the same wait for the exit, the same error. The wait runs on a
  // fiber of its own, which closing interrupts (the receiver is then ended plainly).
  const context = yield* Effect.context<never>()
  let ending: Fiber.Fiber<void> | undefined
  const attach = (receiver: Transport.Receiver): boolean =>
    inbox.attach(receiver, (error) => {
      ending = Effect.runForkWith(context)(
        Effect.ignore(
          Effect.onExit(error === undefined ? afterStdout : readFailed(error), (exit) =>
            Effect.sync(() => receiver.end(failureOf(exit)))
          )
        )
      )
    })

  // Waits up to `grace` for the exit after `signal`; true when it came.
  const signalAndWait = (signal: Signal, grace: Duration.Input) =>
    Effect.map(Effect.timeoutOption(Effect.andThen(Effect.ignore(child.kill(signal)), exited), grace), Option.isSome)

  // Spec order: close stdin (after what was already sent), wait, SIGTERM, wait, SIGKILL.
  const stop = Effect.gen(function* () {
    const graceful = yield* Effect.timeoutOption(Effect.andThen(outbox.drain, exited), exitGrace)
    if (Option.isSome(graceful)) return
    yield* outbox.abort
    if (yield* signalAndWait("SIGTERM", termGrace)) return
    yield* signalAndWait("SIGKILL", killGrace)
  })

  const close = once(
    Effect.gen(function* () {
      closeStarted = true
      outbox.refuse(Outbox.closedError("the stdio transport is closed"))
      yield* inbox.halt()
      if (ending !== undefined) yield* Fiber.interrupt(ending)
      yield* stop
      // The child's last stderr may still be in the pipe; the tail should have it.
      yield* Effect.timeoutOption(Fiber.await(stderrPump), exitGrace)
    })
  )
  yield* Effect.addFinalizer(() => close)

  return withFastPaths<StdioClient>(
    {
      incoming,
      send: (frame) => outbox.offer(frame),
      pid: child.pid,
      close,
      exit: exited,
      stderrTail: Effect.sync(() => tail.text())
    },
    outbox,
    attach
  )
})

/** Provides `Transport` to a server spawned with `ChildProcessSpawner`; releasing the layer shuts the server down. */
export const layerClient = (
  options: ClientOptions
): Layer.Layer<Transport.Transport, Transport.TransportError, ChildProcessSpawner.ChildProcessSpawner> =>
  Layer.effect(
    Transport.Transport,
    Effect.map(makeClient(options), (client) => Transport.Transport.of(client))
  )

/** Provides `Transport` to a server started with `launch`; releasing the layer shuts the server down. */
export const layerClientWith = (
  launch: Launch,
  options: ClientOptions
): Layer.Layer<Transport.Transport, Transport.TransportError> =>
  Layer.effect(
    Transport.Transport,
    Effect.map(makeClientWith(launch, options), (client) => Transport.Transport.of(client))
  )
