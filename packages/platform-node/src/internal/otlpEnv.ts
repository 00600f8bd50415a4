/**
 * The OTLP exporters of `effect/observability`, configured by the standard
 * OpenTelemetry environment variables (loaded by `NodeTelemetry.layer` only
 * when an endpoint is set, so a start without telemetry never loads them).
 *
 * effect's `layerFromConfig` of each signal reads the endpoints, headers,
 * compression, timeouts, intervals and the resource; what this module adds is
 * where effect departs from the specification: an unset
 * `OTEL_{TRACES,METRICS,LOGS}_EXPORTER` means `otlp` (effect reads it as
 * none), `OTEL_EXPORTER_OTLP_PROTOCOL` (and per signal) picks protobuf (the
 * default) or JSON, the application names the service when neither
 * `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` does, and
 * `OTEL_EXPORTER_OTLP_TIMEOUT` (and per signal) bounds each export request
 * (effect uses it only for the flush at shutdown).
 */
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Layer from "effect/Layer"
import * as OtlpLogger from "effect/observability/OtlpLogger"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"

/** The environment, as `process.env` types it. */
export type Env = Readonly<Record<string, string | undefined>>

/** One of the three OpenTelemetry signals, as it is spelled in the variables' names. */
export type Signal = "TRACES" | "METRICS" | "LOGS"

const signals: ReadonlyArray<Signal> = ["TRACES", "METRICS", "LOGS"]

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

/** `OTEL_SDK_DISABLED=true` (case-insensitive, as the specification reads booleans). */
export const disabled = (env: Env): boolean => env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true"

/** The exporters a signal names (`OTEL_<SIGNAL>_EXPORTER`, comma-separated); `otlp` when unset. */
export const exporters = (env: Env, signal: Signal): ReadonlyArray<string> => {
  const value = env[`OTEL_${signal}_EXPORTER`]
  if (!set(value)) return ["otlp"]
  return value
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "")
}

/** The protocol of a signal: its own `OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL`, else the common one, else `http/protobuf`. */
export const protocol = (env: Env, signal: Signal): string => {
  const own = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`]
  const common = env.OTEL_EXPORTER_OTLP_PROTOCOL
  return (set(own) ? own : set(common) ? common : "http/protobuf").trim().toLowerCase()
}

/**
 * How long one export request of a signal may take: its own
 * `OTEL_EXPORTER_OTLP_<SIGNAL>_TIMEOUT`, else the common
 * `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds; a value that is not a positive
 * integer is ignored), else 10 s, the specification's default.
 */
export const timeout = (env: Env, signal: Signal): Duration.Duration => {
  for (const value of [env[`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`], env.OTEL_EXPORTER_OTLP_TIMEOUT]) {
    if (!set(value)) continue
    const millis = Number(value.trim())
    if (Number.isSafeInteger(millis) && millis > 0) return Duration.millis(millis)
  }
  return Duration.seconds(10)
}

/**
 * `client` with a deadline on each request, from the send to the last byte of
 * the answer. effect's exporter bounds none of its requests: against a
 * receiver that accepts and never answers, every export (one more each time a
 * batch fills) stayed open until undici gave up (5 minutes, then three
 * retries), holding its batch. Past the deadline the request is interrupted,
 * which aborts it (closing the connection), and fails with a transport error:
 * the exporter retries it (three times, 1 s apart), then drops the batch and
 * pauses for 60 s. The answer's body is read here, within the deadline (the
 * response keeps it for the exporter, which only drains it).
 */
export const withDeadline =
  (deadline: Duration.Duration) =>
  (client: HttpClient.HttpClient): HttpClient.HttpClient =>
    HttpClient.transform(client, (response, request) =>
      response.pipe(
        Effect.tap((response) => Effect.ignore(response.arrayBuffer)),
        Effect.timeoutOrElse({
          duration: deadline,
          orElse: () =>
            Effect.fail(
              new HttpClientError.HttpClientError({
                reason: new HttpClientError.TransportError({
                  request,
                  description: `no answer within ${Duration.format(deadline)} (OTEL_EXPORTER_OTLP_TIMEOUT)`
                })
              })
            )
        })
      )
    )

/** Whether a signal has somewhere to go: its own endpoint or the common one. */
const hasEndpoint = (env: Env, signal: Signal): boolean =>
  set(env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT)

/**
 * Whether a signal is exported: the SDK is not disabled, an endpoint is set
 * and its exporters include `otlp`.
 */
export const exported = (env: Env, signal: Signal): boolean =>
  !disabled(env) && hasEndpoint(env, signal) && exporters(env, signal).includes("otlp")

/** What the exporters need besides the environment. */
export interface Options {
  /** `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
  readonly serviceName: string
  /** `service.version` when the environment names none. */
  readonly serviceVersion?: string | undefined
}

const resourceNames = (env: Env, key: string): boolean =>
  (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",").some((entry) => entry.split("=")[0]?.trim() === key)

/**
 * The record effect's configuration reads: the environment, with the
 * exporter of a signal that must not export forced to `none` (so effect's
 * reading agrees with `exported`), and the service named by the application
 * where the environment names none (explicit options would override the
 * environment in effect's resource; defaults in the record do not).
 */
export const record = (env: Env, options: Options): Record<string, string | undefined> => {
  const result: Record<string, string | undefined> = { ...env }
  for (const signal of signals) result[`OTEL_${signal}_EXPORTER`] = exported(env, signal) ? "otlp" : "none"
  if (!set(env.OTEL_SERVICE_NAME) && !resourceNames(env, "service.name")) result.OTEL_SERVICE_NAME = options.serviceName
  if (
    options.serviceVersion !== undefined &&
    !set(env.OTEL_SERVICE_VERSION) &&
    !resourceNames(env, "service.version")
  ) {
    result.OTEL_SERVICE_VERSION = options.serviceVersion
  }
  return result
}

const serialization = (env: Env, signal: Signal): Layer.Layer<OtlpSerialization.OtlpSerialization> | string => {
  const name = protocol(env, signal)
  if (name === "http/protobuf") return OtlpSerialization.layerProtobuf
  if (name === "http/json") return OtlpSerialization.layerJson
  return `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL=${name} is not supported (http/protobuf or http/json): ${signal.toLowerCase()} are not exported`
}

const exporterOf = (signal: Signal) =>
  signal === "TRACES"
    ? OtlpTracer.layerFromConfig()
    : signal === "METRICS"
      ? OtlpMetrics.layerFromConfig()
      : // The logs still go where they went (stderr): OTLP is one more destination.
        OtlpLogger.layerFromConfig({ mergeWithExisting: true })

/**
 * The exporters the environment asks for, over `fetch` with `withDeadline`; with metrics
 * exported, `McpMetrics.Enabled` is on so sessions record them.
 */
export const layer = (env: Env, options: Options): Layer.Layer<never> => {
  const warnings: Array<string> = []
  const layers: Array<Layer.Layer<never>> = []
  for (const signal of signals) {
    if (!exported(env, signal)) continue
    const format = serialization(env, signal)
    if (typeof format === "string") {
      warnings.push(format)
      continue
    }
    // Each signal posts with its own deadline (the client of the environment, wrapped).
    const client = Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, withDeadline(timeout(env, signal)))
    )
    // Each exporter also provides its `Flusher`; nothing here uses it (the exporters flush when the Layer closes).
    layers.push(Layer.provide(exporterOf(signal), [format, client]) as unknown as Layer.Layer<never>)
    if (signal === "METRICS") layers.push(Layer.succeed(McpMetrics.Enabled, true))
  }
  const warn = Layer.effectDiscard(Effect.forEach(warnings, (warning) => Effect.logWarning(warning), { discard: true }))
  return Layer.mergeAll(warn, ...layers).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(record(env, options))))
  )
}
