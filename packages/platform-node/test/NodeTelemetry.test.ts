/**
 * NodeTelemetry: which OTEL_* settings turn which export on (the reading of
 * the standard variables where effect's own differs: an unset exporter means
 * `otlp`, the protocol picks the serialization, the application's service
 * name is a default only), and what the Layer installs. The export itself
 * is checked against a receiver in test/observability/Otlp.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as NodeTelemetry from "@effect-mcp/platform-node/NodeTelemetry"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as OtlpEnv from "../src/internal/otlpEnv.ts"

// Nothing listens on port 9 of this machine: an export fails at once, which is all these need
// (and the final flush as the Layer closes gives up after 100 ms).
const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "100" }
const options = { serviceName: "app", serviceVersion: "1.2.3" }

describe("NodeTelemetry", () => {
  it("is configured by an endpoint, unless the SDK is disabled", () => {
    assert.isFalse(NodeTelemetry.isConfigured({}))
    assert.isFalse(NodeTelemetry.isConfigured({ OTEL_SERVICE_NAME: "x", OTEL_TRACES_EXPORTER: "otlp" }))
    assert.isFalse(NodeTelemetry.isConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }))
    assert.isTrue(NodeTelemetry.isConfigured(endpoint))
    assert.isTrue(NodeTelemetry.isConfigured({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://c/v1/metrics" }))
    assert.isFalse(NodeTelemetry.isConfigured({ ...endpoint, OTEL_SDK_DISABLED: "TRUE" }))
    // Without an endpoint nothing is built, nor loaded.
    assert.strictEqual(NodeTelemetry.layer({ ...options, env: {} }), Layer.empty)
  })

  it("exports a signal unless its exporter is none, otlp being the default", () => {
    assert.isTrue(OtlpEnv.exported(endpoint, "TRACES"))
    assert.isFalse(OtlpEnv.exported({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }, "TRACES"))
    assert.isTrue(OtlpEnv.exported({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }, "METRICS"))
    assert.isTrue(OtlpEnv.exported({ ...endpoint, OTEL_METRICS_EXPORTER: "console, OTLP" }, "METRICS"))
    assert.isFalse(OtlpEnv.exported({ ...endpoint, OTEL_LOGS_EXPORTER: "console" }, "LOGS"))
    assert.isFalse(OtlpEnv.exported({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" }, "METRICS"))
    assert.isTrue(OtlpEnv.exported({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" }, "TRACES"))
    assert.isFalse(OtlpEnv.exported({ ...endpoint, OTEL_SDK_DISABLED: "true" }, "TRACES"))
  })

  it("picks the protocol per signal, protobuf by default", () => {
    assert.strictEqual(OtlpEnv.protocol({}, "TRACES"), "http/protobuf")
    assert.strictEqual(OtlpEnv.protocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, "TRACES"), "http/json")
    const mixed = { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf" }
    assert.strictEqual(OtlpEnv.protocol(mixed, "METRICS"), "http/protobuf")
    assert.strictEqual(OtlpEnv.protocol(mixed, "LOGS"), "http/json")
  })

  it("names the service only where the environment does not", () => {
    const named = OtlpEnv.record(endpoint, options)
    assert.strictEqual(named.OTEL_SERVICE_NAME, "app")
    assert.strictEqual(named.OTEL_SERVICE_VERSION, "1.2.3")
    assert.strictEqual(named.OTEL_TRACES_EXPORTER, "otlp")
    assert.strictEqual(OtlpEnv.record({ ...endpoint, OTEL_SERVICE_NAME: "ops" }, options).OTEL_SERVICE_NAME, "ops")
    const fromResource = OtlpEnv.record(
      { ...endpoint, OTEL_RESOURCE_ATTRIBUTES: "team=a, service.name=ops,service.version=9" },
      options
    )
    assert.isUndefined(fromResource.OTEL_SERVICE_NAME)
    assert.isUndefined(fromResource.OTEL_SERVICE_VERSION)
    // effect's reading of the exporters agrees with `exported`: what must not export says none.
    assert.strictEqual(
      OtlpEnv.record({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c" }, options).OTEL_METRICS_EXPORTER,
      "none"
    )
  })

  it.live("installs a tracer, and turns request metrics on only when metrics are exported", () =>
    Effect.gen(function* () {
      const observed = Effect.map(Effect.context<never>(), (context) => ({
        traced: Tracing.enabled(context),
        metered: Context.get(context, McpMetrics.Enabled)
      }))
      const all = yield* observed.pipe(Effect.provide(NodeTelemetry.layer({ ...options, env: endpoint })))
      assert.deepStrictEqual(all, { traced: true, metered: true })
      const tracesOnly = yield* observed.pipe(
        Effect.provide(NodeTelemetry.layer({ ...options, env: { ...endpoint, OTEL_METRICS_EXPORTER: "none" } }))
      )
      assert.deepStrictEqual(tracesOnly, { traced: true, metered: false })
      const metricsOnly = yield* observed.pipe(
        Effect.provide(
          NodeTelemetry.layer({
            ...options,
            env: { ...endpoint, OTEL_TRACES_EXPORTER: "none", OTEL_LOGS_EXPORTER: "none" }
          })
        )
      )
      assert.deepStrictEqual(metricsOnly, { traced: false, metered: true })
      // An unsupported protocol leaves that signal out (with a warning) rather than failing the program.
      const grpc = yield* observed.pipe(
        Effect.provide(
          NodeTelemetry.layer({ ...options, env: { ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" } })
        )
      )
      assert.deepStrictEqual(grpc, { traced: false, metered: true })
    })
  )
})
