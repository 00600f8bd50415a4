/**
 * The trace one call makes when its tool asks the client for a sampling (the
 * tool and the client's handler are in traceTools.ts): the check that client
 * call -> server span -> (the server's sampling request ->) the client's
 * answer -> its handler is one trace, per revision.
 */
import { assert } from "@effect/vitest"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import type * as Tracer from "effect/Tracer"

export { answer, ask } from "./traceTools.ts"

/** The one recorded span of that name and kind. */
export const named = (
  spans: ReadonlyArray<SpanRecorder.RecordedSpan>,
  name: string,
  kind: Tracer.SpanKind
): SpanRecorder.RecordedSpan => {
  const found = spans.filter((span) => span.name === name && span.kind === kind)
  assert.strictEqual(
    found.length,
    1,
    `${kind} ${name} in ${spans.map((span) => `${span.kind} ${span.name}`).join(", ")}`
  )
  return found[0]!
}

/**
 * Checks the trace of `client.callTool("ask", {})` made under the span `app`,
 * from the spans of both sides (plain records: they may come from another
 * process); returns the client's (first) call span and the server span continuing it.
 */
export const assertOneTrace = (
  spans: ReadonlyArray<SpanRecorder.RecordedSpan>,
  revision: ProtocolVersion.ProtocolVersion
): { readonly clientCall: SpanRecorder.RecordedSpan; readonly served: SpanRecorder.RecordedSpan } => {
  const app = named(spans, "app", "internal")
  const clientCalls = spans.filter((span) => span.name === "tools/call ask" && span.kind === "client")
  const serverCalls = spans.filter((span) => span.name === "tools/call ask" && span.kind === "server")
  const samplingServed = named(spans, "sampling/createMessage", "server")
  const handler = named(spans, "my-sampling-handler", "internal")
  const clientCall = clientCalls[0]!

  assert.strictEqual(clientCall.parentSpanId, app.spanId)
  // The server's span continues the client's: same trace, the client's span as its (external) parent.
  const served = serverCalls.find((span) => span.parentSpanId === clientCall.spanId)
  assert.isDefined(served, "a server span continues the client's span")
  assert.isTrue(served!.parentIsExternal)
  const stateless = revision === "2026-07-28"
  if (stateless) {
    // The sampling is an input request of the server's first round; the answer continues that round's
    // span, and the retried call is sent under it.
    assert.strictEqual(clientCalls.length, 2)
    assert.strictEqual(serverCalls.length, 2)
    assert.strictEqual(samplingServed.parentSpanId, served!.spanId)
    assert.strictEqual(clientCalls[1]!.parentSpanId, served!.spanId)
    assert.strictEqual(serverCalls.find((span) => span !== served)!.parentSpanId, clientCalls[1]!.spanId)
  } else {
    assert.strictEqual(clientCalls.length, 1)
    const samplingRequest = named(spans, "sampling/createMessage", "client")
    assert.strictEqual(samplingRequest.parentSpanId, served!.spanId)
    assert.strictEqual(samplingServed.parentSpanId, samplingRequest.spanId)
  }
  assert.strictEqual(handler.parentSpanId, samplingServed.spanId)
  assert.isFalse(handler.parentIsExternal)
  const all = spans.filter(
    (span) => span.name === "app" || span.name.startsWith("tools/call") || span.name.includes("sampling")
  )
  assert.strictEqual(all.length, stateless ? 7 : 6)
  for (const span of all) {
    assert.strictEqual(span.traceId, app.traceId, `${span.kind} ${span.name}`)
    assert.strictEqual(span.outcome, "success", `${span.kind} ${span.name}`)
  }

  return { clientCall, served: served! }
}
