/**
 * What travels with a request's trace context, over memory on both
 * revisions: W3C baggage in `_meta` both ways (the caller's reaches the
 * server's handler, and the handler's sampling request carries it on to the
 * client's handler), the `tracestate` of the trace kept on every hop, log
 * lines written while a request is served annotated with its span's
 * `trace_id` and `span_id`; and none of it when tracing is off.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Baggage from "@effect-mcp/engine/Baggage"
import * as Tracing from "@effect-mcp/engine/Tracing"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import { answer, ask, tenant } from "./traceTools.ts"

const Server = Layer.mergeAll(Tool.layer(ask), Tool.layer(tenant)).pipe(
  Layer.provideMerge(McpServer.layer({ name: "traced", version: "1.0.0" }))
)

const connect = (revision: ProtocolVersion.ProtocolVersion, sent: Array<Transport.Outgoing> = []) =>
  McpTest.connect(Server, {
    revision,
    clientHandlers: answer,
    // Records every frame the client sends.
    clientTransport: (end) =>
      Effect.succeed({
        ...end,
        send: (frame, options) =>
          Effect.andThen(
            Effect.sync(() => sent.push(frame)),
            end.send(frame, options)
          )
      })
  })

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string =>
  (result.content[0] as { readonly text: string }).text

const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ["2025-11-25", "2026-07-28"]

describe("trace context beyond traceparent", () => {
  for (const revision of revisions) {
    it.effect(`baggage crosses both ways and reaches the handlers on each side (${revision})`, () => {
      const recorder = SpanRecorder.make()
      const sent: Array<Transport.Outgoing> = []
      return Effect.gen(function* () {
        const { client } = yield* connect(revision, sent)
        const result = yield* client
          .callTool("tenant", {})
          .pipe(Baggage.withEntries({ tenant: "acme", "user-id": "7" }))
        assert.deepStrictEqual(JSON.parse(textOf(result)), {
          served: { tenant: "acme", "user-id": "7" },
          sampled: { tenant: "acme", "user-id": "7" }
        })
        const call = sent.find((frame) => (frame as JsonRpc.Request).method === "tools/call") as JsonRpc.Request
        const meta = (call.params as { readonly _meta: Record<string, unknown> })._meta
        assert.strictEqual(meta.baggage, "tenant=acme,user-id=7")
      }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
    })

    it.effect(`the trace's tracestate is kept on every hop (${revision})`, () => {
      const recorder = SpanRecorder.make()
      const caller = Tracing.parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=x1")!
      return Effect.gen(function* () {
        const { client } = yield* connect(revision)
        yield* client.callTool("ask", {}).pipe(Effect.withParentSpan(caller))
        const spans = recorder.spans.filter(
          (span) => span.name === "tools/call ask" || span.name.startsWith("sampling")
        )
        assert.isAtLeast(spans.length, 3)
        for (const span of spans) {
          assert.strictEqual(span.traceId, caller.traceId, `${span.kind} ${span.name}`)
          assert.strictEqual(Tracing.tracestateOf(span), "vendor=x1", `${span.kind} ${span.name}`)
        }
        // The client's span of the server's sampling request continues what the server sent.
        const sampling = recorder.named("sampling/createMessage", "server")
        assert.strictEqual(SpanRecorder.parentOf(sampling)?._tag, "ExternalSpan")
      }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
    })
  }

  it.effect("a log line written while a request is served carries its span's trace_id and span_id", () => {
    const recorder = SpanRecorder.make()
    const lines: Array<{ readonly message: unknown; readonly annotations: Readonly<Record<string, unknown>> }> = []
    const capture = Logger.make((options) => {
      lines.push({ message: options.message, annotations: options.fiber.getRef(References.CurrentLogAnnotations) })
    })
    return Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25")
      yield* client.callTool("tenant", {})
      const served = recorder.named("tools/call tenant", "server")
      const line = lines.find((entry) => String(entry.message).includes("serving tenant"))
      assert.isDefined(line)
      assert.strictEqual(line!.annotations.trace_id, served.traceId)
      assert.strictEqual(line!.annotations.span_id, served.spanId)
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer), Effect.provide(Logger.layer([capture])))
  })

  it.effect("with no tracer installed no baggage is sent and handlers see none", () => {
    const sent: Array<Transport.Outgoing> = []
    const lines: Array<Readonly<Record<string, unknown>>> = []
    const capture = Logger.make((options) => {
      lines.push(options.fiber.getRef(References.CurrentLogAnnotations))
    })
    return Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25", sent)
      const result = yield* client.callTool("tenant", {}).pipe(Baggage.withEntries({ tenant: "acme" }))
      assert.deepStrictEqual(JSON.parse(textOf(result)), { served: {}, sampled: {} })
      for (const frame of sent) {
        const meta = ((frame as JsonRpc.Request).params as { readonly _meta?: Record<string, unknown> } | undefined)
          ?._meta
        assert.isUndefined(meta?.baggage)
        assert.isUndefined(meta?.traceparent)
      }
      assert.isAtLeast(lines.length, 1)
      for (const annotations of lines) assert.isUndefined(annotations.trace_id)
    }).pipe(Effect.scoped, Effect.provide(Logger.layer([capture])))
  })
})

describe("Baggage", () => {
  it("parses and formats W3C baggage, skipping malformed members and properties", () => {
    assert.deepStrictEqual(Baggage.parse("a=1, b = x%20y ;prop=1,bad,=no,c=%E0%A4%A,d=4"), { a: "1", b: "x y", d: "4" })
    assert.strictEqual(Baggage.format({ tenant: "acme", note: "a,b c" }), "tenant=acme,note=a%2Cb%20c")
    assert.deepStrictEqual(Baggage.parse(Baggage.format({ k: "v;=,%" })), { k: "v;=,%" })
  })

  it.effect("withEntries adds to the current baggage, keeping its other members as they were", () =>
    Effect.gen(function* () {
      const value = yield* Effect.service(Baggage.Current).pipe(
        Baggage.withEntries({ b: "2", c: "3" }),
        Effect.provideService(Baggage.Current, "a=1;p=q,b=0")
      )
      assert.strictEqual(value, "a=1;p=q,b=2,c=3")
    })
  )
})
