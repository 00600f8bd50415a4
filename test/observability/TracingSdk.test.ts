/**
 * Trace context between effect-mcp and the official SDK 2.x, real peers on
 * both revisions: the SDK client (`@modelcontextprotocol/client` 2.4.0, over
 * Streamable HTTP to a Node server on 127.0.0.1) sending `traceparent`,
 * `tracestate` and `baggage` in `_meta` gets its trace continued by our
 * server (the SERVER span's parent is the SDK's span id, same trace id) and
 * its baggage to our handler; our client's context is what an SDK server's
 * handler reads from its request's `_meta` (the SDK server is a child
 * process over stdio, fixtures/sdkTraceServer.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Baggage from "@effect-mcp/engine/Baggage"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ServerProcess from "../support/ServerProcess.ts"

/** Answers with the baggage entries of the request it serves. */
const baggage = Tool.make("baggage", {
  input: Schema.Struct({}),
  handler: () => Effect.map(Baggage.entries, (entries) => JSON.stringify(entries))
})

const Server = Tool.layer(baggage).pipe(Layer.provideMerge(McpServer.layer({ name: "traced", version: "1.0.0" })))

const sdkServer = new URL("./fixtures/sdkTraceServer.ts", import.meta.url).pathname

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string =>
  (result.content[0] as { readonly text: string }).text

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const sdkSpanId = "00f067aa0ba902b7"

const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ["2025-11-25", "2026-07-28"]

describe("trace context with the official SDK 2.x", () => {
  for (const revision of revisions) {
    it.live(`our server continues the trace of the SDK client's traceparent (${revision})`, () => {
      const recorder = SpanRecorder.make()
      return Effect.gen(function* () {
        const listening = yield* Layer.build(NodeMcpServer.layerHttp(Server))
        const url = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(listening))}/mcp`
        const client = new Client(
          { name: "sdk2-client", version: "2.4.0" },
          { versionNegotiation: { mode: revision === "2026-07-28" ? { pin: revision } : "legacy" } }
        )
        yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url))))
        yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
        assert.strictEqual(client.getNegotiatedProtocolVersion?.(), revision)
        const result = yield* Effect.promise(() =>
          client.callTool({
            name: "baggage",
            arguments: {},
            _meta: {
              traceparent: `00-${traceId}-${sdkSpanId}-01`,
              tracestate: "sdk=1",
              baggage: "tenant=acme"
            }
          })
        )
        assert.deepStrictEqual(JSON.parse(textOf(result as { content: ReadonlyArray<unknown> })), { tenant: "acme" })
        const served = recorder.named("tools/call baggage", "server")
        const parent = SpanRecorder.parentOf(served)
        assert.strictEqual(parent?._tag, "ExternalSpan")
        assert.strictEqual(parent?.spanId, sdkSpanId)
        assert.strictEqual(served.traceId, traceId)
        assert.strictEqual(Tracing.tracestateOf(served), "sdk=1")
        assert.strictEqual(served.attributes.get("mcp.protocol.version"), revision)
      }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
    })

    it.live(
      `an SDK server's handler reads our client's traceparent and baggage (${revision})`,
      () => {
        const recorder = SpanRecorder.make()
        return Effect.gen(function* () {
          const client = yield* McpClient.connect(
            NodeStdio.layerClient({
              command: ServerProcess.node,
              args: [...ServerProcess.sourceConditions, sdkServer],
              cwd: ServerProcess.root
            }),
            { clientInfo: { name: "tracing-sdk-test", version: "1.0.0" }, supportedVersions: [revision] }
          )
          const result = yield* client.callTool("meta", {}).pipe(Baggage.withEntries({ tenant: "acme" }))
          const seen = JSON.parse(textOf(result))
          const call = recorder.named("tools/call meta", "client")
          assert.strictEqual(seen.traceparent, `00-${call.traceId}-${call.spanId}-01`)
          assert.strictEqual(seen.baggage, "tenant=acme")
        }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
      },
      30_000
    )
  }
})
