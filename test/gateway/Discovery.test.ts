/**
 * Discovery mode over a real upstream: the gateway, served over Streamable
 * HTTP on 127.0.0.1 in this process, in front of our everything server (a
 * stdio child), with the official SDK 1.x client downstream. The client sees
 * three tools; it searches, describes and calls through them (progress
 * relayed), and an upstream's list_changed still reaches it.
 */
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { everythingStdio, type Json, textOf } from "./fixture.ts"

/** The gateway in discovery mode in front of the everything server (stdio), listening on a free port. */
const gateway = Effect.gen(function* () {
  const server = Gateway.layer({
    server: { name: "gateway", version: "1.0.0" },
    config: {
      mcpServers: {
        everything: everythingStdio
      }
    },
    discovery: { pageSize: 5 },
    healthCheck: false,
    startTimeout: "60 seconds"
  }).pipe(Layer.provide(NodeConnector.layer({ stderr: () => "capture" })))
  // Listening on 127.0.0.1 port 0 cannot fail but for a broken machine.
  const context = yield* Layer.build(NodeMcpServer.layerHttp(server)).pipe(Effect.orDie)
  return `${yield* NodeMcpServer.url.pipe(Effect.provideContext(context))}/mcp`
})

describe("discovery mode over a real upstream", () => {
  it.live(
    "an SDK client searches, describes and calls through three tools (or directly), and hears of changes",
    () =>
      Effect.gen(function* () {
        const url = yield* gateway
        const client = new Client({ name: "downstream", version: "1.0.0" })
        const toolsChanged = yield* Deferred.make<void>()
        client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
          Deferred.doneUnsafe(toolsChanged, Effect.void)
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
          () => Effect.promise(() => client.close().catch(() => undefined))
        )
        const call = (name: string, args: Record<string, unknown> = {}) =>
          Effect.promise(() => client.callTool({ name, arguments: args }))

        const listed = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(listed.tools.map((t) => t.name).sort(), [
          "call_tool",
          "get_tool_details",
          "search_tools"
        ])
        assert.strictEqual(listed.nextCursor, undefined)

        const found: Json = (yield* call("search_tools", { query: "simple text" })).structuredContent
        assert.strictEqual(found.tools[0].name, "everything__test_simple_text")
        assert.strictEqual(found.tools[0].upstream, "everything")
        assert.isAtMost(found.tools.length, 5)
        const details: Json = (yield* call("get_tool_details", { name: "everything__test_tool_with_progress" }))
          .structuredContent
        assert.strictEqual(details.tool.name, "everything__test_tool_with_progress")
        assert.strictEqual(details.tool.inputSchema.type, "object")

        assert.strictEqual(
          textOf(yield* call("call_tool", { name: "everything__test_simple_text" })),
          "This is a simple text response for testing."
        )
        // A client that knows the name calls it directly.
        assert.strictEqual(
          textOf(yield* call("everything__test_simple_text")),
          "This is a simple text response for testing."
        )
        // Progress asked of call_tool is the progress of the tool it calls.
        const progress: Array<number> = []
        const withProgress = yield* Effect.promise(() =>
          client.callTool(
            { name: "call_tool", arguments: { name: "everything__test_tool_with_progress", arguments: {} } },
            undefined,
            { onprogress: (update) => progress.push(update.progress) }
          )
        )
        assert.strictEqual(textOf(withProgress), "Tool with progress executed successfully")
        // The SDK drops its progress handler as it reads the response: the last update may be lost with it.
        assert.deepStrictEqual(progress, [0, 50, 100].slice(0, Math.max(2, progress.length)))

        // The upstream adds a tool: the client is told, and finds it.
        assert.strictEqual(
          textOf(yield* call("call_tool", { name: "everything__test_trigger_tool_change" })),
          "test_dynamic_tool added"
        )
        yield* Deferred.await(toolsChanged).pipe(Effect.timeout("30 seconds"))
        const dynamic: Json = (yield* call("search_tools", { query: "dynamic" })).structuredContent
        assert.strictEqual(dynamic.tools[0].name, "everything__test_dynamic_tool")
        assert.strictEqual(
          textOf(yield* call("call_tool", { name: "everything__test_dynamic_tool" })),
          "The dynamic tool is here"
        )
      }),
    60_000
  )
})
