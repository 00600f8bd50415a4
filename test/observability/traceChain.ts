/**
 * The trace one call makes when its tool asks the client for a sampling: a
 * recording tracer, the tool, the client's sampling handler, and the check
 * that client call -> server span -> (the server's sampling request ->) the
 * client's answer -> its handler is one trace, per revision.
 */
import { assert } from "@effect/vitest"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"

/** A tracer that keeps every span it makes (an in-memory exporter). */
export const recording = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer }
}

/** A tool that asks the client for a sampling and answers with its text. */
export const ask = Tool.make("ask", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.map(
      Sampling.createMessage({ messages: [{ role: "user", content: { type: "text", text: "?" } }], maxTokens: 5 }),
      Sampling.text
    )
})

/** The client's sampling handler, under a span of its own. */
export const answer = SamplingHandler.layer(() =>
  Effect.succeed({ role: "assistant" as const, content: { type: "text" as const, text: "!" }, model: "m" }).pipe(
    Effect.withSpan("my-sampling-handler")
  )
)

/** The one span of that name and kind. */
export const named = (
  spans: ReadonlyArray<Tracer.NativeSpan>,
  name: string,
  kind: Tracer.SpanKind
): Tracer.NativeSpan => {
  const found = spans.filter((span) => span.name === name && span.kind === kind)
  assert.strictEqual(
    found.length,
    1,
    `${kind} ${name} in ${spans.map((span) => `${span.kind} ${span.name}`).join(", ")}`
  )
  return found[0]!
}

/** The parent of a span, if any. */
export const parentOf = (span: Tracer.AnySpan): Tracer.AnySpan | undefined =>
  span._tag === "Span" ? Option.getOrUndefined(span.parent) : undefined

/**
 * Checks the trace of `client.callTool("ask", {})` made under the span `app`;
 * returns the client's (first) call span and the server span continuing it.
 */
export const assertOneTrace = (
  spans: ReadonlyArray<Tracer.NativeSpan>,
  revision: ProtocolVersion.ProtocolVersion
): { readonly clientCall: Tracer.NativeSpan; readonly served: Tracer.NativeSpan } => {
  const app = spans.find((span) => span.name === "app")!
  const clientCalls = spans.filter((span) => span.name === "tools/call ask" && span.kind === "client")
  const serverCalls = spans.filter((span) => span.name === "tools/call ask" && span.kind === "server")
  const samplingServed = named(spans, "sampling/createMessage", "server")
  const handler = named(spans, "my-sampling-handler", "internal")
  const clientCall = clientCalls[0]!

  assert.strictEqual(parentOf(clientCall), app)
  // The server's span continues the client's: same trace, the client's span as its (external) parent.
  const served = serverCalls.find((span) => parentOf(span)?.spanId === clientCall.spanId)
  assert.isDefined(served, "a server span continues the client's span")
  const stateless = revision === "2026-07-28"
  if (stateless) {
    // The sampling is an input request of the server's first round; the answer continues that round's
    // span, and the retried call is sent under it.
    assert.strictEqual(clientCalls.length, 2)
    assert.strictEqual(serverCalls.length, 2)
    assert.strictEqual(parentOf(samplingServed)?.spanId, served!.spanId)
    assert.strictEqual(parentOf(clientCalls[1]!)?.spanId, served!.spanId)
    assert.strictEqual(parentOf(serverCalls.find((span) => span !== served)!)?.spanId, clientCalls[1]!.spanId)
  } else {
    assert.strictEqual(clientCalls.length, 1)
    const samplingRequest = named(spans, "sampling/createMessage", "client")
    assert.strictEqual(parentOf(samplingRequest)?.spanId, served!.spanId)
    assert.strictEqual(parentOf(samplingServed)?.spanId, samplingRequest.spanId)
  }
  assert.strictEqual(parentOf(handler), samplingServed)
  const all = spans.filter(
    (span) => span.name === "app" || span.name.startsWith("tools/call") || span.name.includes("sampling")
  )
  assert.strictEqual(all.length, stateless ? 7 : 6)
  for (const span of all) {
    assert.strictEqual(span.traceId, app.traceId, `${span.kind} ${span.name}`)
    assert.strictEqual(span.status._tag, "Ended", `${span.kind} ${span.name}`)
  }

  return { clientCall, served: served! }
}
