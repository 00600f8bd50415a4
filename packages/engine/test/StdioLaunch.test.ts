import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { forkIdle, runIdle } from "./fixtures.ts"
import { bytes } from "./stdioFakes.ts"

const decoder = new TextDecoder()

/**
 * A launched process with direct pipes, played by the test: `push` is the
 * child writing to its stdout, `written` what reached its stdin and by which
 * path, `events` what the transport did to it.
 */
const makeProcess = (options: { readonly exitOnStdinEnd: boolean }) => {
  const written: Array<string> = []
  // Completed (and replaced) whenever something reaches stdin.
  let wrote = Deferred.makeUnsafe<void>()
  const record = (text: string) => {
    written.push(text)
    const current = wrote
    wrote = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(current, Exit.void)
  }
  /** Waits until `n` writes have reached stdin. */
  const awaitWritten = (n: number): Effect.Effect<void> =>
    Effect.suspend(() => (written.length >= n ? Effect.void : Effect.andThen(Deferred.await(wrote), awaitWritten(n))))
  const events: Array<string> = []
  const exited = Deferred.makeUnsafe<StdioTransport.ProcessExit>()
  let handlers: StdioTransport.DirectReader extends { start: (h: infer H) => unknown } ? H | undefined : never
  let ready = true
  const exit = (code: number | null, signal: string | null = null) => {
    events.push(`exit ${code ?? signal}`)
    handlers?.end()
    Deferred.doneUnsafe(exited, Exit.succeed({ code, signal }))
  }
  const server: StdioTransport.ServerProcess = {
    pid: 7,
    stdin: Sink.forEachArray((chunks: ReadonlyArray<Uint8Array>) =>
      Effect.sync(() => {
        for (const chunk of chunks) record(`sink ${decoder.decode(chunk)}`)
      })
    ).pipe(
      Sink.ensuring(
        Effect.sync(() => {
          events.push("stdin closed")
          if (options.exitOnStdinEnd) exit(0)
        })
      )
    ),
    directStdin: {
      ready: () => ready,
      write: (chunk) => {
        record(`direct ${decoder.decode(chunk)}`)
      }
    },
    stdout: {
      start: (started) => {
        handlers = started
        return { pause: () => {}, resume: () => {}, stop: () => events.push("stdout stopped") }
      }
    },
    stderr: Stream.make(bytes("boom\n")),
    exit: Deferred.await(exited),
    kill: (signal) =>
      Effect.sync(() => {
        events.push(signal)
        if (signal === "SIGKILL") exit(null, signal)
      })
  }
  const launched: Array<StdioTransport.ClientOptions> = []
  const launch: StdioTransport.Launch = (options) =>
    Effect.sync(() => {
      launched.push(options)
      return server
    })
  return {
    launch,
    launched,
    written,
    awaitWritten,
    events,
    exit,
    push: (text: string) => handlers?.chunk(bytes(text)),
    setReady: (value: boolean) => {
      ready = value
    }
  }
}

const line = (frame: JsonRpc.Message) => `${JsonRpcCodec.encode(frame)}\n`

describe("StdioTransport.makeClientWith (a launched process with direct pipes)", () => {
  it.effect("frames go straight to stdin while nothing is queued, through the sink otherwise, in order", () =>
    Effect.gen(function* () {
      const child = makeProcess({ exitOnStdinEnd: true })
      // Returns once the client's fibers have come to rest.
      const client = yield* runIdle(StdioTransport.makeClientWith(child.launch, { command: "server", args: ["-x"] }))
      assert.strictEqual(child.launched[0]?.command, "server")
      assert.strictEqual(client.pid, 7)
      const note = (n: number) => JsonRpc.notification("n", { n })
      yield* client.send(note(1))
      child.setReady(false)
      yield* client.send(note(2))
      child.setReady(true)
      // The sink still holds a frame: a direct write now would overtake it.
      yield* client.send(note(3))
      // The sink writes what it held before the next frame may go direct. That wait ends
      // inside the sink's write (a Deferred resumes its waiter at once); coming to rest
      // lets the sink's writer finish and go idle.
      yield* child.awaitWritten(3)
      yield* runIdle(Effect.void)
      yield* client.send(note(4))
      assert.deepStrictEqual(child.written, [
        `direct ${line(note(1))}`,
        `sink ${line(note(2))}`,
        `sink ${line(note(3))}`,
        `direct ${line(note(4))}`
      ])
    })
  )

  it.effect("pushed stdout bytes arrive as frames; an exit fails incoming with ServerExited", () =>
    Effect.gen(function* () {
      const child = makeProcess({ exitOnStdinEnd: true })
      const client = yield* StdioTransport.makeClientWith(child.launch, { command: "server" })
      const frames: Array<Transport.Incoming> = []
      const reader = yield* forkIdle(
        client.incoming.pipe(Stream.runForEach((frame) => Effect.sync(() => frames.push(frame))))
      )
      const response = line(JsonRpc.success(1, { ok: true }))
      child.push(response.slice(0, 10))
      child.push(response.slice(10))
      child.exit(3)
      const exit = yield* Fiber.await(reader)
      assert.deepStrictEqual(
        frames.map((frame) => (Result.isSuccess(frame) ? frame.success : undefined)),
        [JsonRpc.success(1, { ok: true })]
      )
      assert.isTrue(Exit.isFailure(exit))
      const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      const exited = StdioTransport.serverExited(reason?._tag === "Fail" ? reason.error : undefined)
      assert.strictEqual(exited?.exitCode, 3)
      assert.strictEqual(exited?.stderrTail, "boom\n")
    })
  )

  it.effect("close: stdin closed, exitGrace, SIGTERM, termGrace, SIGKILL through the process's kill", () =>
    Effect.gen(function* () {
      const child = makeProcess({ exitOnStdinEnd: false })
      const client = yield* StdioTransport.makeClientWith(child.launch, {
        command: "server",
        shutdown: { exitGrace: "1 second", termGrace: "2 seconds", killGrace: "3 seconds" }
      })
      const closing = yield* forkIdle(client.close)
      assert.deepStrictEqual(child.events, ["stdin closed"])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(child.events, ["stdin closed", "SIGTERM"])
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(child.events, ["stdin closed", "SIGTERM", "SIGKILL", "exit SIGKILL"])
      assert.deepStrictEqual(yield* client.exit, { code: null, signal: "SIGKILL" })
    })
  )
})
