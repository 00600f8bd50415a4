/**
 * The Node stdio client writes a frame to the child's pipe with one system
 * call while nothing is buffered before it, and hands whatever the pipe does
 * not take (full, or a partial write that may end inside a multi-byte
 * character) to the stream behind it. A real child that starts reading late
 * gets every frame whole and in order, small and large, ASCII and not.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
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
        const transport = yield* NodeStdio.makeClient({ command: process.execPath, args: [lateEcho] })
        const echoed = yield* Effect.forkScoped(Stream.runCollect(Stream.take(transport.incoming, COUNT)))
        // The transport writes directly once its writer has started; half the frames go before the child
        // reads (the pipe fills, the rest waits in the stream), half while it reads.
        yield* Effect.sleep("50 millis")
        for (let i = 0; i < COUNT; i++) {
          if (i === COUNT / 2) yield* Effect.sleep("400 millis")
          else if (i > COUNT / 2 && i % 5 === 0) yield* Effect.sleep("20 millis")
          const frame = JsonRpc.notification("echo", { i, text: textOf(i) })
          // Both ways in: the plain-call send where the transport has one, and `send`.
          if (i % 2 === 0 && transport.trySend?.(frame) === true) continue
          yield* transport.send(frame)
        }
        const frames = yield* Effect.timeout(Fiber.join(echoed), "10 seconds")
        assert.strictEqual(frames.length, COUNT)
        frames.forEach((frame, i) => {
          assert.isTrue(Result.isSuccess(frame), `frame ${i} decoded`)
          const params = (Result.getOrThrow(frame) as JsonRpc.Notification).params as { i: number; text: string }
          assert.strictEqual(params.i, i)
          assert.strictEqual(params.text, textOf(i))
        })
      }),
    30_000
  )
})
