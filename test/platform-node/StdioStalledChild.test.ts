/**
 * A stdio server that stops reading its stdin (a real child process): the
 * client's writes pile up in the pipe and then in the transport's buffer, and
 * none of that may hold the caller. A call with a timeout fails with
 * `RequestTimeout` on time although its frame cannot be written, an
 * interrupted call returns at once, and closing the client still ends the
 * child (stdin closed, then SIGTERM), leaving nothing running.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { fileURLToPath } from "node:url"

const stalledServer = fileURLToPath(new URL("./fixtures/stalled-server.ts", import.meta.url))

// 1 MiB per request: a few of them are far more than a pipe (64 KiB) and Node's write buffer hold.
const big = "x".repeat(1024 * 1024)
const TIMEOUT = 30_000

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The client over the stalled child, once the child has stopped reading (it says so on stderr). */
const connect = Effect.gen(function* () {
  const stalled = Deferred.makeUnsafe<void>()
  let seen = ""
  const transport = yield* NodeStdio.makeClient({
    command: process.execPath,
    args: [stalledServer],
    // One frame queued at most: the third pending request already waits for room in the send.
    outgoingCapacity: 1,
    shutdown: { exitGrace: "300 millis", termGrace: "2 seconds", killGrace: "2 seconds" },
    stderr: (chunk) =>
      Effect.sync(() => {
        seen += new TextDecoder().decode(chunk)
        if (seen.includes("stalled\n")) Deferred.doneUnsafe(stalled, Exit.void)
      })
  })
  const client = yield* McpClient.make({
    clientInfo: { name: "stalled-test", version: "1.0.0" },
    supportedVersions: ["2025-11-25"]
  }).pipe(Effect.provideService(Transport.Transport, transport))
  yield* Deferred.await(stalled)
  // Requests nobody will read, each started in this turn: the first fills the pipe and Node's buffer,
  // the next the transport's buffer, the last waits in its send.
  for (let i = 0; i < 4; i++) {
    yield* Effect.forkScoped(Effect.ignore(client.callTool("echo", { text: big }, { timeout: "1 minute" })), {
      startImmediately: true
    })
  }
  return { transport, client }
})

describe("a stdio child that stops reading", () => {
  it.live(
    "a call with a timeout fails with RequestTimeout on time although its frame cannot be written",
    () =>
      Effect.gen(function* () {
        const { client } = yield* connect
        const [elapsed, error] = yield* Effect.timed(
          Effect.flip(client.callTool("echo", { text: big }, { timeout: "1 second" }))
        )
        assert.strictEqual(error._tag, "RequestTimeout")
        const ms = Duration.toMillis(elapsed)
        assert.isAtLeast(ms, 900, "not before the timeout")
        assert.isBelow(ms, 2000, `within the timeout + 1 s, took ${ms} ms`)
      }),
    TIMEOUT
  )

  it.live(
    "interrupting a call whose frame cannot be written returns at once",
    () =>
      Effect.gen(function* () {
        const { client } = yield* connect
        // Started in this turn: by the time `forkScoped` returns, the call is waiting on its send and answer.
        const call = yield* Effect.forkScoped(client.callTool("echo", { text: big }), { startImmediately: true })
        const [elapsed, exit] = yield* Effect.timed(Effect.andThen(Fiber.interrupt(call), Fiber.await(call)))
        assert.isTrue(Exit.hasInterrupts(exit), "the call was interrupted")
        const ms = Duration.toMillis(elapsed)
        assert.isBelow(ms, 500, `the interrupt took ${ms} ms`)
      }),
    TIMEOUT
  )

  it.live(
    "closing the client ends the child (SIGTERM after stdin's close goes unread) and leaves nothing running",
    () =>
      Effect.gen(function* () {
        const { transport } = yield* connect
        const pid = transport.pid
        assert.isTrue(running(pid))
        const [elapsed] = yield* Effect.timed(transport.close)
        const exit = yield* transport.exit
        assert.deepStrictEqual(exit, { code: null, signal: "SIGTERM" })
        assert.isFalse(running(pid), "the child is gone")
        // exitGrace (0.3 s) then SIGTERM, which the child does not survive.
        const ms = Duration.toMillis(elapsed)
        assert.isBelow(ms, 2300, `close took ${ms} ms`)
      }),
    TIMEOUT
  )
})
