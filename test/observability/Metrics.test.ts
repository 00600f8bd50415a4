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
      // A failed call is counted with its error.type: the JSON-RPC code of the error answer.
      const exit = yield* Effect.exit(client.request("tools/call", { name: "metered-missing", arguments: {} }))
      assert.strictEqual(exit._tag, "Failure")
      const served = yield* Metric.snapshot
      const failed = served.filter(
        (snapshot) =>
          snapshot.id === "mcp.server.operation.duration" &&
          (snapshot.attributes as Record<string, string> | undefined)?.["gen_ai.tool.name"] === "metered-missing"
      )
      assert.strictEqual(failed.length, 1)
      const errorType = (failed[0]!.attributes as Record<string, string>)["error.type"]
      assert.match(String(errorType), /^-32\d{3}$/)
      assert.strictEqual(
        (yield* series(McpMetrics.clientOperationDuration, toolCall("metered-missing", errorType))).count,
        1
      )
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
