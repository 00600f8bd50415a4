/**
 * The Node stdio client writes a frame to the child's pipe with one system
 * call while nothing is buffered before it, and hands whatever the pipe does
 * not take (full, or a partial write that may end inside a multi-byte
 * character) to the stream behind it. A real child that starts reading late
 * gets every frame whole and in order, small and large, ASCII and not.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Deferred from "effect/Deferred"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { fileURLToPath } from "node:url"

const lateEcho = fileURLToPath(new URL("./fixtures/late-echo.ts", import.meta.url))

const COUNT = 60
// Every fifth frame is ~300 KiB of multi-byte text: far more than a pipe (64 KiB) holds.
const textOf = (i: number) => (i % 5 === 0 ? `${i}:${"é😀x".repeat(60_000)}` : `${i}:small é`)

describe("the Node stdio client's direct writes", () => {
  it.live(
    "a child that reads late gets every frame whole and in order",
    () =>
      Effect.gen(function* () {
        const ready = yield* Deferred.make<void>()
        const transport = yield* NodeStdio.makeClient({
          command: process.execPath,
          args: [lateEcho],
          stderr: (chunk) =>
            new TextDecoder().decode(chunk).includes("ready") ? Deferred.succeed(ready, undefined) : Effect.void
        })
        const echoed = yield* Queue.unbounded<Transport.Incoming>()
        yield* Effect.forkScoped(Stream.runForEach(transport.incoming, (frame) => Queue.offer(echoed, frame)))
        const received: Array<Transport.Incoming> = []
        /** Waits for the echoes up to frame `n` (excluded): nothing the client sent before is still in flight. */
        const echoedUpTo = (n: number) =>
          Effect.whileLoop({
            while: () => received.length < n,
            body: () => Queue.take(echoed),
            step: (frame) => received.push(frame)
          })
        const send = (i: number) =>
          Effect.suspend(() => {
            const frame = JsonRpc.notification("echo", { i, text: textOf(i) })
            // Both ways in: the plain-call send where the transport has one, and `send`.
            return i % 2 === 0 && transport.trySend?.(frame) === true ? Effect.void : transport.send(frame)
          })
        yield* Deferred.await(ready)
        // Half the frames before the child reads: the first alone (~300 KiB) fills the pipe and is written
        // partly, the rest waits in the stream.
        for (let i = 0; i < COUNT / 2; i++) yield* send(i)
        process.kill(transport.pid, "SIGUSR2")
        // Half while it reads: before every fifth, the echoes of all before it, so that nothing is queued and
        // the frame goes straight to the pipe again (a large one partly).
        for (let i = COUNT / 2; i < COUNT; i++) {
          if (i % 5 === 0) yield* echoedUpTo(i)
          yield* send(i)
        }
        yield* Effect.timeout(echoedUpTo(COUNT), "10 seconds")
        assert.strictEqual(received.length, COUNT)
        received.forEach((frame, i) => {
          assert.isTrue(Result.isSuccess(frame), `frame ${i} decoded`)
          const params = (Result.getOrThrow(frame) as JsonRpc.Notification).params as { i: number; text: string }
          assert.strictEqual(params.i, i)
          assert.strictEqual(params.text, textOf(i))
        })
      }).pipe(Effect.scoped),
    30_000
  )
})
