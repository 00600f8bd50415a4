/**
 * Request metrics after the OpenTelemetry semantic conventions for MCP,
 * recorded with effect's `Metric` (so an OTLP or Prometheus exporter from
 * `effect/observability` exports them): the duration of every request on the
 * side that sends it (`mcp.client.operation.duration`) and on the side that
 * serves it (`mcp.server.operation.duration`), in seconds, by method, tool
 * and outcome (`error.type`); a histogram's count is the number of requests.
 *
 * Off unless `Enabled` is true in the context a session is made in: decided
 * once per session, so an unmetered session does no metric work per request.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Tracing from "./Tracing.ts"

/**
 * Turns request metrics on for the sessions made where it is true (default
 * false), e.g. `Layer.succeed(McpMetrics.Enabled, true)`.
 */
export const Enabled: Context.Reference<boolean> = Context.Reference<boolean>("@effect-mcp/engine/McpMetrics/Enabled", {
  defaultValue: () => false
})

/** The bucket boundaries (seconds) the conventions advise for MCP operation durations. */
export const boundaries: ReadonlyArray<number> = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/** `mcp.client.operation.duration`: a request as the sender sees it, until its response (seconds). */
export const clientOperationDuration: Metric.Histogram<number> = Metric.histogram("mcp.client.operation.duration", {
  description: "The duration of an MCP request as observed by its sender, until the response is received (s)",
  boundaries
})

/** `mcp.server.operation.duration`: a request as the receiver serves it, until its result (seconds). */
export const serverOperationDuration: Metric.Histogram<number> = Metric.histogram("mcp.server.operation.duration", {
  description: "The duration of an MCP request as observed by its receiver, until the result is ready (s)",
  boundaries
})

/**
 * `mcp.server.active_requests`: requests being served now, by method (an
 * up-down counter: each request adds one when it starts and removes it when
 * it ends).
 */
export const serverActiveRequests: Metric.Counter<number> = Metric.counter("mcp.server.active_requests", {
  description: "The MCP requests being served"
})

/** The metric attributes of a finished request: method, tool or prompt name, and `error.type` when it failed. */
const attributesOf = (method: string, params: unknown, errorType: string | undefined): Record<string, string> => {
  const attributes: Record<string, unknown> = { [Tracing.Attributes.methodName]: method }
  Tracing.annotateTarget(method, Tracing.asObject(params), attributes)
  // The resource URI is unbounded: no metric series per resource.
  delete attributes[Tracing.Attributes.resourceUri]
  if (errorType !== undefined) attributes[Tracing.Attributes.errorType] = errorType
  return attributes as Record<string, string>
}

/**
 * Runs a request and records its duration in the histogram of `side` (the
 * sender is the client side, whichever role it plays). The Peer does so for
 * every request when `Enabled` is on.
 */
export const timed = <A, E, R>(
  side: "client" | "server",
  method: string,
  params: unknown,
  request: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const timedRequest = Effect.flatMap(Clock.currentTimeMillis, (start) =>
    Effect.onExit(request, (exit) =>
      Effect.flatMap(Clock.currentTimeMillis, (end) =>
        Metric.update(
          Metric.withAttributes(
            side === "client" ? clientOperationDuration : serverOperationDuration,
            attributesOf(method, params, Tracing.errorTypeOf(method, exit))
          ),
          (end - start) / 1000
        )
      )
    )
  )
  if (side === "client") return timedRequest
  const active = Metric.withAttributes(serverActiveRequests, { [Tracing.Attributes.methodName]: method })
  return Effect.andThen(Metric.update(active, 1), Effect.ensuring(timedRequest, Metric.update(active, -1)))
}
