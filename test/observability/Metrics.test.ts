/**
 * Request metrics (engine `McpMetrics`): with `McpMetrics.Enabled` each
 * request is timed on both sides, by method, tool and outcome, on virtual
 * time; without it nothing is recorded.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"

/** A tool that takes `ms` of (virtual) time. */
const slow = (name: string, ms: number) =>
  Tool.make(name, {
    input: Schema.Struct({}),
    handler: () => Effect.as(Effect.sleep(ms), "done")
  })

const transportTo = (tool: Tool.Tool): Layer.Layer<Transport.Transport> =>
  Layer.effect(
    Transport.Transport,
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
      const server = yield* Layer.build(
        Tool.layer(tool).pipe(Layer.provideMerge(McpServer.layer({ name: "metered", version: "1.0.0" })))
      )
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, serverEnd),
        Effect.provideContext(server)
      )
      return clientEnd
    })
  )

const clientInfo = { name: "metrics-test", version: "1.0.0" }

const series = (histogram: Metric.Histogram<number>, attributes: Record<string, string>) =>
  Metric.value(Metric.withAttributes(histogram, attributes))

const toolCall = (name: string, errorType?: string): Record<string, string> => ({
  "mcp.method.name": "tools/call",
  "gen_ai.tool.name": name,
  "gen_ai.operation.name": "execute_tool",
  ...(errorType === undefined ? {} : { "error.type": errorType })
})

describe("request metrics", () => {
  it.effect("each side times a request by method and tool when enabled", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo(slow("metered-slow", 1500)), { clientInfo })
      const call = yield* Effect.forkChild(client.callTool("metered-slow", {}))
      const active = Metric.withAttributes(McpMetrics.serverActiveRequests, { "mcp.method.name": "tools/call" })
      yield* TestClock.adjust(1000)
      // Being served: one request in flight, none once it is answered.
      assert.strictEqual((yield* Metric.value(active)).value, 1)
      yield* TestClock.adjust(1000)
      yield* Fiber.join(call)
      assert.strictEqual((yield* Metric.value(active)).value, 0)
      for (const histogram of [McpMetrics.clientOperationDuration, McpMetrics.serverOperationDuration]) {
        const state = yield* series(histogram, toolCall("metered-slow"))
        assert.strictEqual(state.count, 1)
        assert.strictEqual(state.sum, 1.5)
      }
      // A failed call is counted with its error.type (the JSON-RPC code of the error answer), and without the name
      // it asked for, which the server may not have: a peer choosing names chooses no series.
      const exit = yield* Effect.exit(client.request("tools/call", { name: "metered-missing", arguments: {} }))
      assert.strictEqual(exit._tag, "Failure")
      const failed = { "mcp.method.name": "tools/call", "error.type": "-32602" }
      assert.strictEqual((yield* series(McpMetrics.serverOperationDuration, failed)).count, 1)
      assert.strictEqual((yield* series(McpMetrics.clientOperationDuration, failed)).count, 1)
      const named = (yield* Metric.snapshot).filter((snapshot) =>
        JSON.stringify(snapshot.attributes ?? {}).includes("metered-missing")
      )
      assert.deepStrictEqual(named, [])
    }).pipe(Effect.scoped, Effect.provideService(McpMetrics.Enabled, true))
  )

  it.effect("a client sending made-up tool names and methods adds no series", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo(slow("metered-bounded", 1)), { clientInfo })
      const count = () =>
        Effect.map(
          Metric.snapshot,
          (snapshots) => snapshots.filter((snapshot) => snapshot.id.startsWith("mcp.server.")).length
        )
      // Each distinct refused name once, to have the -32602 series there before counting.
      yield* Effect.exit(client.request("tools/call", { name: "made-up-0", arguments: {} }))
      const before = yield* count()
      // Before, each name was a series of its own in both histograms, never dropped: 10,000 refused calls with
      // made-up names and methods added 14,007 series (a 33 MB scrape) in the trial that found it.
      for (let i = 1; i <= 200; i++) {
        yield* Effect.exit(client.request("tools/call", { name: `made-up-${i}`, arguments: {} }))
      }
      assert.strictEqual(yield* count(), before)
      // A method no revision defines is recorded as _OTHER; a known one as itself.
      assert.strictEqual(McpMetrics.methodAttribute("x/made-up-method"), "_OTHER")
      assert.strictEqual(McpMetrics.methodAttribute("tools/call"), "tools/call")
      assert.strictEqual(McpMetrics.methodAttribute("notifications/progress"), "notifications/progress")
    }).pipe(Effect.scoped, Effect.provideService(McpMetrics.Enabled, true))
  )

  it.effect("nothing is recorded when not enabled", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo(slow("unmetered", 10)), { clientInfo })
      const call = yield* Effect.forkChild(client.callTool("unmetered", {}))
      yield* TestClock.adjust(100)
      yield* Fiber.join(call)
      const snapshots = yield* Metric.snapshot
      // The registry is shared by the file's tests: only this test's tool is looked for.
      assert.deepStrictEqual(
        snapshots.filter(
          (snapshot) =>
            snapshot.id.startsWith("mcp.") &&
            (snapshot.attributes as Record<string, string> | undefined)?.["gen_ai.tool.name"] === "unmetered"
        ),
        []
      )
      // The same call with metrics on is recorded: the switch, not the call, made the difference.
      const metered = yield* McpClient.connect(transportTo(slow("unmetered", 10)), { clientInfo }).pipe(
        Effect.provideService(McpMetrics.Enabled, true)
      )
      const again = yield* Effect.forkChild(metered.callTool("unmetered", {}))
      yield* TestClock.adjust(100)
      yield* Fiber.join(again)
      assert.strictEqual((yield* series(McpMetrics.clientOperationDuration, toolCall("unmetered"))).count, 1)
    }).pipe(Effect.scoped)
  )
})
