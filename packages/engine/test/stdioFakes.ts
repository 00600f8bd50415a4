/**
 * In-memory stand-ins for effect's `Stdio` and `ChildProcessSpawner`, so the
 * stdio transports run deterministically under `it.effect` (TestClock, no
 * processes). A pipe is an unbounded queue of byte chunks with a reading
 * Stream and a writing Sink.
 */
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as PlatformError from "effect/PlatformError"
import type * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Queue from "effect/Queue"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export const bytes = (text: string): Uint8Array => encoder.encode(text)

export interface Pipe {
  readonly stream: Stream.Stream<Uint8Array, PlatformError.PlatformError>
  readonly sink: (endOnDone: boolean) => Sink.Sink<void, string | Uint8Array, never, PlatformError.PlatformError>
  readonly write: (chunk: string | Uint8Array) => Effect.Effect<void>
  readonly end: Effect.Effect<void>
  /** Whether a writer ended the pipe. */
  readonly ended: () => boolean
  /** Reads until `n` complete lines (terminator excluded) have arrived. */
  readonly lines: (n: number) => Effect.Effect<ReadonlyArray<string>>
  /** Everything written so far, decoded. */
  readonly text: () => string
}

export const makePipe = Effect.gen(function* () {
  const queue = yield* Queue.unbounded<Uint8Array, Cause.Done>()
  const written: Array<Uint8Array> = []
  let ended = false
  let buffered = ""
  const ready: Array<string> = []
  const end = Effect.suspend(() => {
    ended = true
    return Effect.asVoid(Queue.end(queue))
  })
  const push = (chunk: string | Uint8Array) => {
    const data = typeof chunk === "string" ? bytes(chunk) : chunk
    written.push(data)
    return Queue.offer(queue, data)
  }
  const pipe: Pipe = {
    stream: Stream.fromQueue(queue),
    sink: (endOnDone) =>
      Sink.forEach(push).pipe(Sink.ensuring(endOnDone ? end : Effect.void)) as Sink.Sink<
        void,
        string | Uint8Array,
        never,
        PlatformError.PlatformError
      >,
    write: (chunk) => Effect.asVoid(push(chunk)),
    end,
    ended: () => ended,
    lines: (n) =>
      Effect.gen(function* () {
        while (ready.length < n) {
          buffered += decoder.decode(yield* Queue.take(queue), { stream: true })
          const parts = buffered.split("\n")
          buffered = parts.pop()!
          ready.push(...parts)
        }
        return ready.splice(0, n)
      }).pipe(Effect.orDie),
    text: () => written.map((chunk) => decoder.decode(chunk)).join("")
  }
  return pipe
})

/** A `Stdio` whose stdin and stdout are pipes. */
export const makeStdio = Effect.gen(function* () {
  const stdin = yield* makePipe
  const stdout = yield* makePipe
  let endOnDone: boolean | undefined
  const stdio = Stdio.make({
    args: Effect.succeed([]),
    stdin: stdin.stream,
    stdout: (options) => {
      endOnDone = options?.endOnDone
      return stdout.sink(options?.endOnDone ?? false)
    },
    stderr: () => Sink.drain
  })
  return { stdio, stdin, stdout, stdoutEndOnDone: () => endOnDone }
})

export interface ChildBehaviour {
  /** Exit with code 0 when stdin is closed. Default false. */
  readonly exitOnStdinEnd?: boolean
  /** Die on SIGTERM. Default true. */
  readonly dieOnSigterm?: boolean
}

/**
 * A spawner whose one child is scripted: the test plays the child through its
 * pipes and `exit`, and reads `events` to see what the transport did to it.
 */
export const makeChild = (behaviour: ChildBehaviour = {}) =>
  Effect.gen(function* () {
    const stdin = yield* makePipe
    const stdout = yield* makePipe
    const stderr = yield* makePipe
    const events: Array<string> = []
    const exited = Deferred.makeUnsafe<readonly [number | null, string | null]>()
    let command: ChildProcess.Command | undefined

    const exit = (code: number | null, signal: string | null = null) =>
      Effect.gen(function* () {
        if (Deferred.isDoneUnsafe(exited)) return
        events.push(`exit ${code ?? signal}`)
        yield* stdout.end
        yield* stderr.end
        yield* Deferred.succeed(exited, [code, signal])
      })

    const stdinSink = Sink.forEachArray((chunks: ReadonlyArray<Uint8Array>) =>
      Effect.forEach(chunks, stdin.write)
    ).pipe(
      Sink.ensuring(
        Effect.suspend(() => {
          events.push("stdin closed")
          return Effect.andThen(stdin.end, behaviour.exitOnStdinEnd === true ? exit(0) : Effect.void)
        })
      )
    )

    const handle = ChildProcessSpawner.makeHandle({
      pid: ChildProcessSpawner.ProcessId(4242),
      exitCode: Effect.flatMap(Deferred.await(exited), ([code, signal]) =>
        code !== null
          ? Effect.succeed(ChildProcessSpawner.ExitCode(code))
          : Effect.fail(
              PlatformError.systemError({
                _tag: "Unknown",
                module: "ChildProcess",
                method: "exitCode",
                cause: new Error(`Process interrupted due to receipt of signal: '${signal}'`)
              })
            )
      ),
      isRunning: Effect.sync(() => !Deferred.isDoneUnsafe(exited)),
      kill: (options) =>
        Effect.gen(function* () {
          const signal = options?.killSignal ?? "SIGTERM"
          events.push(signal)
          if (signal === "SIGKILL" || behaviour.dieOnSigterm !== false) yield* exit(null, signal)
          yield* Deferred.await(exited)
        }),
      stdin: stdinSink,
      stdout: stdout.stream,
      stderr: stderr.stream,
      all: Stream.merge(stdout.stream, stderr.stream),
      getInputFd: () => Sink.drain,
      getOutputFd: () => Stream.empty,
      unref: Effect.succeed(Effect.void)
    })

    const spawner = ChildProcessSpawner.make((spawned) =>
      Effect.sync(() => {
        command = spawned
        events.push("spawned")
        return handle
      })
    )
    return { spawner, stdin, stdout, stderr, events, exit, command: () => command }
  })
