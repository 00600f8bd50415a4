/**
 * Request spans and trace context across the wire (engine `Tracing`): a
 * client call, the server's span serving it, the server's sampling request
 * made from the tool handler and the client's sampling handler form one
 * trace; an invalid `traceparent` is ignored; with no tracer installed no
 * `traceparent` is sent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as TraceChain from "./traceChain.ts"

const echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

/** A tool that reports one progress step before it answers. */
const steps = Tool.make("steps", {
  input: Schema.Struct({}),
  handler: () => Effect.as(ServerRequest.progress({ progress: 1, total: 2 }), "done")
})

/** Every frame the client sends, as it goes out. */
type Sent = Array<Transport.Outgoing>

/** An end whose sends (plain-call `trySend` ones too) are recorded in `sent`. */
const recorded = (end: MemoryTransport.End, sent: Sent): Transport.TransportShape => {
  const trySend = end.trySend
  return {
    ...end,
    send: (frame, options) =>
      Effect.andThen(
        Effect.sync(() => sent.push(frame)),
        end.send(frame, options)
      ),
    trySend:
      trySend === undefined
        ? undefined
        : (frame, related) => {
            sent.push(frame)
            return trySend.call(end, frame, related)
          },
    attach: end.attach?.bind(end)
  }
}

/** A transport Layer to a fresh server with `ask`, `echo` and `steps`; records what each side sends. */
const transportTo = (
  sent: Sent,
  serverTracer?: Tracer.Tracer,
  serverSent: Sent = []
): Layer.Layer<Transport.Transport> =>
  Layer.effect(
    Transport.Transport,
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
      const server = yield* Layer.build(
        Layer.mergeAll(Tool.layer(TraceChain.ask), Tool.layer(echo), Tool.layer(steps)).pipe(
          Layer.provideMerge(McpServer.layer({ name: "traced", version: "1.0.0" }))
        )
      )
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, recorded(serverEnd, serverSent)),
        Effect.provideContext(server),
        serverTracer === undefined ? (self) => self : Effect.withTracer(serverTracer)
      )
      return recorded(clientEnd, sent)
    })
  )

const clientInfo = { name: "tracing-test", version: "1.0.0" }

const metaOf = (frame: Transport.Outgoing): Record<string, unknown> | undefined => {
  const params = (frame as JsonRpc.Request).params as { _meta?: Record<string, unknown> } | undefined
  return params?._meta
}

const requestsSent = (sent: Sent, method: string): Array<JsonRpc.Request> =>
  sent.filter(
    (frame): frame is JsonRpc.Request => !Array.isArray(frame) && (frame as JsonRpc.Request).method === method
  )

const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ["2025-11-25", "2026-07-28"]

describe("request spans across the wire", () => {
  for (const revision of revisions) {
    it.effect(`client -> server -> sampling request -> sampling handler is one trace (${revision})`, () => {
      const recorder = SpanRecorder.make()
      const sent: Sent = []
      return Effect.gen(function* () {
        const client = yield* McpClient.connect(transportTo(sent), { clientInfo, supportedVersions: [revision] }).pipe(
          Effect.provide(TraceChain.answer)
        )
        const result = yield* client.callTool("ask", {}).pipe(Effect.withSpan("app"))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "!" }])

        const { clientCall, served } = TraceChain.assertOneTrace(recorder.records(), revision)

        // Attributes after the MCP semantic conventions.
        assert.strictEqual(clientCall.attributes["mcp.method.name"], "tools/call")
        assert.strictEqual(clientCall.attributes["gen_ai.tool.name"], "ask")
        assert.strictEqual(served.attributes["gen_ai.tool.name"], "ask")
        assert.strictEqual(served.attributes["mcp.protocol.version"], revision)
        assert.strictEqual(clientCall.attributes["mcp.protocol.version"], revision)
        const sentCall = requestsSent(sent, "tools/call")[0]!
        assert.strictEqual(clientCall.attributes["jsonrpc.request.id"], String(sentCall.id))
        assert.strictEqual(metaOf(sentCall)?.traceparent, `00-${clientCall.traceId}-${clientCall.spanId}-01`)
      }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
    })
  }

  it.effect("a failed call records error.type on both sides", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo([]), { clientInfo })
      const exit = yield* Effect.exit(client.request("tools/call", { name: "missing", arguments: {} }))
      assert.strictEqual(exit._tag, "Failure")
      const clientCall = recorder.named("tools/call missing", "client")
      // The server has no tool `missing`: its span is named by the method alone, the name asked for an attribute.
      const served = recorder.named("tools/call", "server")
      assert.strictEqual(served.attributes.get("gen_ai.tool.name"), "missing")
      assert.strictEqual(clientCall.attributes.get("error.type"), served.attributes.get("error.type"))
      assert.match(String(served.attributes.get("error.type")), /^-?\d+$/)
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
  })

  it.effect("an invalid traceparent is ignored: the server span starts a trace of its own", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      // Only the server traces: the client sends the caller's _meta as it is.
      const client = yield* McpClient.connect(transportTo([], recorder.tracer), { clientInfo })
      const invalid = [
        "00-00000000000000000000000000000000-0123456789abcdef-01",
        "00-0123456789abcdef0123456789abcdef-0000000000000000-01",
        "ff-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
        "00-0123456789ABCDEF0123456789ABCDEF-0123456789abcdef-01",
        "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01-extra",
        42
      ]
      for (const traceparent of invalid) {
        yield* client.request("tools/call", { name: "echo", arguments: { text: "x" }, _meta: { traceparent } })
      }
      const served = recorder.spans.filter((span) => span.name === "tools/call echo" && span.kind === "server")
      assert.strictEqual(served.length, invalid.length)
      for (const span of served) assert.isUndefined(SpanRecorder.parentOf(span))
      assert.strictEqual(new Set(served.map((span) => span.traceId)).size, invalid.length)
    }).pipe(Effect.scoped)
  })

  it.effect("a valid traceparent from the caller's params is continued (tracestate included)", () => {
    const recorder = SpanRecorder.make()
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    return Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo([], recorder.tracer), { clientInfo })
      yield* client.request("tools/call", {
        name: "echo",
        arguments: { text: "x" },
        _meta: { traceparent, tracestate: "k=v" }
      })
      const served = recorder.named("tools/call echo", "server")
      const parent = SpanRecorder.parentOf(served)
      assert.strictEqual(parent?._tag, "ExternalSpan")
      assert.strictEqual(parent?.traceId, "0af7651916cd43dd8448eb211c80319c")
      assert.strictEqual(parent?.spanId, "b7ad6b7169203331")
      assert.strictEqual(Tracing.tracestateOf(served), "k=v")
    }).pipe(Effect.scoped)
  })

  it.effect("a progress notification carries the span context of the request it is about", () => {
    const recorder = SpanRecorder.make()
    const serverSent: Sent = []
    return Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo([], undefined, serverSent), { clientInfo })
      const events = yield* Stream.runCollect(client.callToolWithProgress("steps", {}))
      assert.strictEqual(events.filter((event) => event._tag === "Progress").length, 1)
      const served = recorder.named("tools/call steps", "server")
      const progress = serverSent.filter(
        (frame) => !Array.isArray(frame) && (frame as JsonRpc.Notification).method === "notifications/progress"
      )
      assert.strictEqual(progress.length, 1)
      assert.strictEqual(metaOf(progress[0]!)?.traceparent, `00-${served.traceId}-${served.spanId}-01`)
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
  })

  it.effect("with no tracer installed nothing is traced and no traceparent is sent", () => {
    const sent: Sent = []
    const serverSent: Sent = []
    return Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo(sent, undefined, serverSent), { clientInfo }).pipe(
        Effect.provide(TraceChain.answer)
      )
      yield* client.callTool("ask", {})
      yield* client.callTool("echo", { text: "hi" }).pipe(Effect.withSpan("app"))
      yield* Stream.runDrain(client.callToolWithProgress("steps", {}))
      const calls = requestsSent(sent, "tools/call")
      // 2026-07-28 (the default) asks for the sampling in an input round: `ask` is sent twice.
      assert.isAtLeast(calls.length, 2)
      for (const call of calls) assert.isUndefined(metaOf(call)?.traceparent)
      const notified = serverSent.filter(
        (frame) => !Array.isArray(frame) && (frame as JsonRpc.Notification).method === "notifications/progress"
      )
      assert.strictEqual(notified.length, 1)
      assert.isUndefined(metaOf(notified[0]!)?.traceparent)
    }).pipe(Effect.scoped)
  })
})

describe("Tracing.parseTraceparent", () => {
  it("reads a W3C traceparent and its sampled flag", () => {
    const span = Tracing.parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
    assert.strictEqual(span?.traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.strictEqual(span?.spanId, "b7ad6b7169203331")
    assert.strictEqual(span?.sampled, false)
    assert.strictEqual(Tracing.formatTraceparent(span!), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
  })
})
