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
import * as Registry from "@effect-mcp/protocol/Registry"
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

// effect's OTLP exporter reads a metric's unit from its `unit` attribute (`seconds` is exported as UCUM `s`,
// `bytes` as `By`; without one, as `1`); its Prometheus exporter leaves that attribute out of the labels.
const secondsUnit = { unit: "seconds" }
const bytesUnit = { unit: "bytes" }

/** The bucket boundaries (seconds) the conventions advise for MCP operation durations. */
export const boundaries: ReadonlyArray<number> = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/** `mcp.client.operation.duration`: a request as the sender sees it, until its response (seconds). */
export const clientOperationDuration: Metric.Histogram<number> = Metric.histogram("mcp.client.operation.duration", {
  description: "The duration of an MCP request as observed by its sender, until the response is received (s)",
  boundaries,
  attributes: secondsUnit
})

/** `mcp.server.operation.duration`: a request as the receiver serves it, until its result (seconds). */
export const serverOperationDuration: Metric.Histogram<number> = Metric.histogram("mcp.server.operation.duration", {
  description: "The duration of an MCP request as observed by its receiver, until the result is ready (s)",
  boundaries,
  attributes: secondsUnit
})

/**
 * `mcp.server.active_requests`: requests being served now, by method (each
 * request adds one when it starts and removes it when it ends). A gauge, as
 * both exporters of `effect/observability` must read it: a Prometheus counter
 * never goes down (effect writes every counter as one), and OTLP exports the
 * gauge's current value.
 */
export const serverActiveRequests: Metric.Gauge<number> = Metric.gauge("mcp.server.active_requests", {
  description: "The MCP requests being served"
})

/**
 * The method as a metric attribute: a method no revision of the protocol
 * defines is `_OTHER`. A series is kept for as long as the process lives, so
 * a peer sending made-up methods would otherwise add one each.
 */
export const methodAttribute = (method: string): string => (knownMethods().has(method) ? method : "_OTHER")

let methods: ReadonlySet<string> | undefined
const knownMethods = (): ReadonlySet<string> => {
  methods ??= new Set(Registry.all.flatMap((revision) => [...revision.methods.keys()]))
  return methods
}

/**
 * The metric attributes of a finished request: method, tool or prompt name, and `error.type` when it failed.
 * Bounded whatever the peer sends: the method as `methodAttribute` says, and the tool or prompt named only when
 * the request was answered with a result (a tool that answered `isError` included), which only an item the
 * server has gets. A call for a made-up name fails (-32602) and adds no series of its own.
 */
const attributesOf = (method: string, params: unknown, errorType: string | undefined): Record<string, string> => {
  const attributes: Record<string, unknown> = { [Tracing.Attributes.methodName]: methodAttribute(method) }
  if (errorType === undefined || errorType === "tool_error") {
    Tracing.annotateTarget(method, Tracing.asObject(params), attributes)
    // The resource URI is unbounded: no metric series per resource.
    delete attributes[Tracing.Attributes.resourceUri]
  }
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
  const active = Metric.withAttributes(serverActiveRequests, {
    [Tracing.Attributes.methodName]: methodAttribute(method)
  })
  return Effect.andThen(Metric.modify(active, 1), Effect.ensuring(timedRequest, Metric.modify(active, -1)))
}

/** The transport a session or a byte went over, the `mcp.transport` attribute of the transport metrics. */
export type TransportName = "stdio" | "streamable-http" | "sse"

/**
 * `mcp.server.active_sessions`: sessions a server holds open now, by
 * `mcp.transport` (one added when a session opens, removed when it closes;
 * stateless Streamable HTTP requests are none). A gauge, like
 * `serverActiveRequests`.
 */
export const serverActiveSessions: Metric.Gauge<number> = Metric.gauge("mcp.server.active_sessions", {
  description: "The MCP sessions open on the server"
})

/**
 * `mcp.transport.io`: bytes a transport received or sent, by `mcp.transport`
 * and `network.io.direction` (`receive` / `transmit`), as they crossed the
 * wire: JSON-RPC lines on stdio, POST bodies and SSE events on HTTP (HTTP
 * headers not counted).
 */
export const transportIo: Metric.Counter<number> = Metric.counter("mcp.transport.io", {
  description: "The bytes an MCP transport received or sent",
  incremental: true,
  attributes: bytesUnit
})

/**
 * What a transport counts: its bytes both ways and the sessions it opens.
 * Made once per transport by `transportMeter` (its series are resolved
 * then), so counting is a plain call that allocates nothing.
 */
export interface TransportMeter {
  /** `bytes` came in. */
  readonly received: (bytes: number) => void
  /** `bytes` went out. */
  readonly sent: (bytes: number) => void
  /** A session opened (`delta` 1) or closed (-1). */
  readonly sessions: (delta: 1 | -1) => void
}

const bytesOf = (attributes: Record<string, string>): Metric.Counter<number> =>
  Metric.counter(transportIo.id, {
    description: transportIo.description,
    incremental: true,
    attributes: { ...bytesUnit, ...attributes }
  })

/**
 * The meter of a transport over `transport`, recording into the metric
 * registry of `context`; undefined when `Enabled` is off there, so a
 * transport's counting is one branch (`meter?.sent(n)`) when metrics are off.
 */
export const transportMeter = (
  transport: TransportName,
  context: Context.Context<never>
): TransportMeter | undefined => {
  if (!Context.get(context, Enabled)) return undefined
  const name = { "mcp.transport": transport }
  const received = bytesOf({ ...name, "network.io.direction": "receive" })
  const sent = bytesOf({ ...name, "network.io.direction": "transmit" })
  const sessions = Metric.gauge(serverActiveSessions.id, {
    description: serverActiveSessions.description,
    attributes: name
  })
  return {
    received: (bytes) => received.updateUnsafe(bytes, context),
    sent: (bytes) => sent.updateUnsafe(bytes, context),
    // A gauge's update sets it; modify adds to it.
    sessions: (delta) => sessions.modifyUnsafe(delta, context)
  }
}

/** `transportMeter` for the current context. */
export const currentTransportMeter = (transport: TransportName): Effect.Effect<TransportMeter | undefined> =>
  Effect.map(Effect.context<never>(), (context) => transportMeter(transport, context))
