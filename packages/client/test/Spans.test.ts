/**
 * Spans at the public lifecycle boundaries: `McpClient.connect`,
 * `McpClient.make` (the handshake) and `McpServer.make` are recorded by an
 * installed tracer, a call adds one request span per side, the client's spans are
 * not the parent of what its handlers trace later, and with
 * `References.TracerEnabled` off none is recorded.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schema from "effect/Schema"

const echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

/** A transport Layer to a fresh server; the server lives as long as the Layer. */
const transportTo = (
  supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion>,
  tool: Tool.Tool = echo
): Layer.Layer<Transport.Transport> =>
  Layer.effect(
    Transport.Transport,
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
      const server = yield* Layer.build(
        Tool.layer(tool).pipe(
          Layer.provideMerge(McpServer.layer({ name: "traced", version: "1.0.0", supportedVersions }))
        )
      )
      yield* McpServer.makeSession.pipe(
        Effect.provideService(Transport.Transport, serverEnd),
        Effect.provideContext(server)
      )
      return clientEnd
    })
  )

const clientInfo = { name: "spans-test", version: "1.0.0" }

describe("lifecycle spans", () => {
  it.effect("connect, the handshake and the server's construction are spans; a call adds one per side", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo(), { clientInfo })
      const connect = recorder.named("McpClient.connect")
      const make = recorder.named("McpClient.make")
      const server = recorder.named("McpServer.make")
      assert.strictEqual(Option.getOrUndefined(make.parent), connect)
      // Made while the transport Layer was built, not under it: connect is no ambient parent span.
      assert.isUndefined(Option.getOrUndefined(server.parent))
      for (const span of [connect, make, server]) {
        assert.strictEqual(span.status._tag, "Ended", span.name)
        if (span.status._tag === "Ended") assert.strictEqual(span.status.exit._tag, "Success", span.name)
      }
      const before = recorder.spans.length
      yield* client.listTools()
      const result = yield* client.callTool("echo", { text: "hi" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "hi" }])
      // Each call is one span per side (Tracing in the engine), and nothing else.
      assert.deepStrictEqual(
        recorder.spans.slice(before).map((span) => `${span.kind} ${span.name}`),
        ["client tools/list", "server tools/list", "client tools/call echo", "server tools/call echo"]
      )
    }).pipe(Effect.withTracer(recorder.tracer))
  })

  it.effect("a span the client's sampling handler makes later does not hang under the ended connect spans", () => {
    const recorder = SpanRecorder.make()
    const ask = Tool.make("ask", {
      input: Schema.Struct({}),
      handler: () =>
        Effect.as(
          Sampling.createMessage({ messages: [{ role: "user", content: { type: "text", text: "?" } }], maxTokens: 5 }),
          "asked"
        )
    })
    const answer = SamplingHandler.layer(() =>
      Effect.succeed({ role: "assistant" as const, content: { type: "text" as const, text: "!" }, model: "m" }).pipe(
        Effect.withSpan("my-sampling-handler")
      )
    )
    return Effect.gen(function* () {
      const client = yield* McpClient.connect(transportTo(undefined, ask), {
        clientInfo,
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provide(answer))
      yield* client.callTool("ask", {})
      const handler = recorder.named("my-sampling-handler")
      const parent = Option.getOrUndefined(handler.parent)
      assert.notInclude(["McpClient.connect", "McpClient.make"], parent?._tag === "Span" ? parent.name : undefined)
    }).pipe(Effect.withTracer(recorder.tracer))
  })

  it.effect("a failed handshake ends its span with the failure", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      const exit = yield* Effect.exit(
        McpClient.connect(transportTo(["2025-06-18"]), { clientInfo, supportedVersions: ["2024-11-05"] })
      )
      assert.strictEqual(exit._tag, "Failure")
      const make = recorder.named("McpClient.make")
      assert.strictEqual(make.status._tag, "Ended")
      if (make.status._tag === "Ended") assert.strictEqual(make.status.exit._tag, "Failure")
    }).pipe(Effect.withTracer(recorder.tracer))
  })

  it.effect("References.TracerEnabled set to false records no span", () => {
    const recorder = SpanRecorder.make()
    const connectAndList = Effect.scoped(
      Effect.flatMap(McpClient.connect(transportTo(), { clientInfo }), (client) => client.listTools())
    )
    return Effect.gen(function* () {
      yield* connectAndList.pipe(Effect.provideService(References.TracerEnabled, false))
      assert.deepStrictEqual(
        recorder.spans.map((span) => span.name),
        []
      )
      // The same with tracing on records the spans: the switch, not their absence, made the difference.
      yield* connectAndList
      assert.includeMembers(
        recorder.spans.map((span) => span.name),
        ["McpClient.connect", "McpClient.make", "McpServer.make"]
      )
    }).pipe(Effect.withTracer(recorder.tracer))
  })
})
