/**
 * The spans of one request, when tracing is on (Tracing.enabled): the
 * sender's CLIENT span, whose context goes out in `params._meta`, and the
 * receiver's SERVER span, which continues the context it came with. Only
 * reached when tracing is on, so nothing here is on the untraced hot path.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Tracer from "effect/Tracer"
import * as Tracing from "../Tracing.ts"

const A = Tracing.Attributes

type Params = { readonly [key: string]: unknown }

const asObject = (value: unknown): Params | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Params) : undefined

/** The low-cardinality target of a method (the tool or prompt name), for the span name and attributes. */
const annotateTarget = (method: string, params: Params | undefined, attributes: Record<string, unknown>) => {
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

/** Records how a request failed: the JSON-RPC code for an error answer, the error's tag otherwise. */
const recordFailure = (span: Tracer.Span, error: unknown): void => {
  if (McpError.isMcpError(error)) {
    const code = String(McpError.toErrorObject(error).code)
    span.attribute(A.errorType, code)
    span.attribute(A.statusCode, code)
  } else {
    const tag = typeof error === "object" && error !== null ? (error as { _tag?: unknown })._tag : undefined
    span.attribute(A.errorType, typeof tag === "string" ? tag : "_OTHER")
  }
}

/** A tool result with `isError: true` is a failed tool call for the conventions. */
const recordResult = (span: Tracer.Span, method: string, result: unknown): void => {
  if (method === "tools/call" && asObject(result)?.isError === true) span.attribute(A.errorType, "tool_error")
}

const recordExit = (span: Tracer.Span, method: string, exit: Exit.Exit<unknown, unknown>): void => {
  if (Exit.isSuccess(exit)) recordResult(span, method, exit.value)
  else {
    const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (failure !== undefined) recordFailure(span, failure.error)
  }
}

/** Adds the span's trace context to a request's params, keeping any `_meta` already there. */
const inject = (params: object | undefined, span: Tracer.Span): Params => {
  const object = asObject(params)
  const meta: Record<string, unknown> = { ...asObject(object?._meta) }
  meta[Tracing.TRACEPARENT] = Tracing.formatTraceparent(span)
  const tracestate = Tracing.tracestateOf(span)
  if (tracestate !== undefined) meta[Tracing.TRACESTATE] = tracestate
  return { ...object, _meta: meta }
}

/** Annotates a span with what the session knows (protocol version, session id): the Dispatcher. */
export interface Annotate {
  readonly annotateSpan?: ((span: Tracer.Span) => void) | undefined
}

/**
 * An outgoing request under a CLIENT span whose context the request carries.
 * `send` gets the params to send and learns the request id through the span.
 */
export const outgoing = <E>(
  method: string,
  params: object | undefined,
  annotate: Annotate,
  send: (params: object, span: Tracer.Span) => Effect.Effect<unknown, E>
): Effect.Effect<unknown, E> => {
  const attributes: Record<string, unknown> = { [A.methodName]: method }
  const name = annotateTarget(method, asObject(params), attributes)
  return Effect.useSpan(name, { kind: "client", attributes }, (span) => {
    annotate.annotateSpan?.(span)
    return Effect.onExit(send(inject(params, span), span), (exit) => Effect.sync(() => recordExit(span, method, exit)))
  })
}

/** Records the id an outgoing request was sent with. */
export const recordRequestId = (span: Tracer.Span, id: JsonRpc.RequestId): void => {
  span.attribute(A.requestId, String(id))
}

/**
 * Serves an incoming request under a SERVER span: a child of the span its
 * `_meta.traceparent` names, or the root of a new trace when it names none
 * (a valid one only: anything else is ignored). The span is the handler's
 * parent span, so the requests the handler makes are its children.
 */
export const incoming = <A, E, R>(
  request: JsonRpc.Request,
  annotate: Annotate,
  handler: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const params = asObject(request.params)
  const meta = asObject(params?._meta)
  const parent =
    meta === undefined ? undefined : Tracing.parseTraceparent(meta[Tracing.TRACEPARENT], meta[Tracing.TRACESTATE])
  const attributes: Record<string, unknown> = {
    [A.methodName]: request.method,
    [A.requestId]: String(request.id)
  }
  const name = annotateTarget(request.method, params, attributes)
  const options: Tracer.SpanOptionsNoTrace =
    parent === undefined ? { kind: "server", attributes, root: true } : { kind: "server", attributes, parent }
  return Effect.useSpan(name, options, (span) => {
    annotate.annotateSpan?.(span)
    return Effect.onExit(Effect.withParentSpan(handler, span), (exit) =>
      Effect.sync(() => recordExit(span, request.method, exit))
    )
  })
}
