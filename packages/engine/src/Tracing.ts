/**
 * Trace context across the wire and the request spans of the Peer, after the
 * OpenTelemetry semantic conventions for MCP: every request, in either
 * direction, gets a span on each side (`{mcp.method.name} {target}`, kind
 * CLIENT for the sender and SERVER for the receiver), and the sender's span
 * context travels in `params._meta.traceparent` (W3C Trace Context), where the
 * receiver continues it.
 *
 * Tracing is on when a tracer other than effect's default one is installed
 * (`Tracer.Tracer`, e.g. by an OTLP exporter Layer) in the context the
 * session is made in, and `References.TracerEnabled` is not false. It is decided once per session: with the default tracer
 * a message costs one branch and no span, allocation or `_meta` write.
 */
import * as Context from "effect/Context"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

/** The `_meta` key of the W3C `traceparent` (`00-{trace id}-{span id}-{flags}`). */
export const TRACEPARENT = "traceparent"

/** The `_meta` key of the W3C `tracestate`, passed on with `traceparent` when present. */
export const TRACESTATE = "tracestate"

/** Span attribute names of the OpenTelemetry semantic conventions for MCP that the Peer records. */
export const Attributes = {
  methodName: "mcp.method.name",
  sessionId: "mcp.session.id",
  protocolVersion: "mcp.protocol.version",
  resourceUri: "mcp.resource.uri",
  requestId: "jsonrpc.request.id",
  toolName: "gen_ai.tool.name",
  promptName: "gen_ai.prompt.name",
  operationName: "gen_ai.operation.name",
  errorType: "error.type",
  statusCode: "rpc.response.status_code"
} as const

/**
 * Whether the context has a tracer that records spans: any tracer but
 * effect's default one (which records nothing anybody can see), unless
 * `References.TracerEnabled` turns spans off.
 */
export const enabled = (context: Context.Context<never>): boolean =>
  Context.get(context, Tracer.Tracer) !== Tracer.nativeTracer && Context.get(context, References.TracerEnabled)

const TRACEPARENT_PATTERN = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const ZERO_TRACE = "00000000000000000000000000000000"
const ZERO_SPAN = "0000000000000000"

/**
 * The span a W3C `traceparent` names, or undefined when the value is not a
 * valid one (wrong shape, version `ff`, all-zero ids): an invalid header is
 * ignored, as Trace Context asks.
 */
export const parseTraceparent = (value: unknown, tracestate?: unknown): Tracer.ExternalSpan | undefined => {
  if (typeof value !== "string") return undefined
  const match = TRACEPARENT_PATTERN.exec(value)
  if (match === null) return undefined
  const [, version, traceId, spanId, flags] = match
  if (version === "ff" || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined
  // A future version may append fields; version 00 has exactly four.
  if (version === "00" && value.length !== 55) return undefined
  return Tracer.externalSpan({
    traceId: traceId!,
    spanId: spanId!,
    sampled: (Number.parseInt(flags!, 16) & 1) === 1,
    annotations:
      typeof tracestate === "string" && tracestate.length > 0 ? Context.make(TraceState, tracestate) : Context.empty()
  })
}

/** The W3C `traceparent` of a span. */
export const formatTraceparent = (span: Tracer.AnySpan): string =>
  `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/**
 * The `tracestate` an external span came with, kept in its annotations so a
 * span continuing it passes it on.
 */
export class TraceState extends Context.Service<TraceState, string>()("@effect-mcp/engine/Tracing/TraceState") {}

/** The `tracestate` to send with a span: the one of the nearest external ancestor that had one. */
export const tracestateOf = (span: Tracer.AnySpan | undefined): string | undefined => {
  let current = span
  while (current !== undefined) {
    const state = Context.getOrUndefined(current.annotations, TraceState)
    if (state !== undefined) return state
    current = current._tag === "Span" && current.parent._tag === "Some" ? current.parent.value : undefined
  }
  return undefined
}
