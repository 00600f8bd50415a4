/**
 * Trace context on the HTTP transport, after the OpenTelemetry MCP
 * conventions (real Streamable HTTP, a Node server on 127.0.0.1, port 0): the
 * POST that carries a request is sent under the request's CLIENT span, its
 * W3C `traceparent` (effect's HTTP client span) and `tracestate` headers are
 * continued by the server's HTTP span, and the MCP SERVER span, a child of
 * the MCP CLIENT span through `_meta`, links to that HTTP span. A client's
 * spans name the session (`mcp.session.id`). With tracing off on the client
 * the POST carries no trace header at all.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Effect from "effect/Effect"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as Layer from "effect/Layer"
import type * as Tracer from "effect/Tracer"
import * as TraceChain from "./traceChain.ts"

const Server = Tool.layer(TraceChain.ask).pipe(
  Layer.provideMerge(McpServer.layer({ name: "traced", version: "1.0.0" }))
)

const traceHeaders = ["traceparent", "tracestate", "b3"]

/** A server whose HTTP spans record the trace headers of each request (as `http.request.header.<name>`). */
const listen = Effect.gen(function* () {
  const listening = yield* Layer.build(NodeMcpServer.layerHttp(Server)).pipe(
    Effect.provideService(
      HttpMiddleware.TracerHeaderFilter,
      (name, phase) => phase === "request" && traceHeaders.includes(name)
    )
  )
  return `${yield* NodeMcpServer.url.pipe(Effect.provideContext(listening))}/mcp`
})

const clientInfo = { name: "tracing-http-headers-test", version: "1.0.0" }

const byId = (spans: ReadonlyArray<Tracer.NativeSpan>, spanId: string | undefined) =>
  spans.find((span) => span.spanId === spanId)

/** The trace a call continues: the caller's, with a `tracestate`. */
const caller = Tracing.parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=x1")!

/** Calls `ask` under `caller` from a client of a fresh server (`listen`) speaking `revision`. */
const callAsk = (revision: ProtocolVersion.ProtocolVersion) =>
  Effect.gen(function* () {
    const url = yield* listen
    const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url }), {
      clientInfo,
      supportedVersions: [revision]
    }).pipe(Effect.provide(TraceChain.answer))
    yield* client.callTool("ask", {}).pipe(Effect.withParentSpan(caller))
  })

/**
 * The MCP SERVER span `served` (a child of the MCP CLIENT span `call`) links to the HTTP SERVER span of the POST
 * that carried it, which continued the POST's headers: its `traceparent` names the HTTP CLIENT span, a child of
 * `call`, and its `tracestate` is the trace's (from `caller`).
 */
const assertCarried = (spans: ReadonlyArray<Tracer.NativeSpan>, call: Tracer.NativeSpan, served: Tracer.NativeSpan) => {
  assert.strictEqual(SpanRecorder.parentOf(served)?.spanId, call.spanId)
  assert.strictEqual(served.links.length, 1)
  const httpServer = byId(spans, served.links[0]!.span.spanId)!
  assert.strictEqual(httpServer.kind, "server")
  assert.strictEqual(httpServer.attributes.get("http.request.header.tracestate"), "vendor=x1")
  const httpClient = byId(spans, SpanRecorder.parentOf(httpServer)?.spanId)!
  assert.strictEqual(httpClient.kind, "client")
  assert.strictEqual(
    httpServer.attributes.get("http.request.header.traceparent"),
    `00-${httpClient.traceId}-${httpClient.spanId}-01`
  )
  assert.strictEqual(SpanRecorder.parentOf(httpClient)?.spanId, call.spanId)
  assert.strictEqual(httpClient.traceId, caller.traceId)
}

describe("trace context on the HTTP transport", () => {
  it.live("the POST goes under the MCP span; the server's MCP span links to the HTTP span continuing it", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      yield* callAsk("2025-11-25")

      const call = recorder.named("tools/call ask", "client")
      const served = recorder.named("tools/call ask", "server")
      assertCarried(recorder.spans, call, served)

      // The client's spans name the Streamable HTTP session, `initialize` included (its id comes with the answer).
      const sessionId = served.attributes.get("mcp.session.id")
      assert.isString(sessionId)
      assert.strictEqual(call.attributes.get("mcp.session.id"), sessionId)
      assert.strictEqual(recorder.named("initialize", "client").attributes.get("mcp.session.id"), sessionId)
      assert.strictEqual(recorder.named("sampling/createMessage", "server").attributes.get("mcp.session.id"), sessionId)
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
  })

  it.live("stateless 2026-07-28: each round's POST is linked the same way, and no span names a session", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      yield* callAsk("2026-07-28")

      // The sampling is an input round: the call is sent twice, each round a POST of its own.
      const served = recorder.spans.filter((span) => span.name === "tools/call ask" && span.kind === "server")
      assert.strictEqual(served.length, 2)
      for (const round of served) {
        const call = byId(recorder.spans, SpanRecorder.parentOf(round)?.spanId)!
        assert.strictEqual(call.kind, "client")
        assertCarried(recorder.spans, call, round)
      }
      for (const span of recorder.spans) assert.isFalse(span.attributes.has("mcp.session.id"), span.name)
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
  })

  it.live("with tracing off on the client, its POSTs carry no trace header", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      // Only the server traces: its HTTP spans show what the client's POSTs carried.
      const url = yield* listen.pipe(Effect.withTracer(recorder.tracer))
      const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url }), {
        clientInfo,
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provide(TraceChain.answer))
      yield* client.callTool("ask", {})
      const served = recorder.named("tools/call ask", "server")
      assert.isUndefined(SpanRecorder.parentOf(served))
      const httpServer = byId(recorder.spans, served.links[0]?.span.spanId)!
      assert.strictEqual(httpServer.kind, "server")
      for (const name of traceHeaders) assert.isFalse(httpServer.attributes.has(`http.request.header.${name}`), name)
      assert.isUndefined(SpanRecorder.parentOf(httpServer))
    }).pipe(Effect.scoped)
  })
})
