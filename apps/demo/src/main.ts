/**
 * `npm run demo`: a host drives the everything server over stdio, then over
 * Streamable HTTP, and prints what happens: the tools, live progress, a
 * cancelled call the server confirms, and a summary. Both servers are child
 * processes; they are shut down before the demo exits.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Demo from "./Demo.ts"
import * as Everything from "./Everything.ts"

const heading = (text: string) => Console.log(`\n── ${text} ${"─".repeat(Math.max(0, 70 - text.length))}`)

const leg = (connect: typeof Everything.overStdio, title: string, command: string) =>
  Effect.gen(function* () {
    yield* heading(title)
    yield* Console.log(`  ${"spawn".padEnd(9)}${command}`)
    const start = yield* Clock.currentTimeMillis
    const connection = yield* connect
    const took = (yield* Clock.currentTimeMillis) - start
    yield* Console.log(
      `  ${"connect".padEnd(9)}${connection.url ?? "stdin/stdout"} (${took} ms, process start included)`
    )
    return yield* Demo.exercise(connection)
    // Each leg's scope ends its server before the next leg starts.
  }).pipe(Effect.scoped)

const program = Effect.gen(function* () {
  const start = yield* Clock.currentTimeMillis
  yield* Console.log("effect-mcp demo: one host, the everything server over two transports")
  const outcomes = [
    yield* leg(Everything.overStdio, "stdio", "mcp-everything-server --stdio"),
    yield* leg(Everything.overHttp, "Streamable HTTP", "mcp-everything-server --http --port 0")
  ]
  yield* heading("summary")
  for (const o of outcomes) {
    yield* Console.log(
      `  ${o.transport.padEnd(16)}protocol ${o.protocol}, ${o.tools} tools, ${o.progressUpdates} progress updates, ` +
        `request ${o.cancelledId} cancelled (confirmed in ${o.cancelConfirmedMs} ms)`
    )
  }
  const elapsed = ((yield* Clock.currentTimeMillis) - start) / 1000
  yield* Console.log(`\ndone in ${elapsed.toFixed(1)} s`)
}).pipe(
  // The demo promises to end by itself: a hung step fails it instead.
  Effect.timeoutOrElse({
    duration: "20 seconds",
    orElse: () => Effect.fail(new Everything.DemoError({ message: "the demo did not finish within 20 s" }))
  })
)

NodeRuntime.runMain(program)
