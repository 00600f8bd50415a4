/**
 * Progress, cancellation and timeouts against the notes server over stdio:
 * a call as a Stream of progress updates; a call cancelled by ending its
 * Stream early (the server's handler is interrupted and says so on stderr);
 * a call that times out (and is cancelled on the server too); a timeout that
 * each progress update restarts.
 *
 *   node --conditions=@effect-mcp/source examples/progress-cancellation.ts
 */
import * as assert from "node:assert/strict"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { spawnArgs } from "./notes-server.ts"

// The server's stderr, kept to see its handler report the interruption; `written` is completed (and
// replaced) on each chunk.
let serverStderr = ""
let written = Deferred.makeUnsafe<void>()
const decoder = new TextDecoder()

/** Waits until the server has written `count` interruption lines on stderr (re-checked on each chunk). */
const interruptions = (count: number): Effect.Effect<void> => {
  const seen = (): Effect.Effect<void> =>
    Effect.suspend(() =>
      serverStderr.split("count_to: interrupted").length - 1 >= count
        ? Effect.void
        : Effect.andThen(Deferred.await(written), seen())
    )
  // A bound on a failure, not a wait: the line comes as soon as the handler is interrupted.
  return Effect.timeoutOrElse(seen(), {
    duration: "5 seconds",
    orElse: () =>
      Effect.sync(() =>
        assert.fail(`the server reported fewer than ${count} interruptions: ${JSON.stringify(serverStderr)}`)
      )
  })
}

const Client = McpClient.layer({ clientInfo: { name: "progress-example", version: "1.0.0" } }).pipe(
  Layer.provide(
    NodeStdio.layerClient({
      command: process.execPath,
      args: spawnArgs,
      stderr: (chunk) =>
        Effect.sync(() => {
          serverStderr += decoder.decode(chunk, { stream: true })
          const current = written
          written = Deferred.makeUnsafe<void>()
          Deferred.doneUnsafe(current, Exit.void)
        })
    })
  )
)

const program = Effect.gen(function* () {
  const client = yield* McpClient.McpClient

  // 1. Progress: the call is a Stream of updates that ends with the result.
  const events = yield* Stream.runCollect(client.callToolWithProgress("count_to", { to: 3, stepMs: 10 }))
  for (const event of events)
    yield* Console.log(
      event._tag === "Progress"
        ? `progress ${event.update.progress}/${event.update.total} ${event.update.message}`
        : `result ${JSON.stringify(event.value.content)}`
    )
  assert.deepEqual(
    events.flatMap((e) => (e._tag === "Progress" ? [e.update.progress] : [])),
    [1, 2, 3]
  )
  assert.equal(events.at(-1)?._tag, "Result")

  // 2. Cancellation: taking two updates ends the Stream, which interrupts the call. The client sends
  //    notifications/cancelled; the server interrupts the handler's fiber and its finalizer runs.
  const taken = yield* Stream.runCollect(
    client.callToolWithProgress("count_to", { to: 1000, stepMs: 20 }).pipe(Stream.take(2))
  )
  assert.equal(taken.length, 2)
  yield* interruptions(1)
  yield* Console.log("cancelled after 2 updates; the server's handler was interrupted")

  // 3. Timeout: the call fails with RequestTimeout and is cancelled on the server as well.
  const timedOut = yield* client
    .callTool("count_to", { to: 1000, stepMs: 20 }, { timeout: "200 millis" })
    .pipe(Effect.flip)
  yield* Console.log(`timeout -> ${timedOut._tag}`)
  assert.equal(timedOut._tag, "RequestTimeout")
  yield* interruptions(2)

  // 4. A timeout each progress update restarts: 4 steps of 400 ms finish although the whole call takes
  //    longer than its 1 second timeout; `maxTotalTimeout` bounds how far progress can extend it. Progress
  //    only arrives for calls that ask for it, so this is a `callToolWithProgress`.
  const slow = yield* Stream.runLast(
    client.callToolWithProgress(
      "count_to",
      { to: 4, stepMs: 400 },
      { timeout: "1 second", resetTimeoutOnProgress: true, maxTotalTimeout: "10 seconds" }
    )
  )
  const last = slow._tag === "Some" ? slow.value : undefined
  const block = last?._tag === "Result" ? last.value.content[0] : undefined
  assert.equal(block?.type === "text" ? block.text : undefined, "counted to 4")
  yield* Console.log("a call longer than its timeout finished: progress kept it alive")

  yield* Console.log("ok: progress-cancellation")
})

NodeRuntime.runMain(program.pipe(Effect.provide(Client)))
