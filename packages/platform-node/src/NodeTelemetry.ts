/**
 * OpenTelemetry export configured by the standard environment variables, for
 * a server's or a client's `main`: traces, metrics and logs go over OTLP/HTTP
 * with the exporters of `effect/observability` when an endpoint is set.
 *
 * | variable | meaning |
 * | --- | --- |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL; each signal goes to `/v1/traces`, `/v1/metrics`, `/v1/logs` below it |
 * | `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT` | one signal's full URL (wins over the base) |
 * | `OTEL_EXPORTER_OTLP_HEADERS` (and per signal) | `key=value,...` (values URL-encoded) sent with every export |
 * | `OTEL_EXPORTER_OTLP_PROTOCOL` (and per signal) | `http/protobuf` (default) or `http/json`; `grpc` is not supported |
 * | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource (`service.name` defaults to the application's name) |
 * | `OTEL_{TRACES,METRICS,LOGS}_EXPORTER` | `otlp` (default) or `none` |
 * | `OTEL_SDK_DISABLED` | `true` exports nothing |
 * | `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_EXPORTER_OTLP_COMPRESSION` | batching, interval, gzip |
 * | `OTEL_EXPORTER_OTLP_TIMEOUT` (and per signal) | the deadline of each export request, answer included, and of the flush at shutdown (milliseconds; default 10 s per request) |
 *
 * Unlike an OpenTelemetry SDK, nothing is exported without an endpoint (no
 * implicit `localhost:4318`): with none set, `layer` is empty and the
 * exporters are never loaded (a stdio server starts as fast as without this).
 * Exported metrics turn `McpMetrics.Enabled` on; an installed tracer turns
 * request spans on.
 *
 * @example
 * ```ts
 * import { NodeMcpServer, NodeTelemetry } from "@effect-mcp/platform-node"
 * import { McpServer } from "@effect-mcp/server"
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect } from "effect"
 *
 * const Server = McpServer.layer({ name: "my-server", version: "1.0.0" })
 * NodeRuntime.runMain(
 *   NodeMcpServer.serveStdio(Server).pipe(Effect.provide(NodeTelemetry.layer({ serviceName: "my-server" })))
 * )
 * ```
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** What `layer` needs besides the environment. */
export interface Options {
  /** `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
  readonly serviceName: string
  /** `service.version` when the environment names none. */
  readonly serviceVersion?: string | undefined
  /** The variables to read. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

const endpointVariables = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
] as const

/**
 * Whether the environment may ask for export: an OTLP endpoint is set and
 * `OTEL_SDK_DISABLED` is not `true`. Reads a few variables and loads nothing.
 */
export const isConfigured = (env: Readonly<Record<string, string | undefined>> = process.env): boolean =>
  env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== "true" &&
  endpointVariables.some((name) => (env[name] ?? "").trim() !== "")

/**
 * The exporters the environment asks for (see the table above), as a Layer
 * to provide around the program: empty when `isConfigured` is false. The
 * exporters flush what they hold when the Layer closes.
 */
export const layer = (options: Options): Layer.Layer<never> => {
  const env = options.env ?? process.env
  if (!isConfigured(env)) return Layer.empty
  return Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("./internal/otlpEnv.ts")),
      (module) => module.layer(env, options)
    )
  )
}
