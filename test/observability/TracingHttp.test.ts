/**
 * The trace of a call whose tool asks the client for a sampling, over real
 * Streamable HTTP (a Node server on 127.0.0.1, port 0): one trace on both
 * revisions, as over memory (Tracing.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TraceChain from "./traceChain.ts"

const Server = Tool.layer(TraceChain.ask).pipe(
  Layer.provideMerge(McpServer.layer({ name: "traced", version: "1.0.0" }))
)

const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ["2025-11-25", "2026-07-28"]

describe("request spans over Streamable HTTP", () => {
  for (const revision of revisions) {
    it.live(`client -> server -> sampling -> handler is one trace (${revision})`, () => {
      const recorder = SpanRecorder.make()
      return Effect.gen(function* () {
        const listening = yield* Layer.build(NodeMcpServer.layerHttp(Server))
        const url = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(listening))}/mcp`
        const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url }), {
          clientInfo: { name: "tracing-http-test", version: "1.0.0" },
          supportedVersions: [revision]
        }).pipe(Effect.provide(TraceChain.answer))
        const result = yield* client.callTool("ask", {}).pipe(Effect.withSpan("app"))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "!" }])
        const { served } = TraceChain.assertOneTrace(recorder.records(), revision)
        assert.strictEqual(served.attributes["mcp.protocol.version"], revision)
        // 2025-11-25 has an Mcp-Session-Id; 2026-07-28 is stateless.
        const sessionId = served.attributes["mcp.session.id"]
        if (revision === "2025-11-25") {
          assert.isString(sessionId)
          assert.match(sessionId as string, /^[\x21-\x7e]+$/)
        } else assert.isUndefined(sessionId)
      }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
    })
  }
})
