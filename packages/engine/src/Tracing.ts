/**
 * Trace context across the wire and the request spans of the Peer, after the
 * OpenTelemetry semantic conventions for MCP: every request, in either
 * direction, gets a span on each side (`{mcp.method.name} {target}`, kind
 * CLIENT for the sender and SERVER for the receiver, whose span names only a
 * target it has: see `SpanTarget`), and the sender's span context travels in
 * `params._meta.traceparent` (W3C Trace Context), where the receiver
 * continues it, with the W3C `baggage` when there is one (see `Baggage`). A
 * failed request's span ends with status ERROR, a `tools/call` answered with
 * `isError: true` included. A served request's log lines carry the `trace_id` and `span_id`
 * of its span (log annotations), and over HTTP its span links to the HTTP
 * request that carried it (`linkTransport`), as the conventions ask.
 *
 * Tracing is on when a tracer other than effect's default one is installed
 * (`Tracer.Tracer`, e.g. by an OTLP exporter Layer) in the context the
 * session is made in, and `References.TracerEnabled` is not false. It is decided once per session: with the default tracer
 * a message costs one branch and no span, allocation or `_meta` write.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import * as Baggage from "./Baggage.ts"

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

const A = Attributes

/** A request's params as an object. */
export type Params = { readonly [key: string]: unknown }

/** `value` as an object (not an array), or undefined. */
export const asObject = (value: unknown): Params | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Params) : undefined

/**
 * Adds the attributes of a request's target (tool, prompt or resource) to
 * `attributes`, and returns the name of the sender's CLIENT span:
 * `{method} {target}` for a tool or prompt (the sender chose it), the method
 * alone otherwise (a resource URI is unbounded). A SERVER span is named after
 * what the serving side has instead (`SpanTarget`).
 */
export const annotateTarget = (
  method: string,
  params: Params | undefined,
  attributes: Record<string, unknown>
): string => {
  switch (method) {
    case "tools/call": {
      const name = params?.name
      if (typeof name !== "string") return method
      attributes[A.toolName] = name
      attributes[A.operationName] = "execute_tool"
      return `${method} ${name}`
    }
    case "prompts/get": {
      const name = params?.name
      if (typeof name !== "string") return method
      attributes[A.promptName] = name
      return `${method} ${name}`
    }
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe": {
      // The URI is an attribute, not part of the name: it is high-cardinality.
      const uri = params?.uri
      if (typeof uri === "string") attributes[A.resourceUri] = uri
      return method
    }
    default:
      return method
  }
}

/**
 * The `error.type` of a finished request, or undefined when it succeeded:
 * the JSON-RPC code of an error answer, the error's tag for another failure
 * (a timeout, a closed session), `tool_error` for a tool result with
 * `isError: true` (a failed tool call for the conventions).
 */
export const errorTypeOf = (method: string, exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (Exit.isSuccess(exit)) {
    return method === "tools/call" && asObject(exit.value)?.isError === true ? "tool_error" : undefined
  }
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (failure === undefined) return Exit.hasInterrupts(exit) ? "interrupted" : "_OTHER"
  const error = failure.error
  if (McpError.isMcpError(error)) return String(McpError.toErrorObject(error).code)
  const tag = typeof error === "object" && error !== null ? (error as { _tag?: unknown })._tag : undefined
  return typeof tag === "string" ? tag : "_OTHER"
}

/**
 * What a `tools/call` span whose result has `isError: true` ends with: the
 * call failed for the conventions, so its span's status is ERROR, though the
 * request was answered with a result. The tool's content stays out of the
 * span (it may be anything, as the opt-in `gen_ai.tool.call.result` is).
 */
class ToolError extends Data.TaggedError("ToolError")<{ readonly message: string }> {}

const toolErrorMessage = "the tool's result has isError: true"

const recordExit = (span: Tracer.Span, method: string, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> => {
  const errorType = errorTypeOf(method, exit)
  if (errorType === undefined) return Effect.void
  span.attribute(A.errorType, errorType)
  // An error answer's code is also the response status.
  if (Exit.isFailure(exit) && /^-?\d+$/.test(errorType)) span.attribute(A.statusCode, errorType)
  if (errorType !== "tool_error") return Effect.void
  // effect ends a span with the exit of what ran under it, a success here: the span is ended now, as
  // `Effect.useSpan` would (same clock), with a failure, and `useSpan` leaves an ended span alone.
  return Effect.withFiber((fiber) => {
    const endTime = fiber.getRef(References.TracerTimingEnabled)
      ? fiber.getRef(Clock.Clock).currentTimeNanosUnsafe()
      : BigInt(0)
    span.end(endTime, Exit.fail(new ToolError({ message: toolErrorMessage })))
    return Effect.void
  })
}

/**
 * A copy of a request's params with the span's trace context in `_meta`
 * (any `_meta` already there kept), and `baggage` when given.
 */
export const withTraceContext = (
  params: object | undefined,
  span: Tracer.AnySpan,
  baggage?: string | undefined
): { readonly [key: string]: unknown } => {
  const object = asObject(params)
  const meta: Record<string, unknown> = { ...asObject(object?._meta) }
  meta[TRACEPARENT] = formatTraceparent(span)
  const tracestate = tracestateOf(span)
  if (tracestate !== undefined) meta[TRACESTATE] = tracestate
  if (baggage !== undefined) meta[Baggage.BAGGAGE] = baggage
  return { ...object, _meta: meta }
}

/**
 * The target a SERVER span is named after (`{mcp.method.name} {target}`), or
 * undefined for a span named by the method alone: given by the serving side
 * (`Peer.Dispatcher.spanTarget`; McpServer's names a tool or prompt it has),
 * asked once per traced request as its span starts. A span name must have
 * few values and a client may ask for any name: only the serving side knows
 * which ones are its own. The name the request gave stays in its attribute
 * (`gen_ai.tool.name`, `gen_ai.prompt.name`).
 */
export type SpanTarget = (method: string, params: Params | undefined) => string | undefined

/** Adds what a session knows (protocol version, session id) to a request's span: the Peer's Dispatcher. */
export interface Annotate {
  /** Adds the session's attributes to `span`, given the request's params (a stateless request names its revision). */
  readonly annotateSpan?: ((span: Tracer.Span, params: unknown) => void) | undefined
  /**
   * Adds what is known only once an outgoing request was answered (a Streamable HTTP client learns its
   * session id from the answer to `initialize`).
   */
  readonly annotateEnd?: ((span: Tracer.Span) => void) | undefined
}

/**
 * What serving a request under a span asks of the Peer: its `Annotate`, and
 * its dispatcher's `spanTarget` (a Peer without one names its SERVER spans by
 * the method alone).
 */
export interface Served extends Annotate {
  readonly dispatcher?: { readonly spanTarget?: SpanTarget | undefined } | undefined
}

// The HTTP request (its span, or the context its headers named) each MCP request came in with, by message.
// Weak: an entry goes with its message, and only an HTTP server with tracing on writes one.
const transportSpans = new WeakMap<object, Tracer.AnySpan>()

/**
 * Records the span of the transport exchange (the HTTP request) that carried
 * `request`: its SERVER span links to it. The MCP span's parent is the
 * sender's MCP span from `_meta`, not the HTTP request, which may carry
 * several MCP messages (or a retry of one): the conventions ask for a link.
 */
export const linkTransport = (request: object, span: Tracer.AnySpan): void => {
  transportSpans.set(request, span)
}

/** The `trace_id` and `span_id` log annotations of a span. */
export const logAnnotations = (span: Tracer.AnySpan): { readonly trace_id: string; readonly span_id: string } => ({
  trace_id: span.traceId,
  span_id: span.spanId
})

// A request's span is made by the Peer, not by user code: the stack trace effect would capture for it (an
// Error per request) points nowhere useful.
const noStack: Tracer.TraceOptions = { captureStackTrace: false }

/**
 * An outgoing request under a CLIENT span whose context the request carries
 * in `params._meta`: `send` gets the params to send and the span (see
 * `recordRequestId`). The Peer sends every request so when tracing is on.
 */
export const outgoing = <E>(
  method: string,
  params: object | undefined,
  annotate: Annotate,
  send: (params: object, span: Tracer.Span) => Effect.Effect<unknown, E>
): Effect.Effect<unknown, E> => {
  const attributes: Record<string, unknown> = { [A.methodName]: method }
  const name = annotateTarget(method, asObject(params), attributes)
  return Effect.withFiber((fiber) => {
    const baggage = fiber.getRef(Baggage.Current)
    return Effect.useSpan(name, { kind: "client", attributes }, (span) => {
      annotate.annotateSpan?.(span, params)
      // Under the span: what the transport does to send it (an HTTP POST and its span) is its child.
      return Effect.onExit(
        Effect.withParentSpan(send(withTraceContext(params, span, baggage), span), span, noStack),
        (exit) => {
          annotate.annotateEnd?.(span)
          return recordExit(span, method, exit)
        }
      )
    })
  })
}

/** Records the id an outgoing request was sent with. */
export const recordRequestId = (span: Tracer.Span, id: JsonRpc.RequestId): void => {
  span.attribute(A.requestId, String(id))
}

/**
 * Serves an incoming request under a SERVER span: a child of the span its
 * `_meta.traceparent` names, or the root of a new trace when it names none
 * (a valid one only: anything else is ignored), linked to the transport
 * exchange that carried it (`linkTransport`). The span is the handler's
 * parent span, so the requests the handler makes are its children; the
 * handler's log lines carry its `trace_id` and `span_id`, and its
 * `Baggage.Current` is the request's `_meta.baggage`. The Peer serves every
 * request so when tracing is on; a client answers a 2026-07-28 input request
 * so too (it has no JSON-RPC id). The span is named after the target
 * `annotate.dispatcher.spanTarget` gives, if any (see `SpanTarget`).
 */
export const incoming = <A, E, R>(
  request: { readonly method: string; readonly params?: unknown; readonly id?: JsonRpc.RequestId | undefined },
  annotate: Served | undefined,
  handler: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const method = request.method
  const params = asObject(request.params)
  const meta = asObject(params?._meta)
  const parent = meta === undefined ? undefined : parseTraceparent(meta[TRACEPARENT], meta[TRACESTATE])
  const attributes: Record<string, unknown> = { [A.methodName]: method }
  if (request.id !== undefined) attributes[A.requestId] = String(request.id)
  // The attributes name what the request asked for; the name, only a target the serving side has.
  annotateTarget(method, params, attributes)
  const target = annotate?.dispatcher?.spanTarget?.(method, params)
  const name = target === undefined ? method : `${method} ${target}`
  const transport = transportSpans.get(request)
  const options: Tracer.SpanOptionsNoTrace =
    parent === undefined ? { kind: "server", attributes, root: true } : { kind: "server", attributes, parent }
  const linked: Tracer.SpanOptionsNoTrace =
    transport === undefined ? options : { ...options, links: [{ span: transport, attributes: {} }] }
  const baggage = meta?.[Baggage.BAGGAGE]
  return Effect.useSpan(name, linked, (span) => {
    annotate?.annotateSpan?.(span, request.params)
    const served = Effect.annotateLogs(Effect.withParentSpan(handler, span, noStack), logAnnotations(span))
    return Effect.onExit(
      typeof baggage === "string" ? Effect.provideService(served, Baggage.Current, baggage) : served,
      (exit) => recordExit(span, method, exit)
    )
  })
}
