/**
 * Acceptance 3 of issue 15: the everything server, started as a process with
 * the standard OpenTelemetry variables pointing at a test OTLP/HTTP receiver
 * (test/support/OtlpReceiver.ts, 127.0.0.1 port 0), delivers spans and
 * metrics that decode (protobuf by default, JSON when asked) and carry the
 * MCP names and attributes; `OTEL_TRACES_EXPORTER=none` keeps traces home.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as OtlpReceiver from "../support/OtlpReceiver.ts"
import * as ServerProcess from "../support/ServerProcess.ts"

/** This environment without any OTEL_ variable of the runner's, plus `otel`. */
const envWith = (otel: Record<string, string>): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_"))),
  // Export soon after the calls rather than at the defaults (5 s for spans, 60 s for metrics).
  OTEL_BSP_SCHEDULE_DELAY: "100",
  OTEL_METRIC_EXPORT_INTERVAL: "200",
  ...otel
})

const spawn = (otel: Record<string, string>) =>
  Effect.gen(function* () {
    const child = yield* ServerProcess.spawnChild(
      ServerProcess.node,
      [ServerProcess.everythingBin, "--http", "--port", "0"],
      {
        env: envWith(otel)
      }
    )
    const match = yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/)
    return `${match[1]!}/mcp`
  })

/** Connects our client over Streamable HTTP on `revision`, makes two calls (one a tool error) and closes. */
const drive = (url: string, revision: "2025-11-25" | "2026-07-28") =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url }), {
        clientInfo: { name: "otlp-test", version: "1.0.0" },
        supportedVersions: [revision]
      })
      yield* client.listTools()
      yield* client.callTool("test_simple_text", {})
      const failed = yield* client.callTool("test_error_handling", {})
      assert.isTrue(failed.isError)
    })
  )

const SERVER = 2
const CLIENT = 3

const cliBin = fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url))

/** Waits until `find` finds something in what `receiver` got, looking again at each request it records. */
const untilIn =
  (receiver: OtlpReceiver.Receiver) =>
  <A>(find: () => A | undefined): Effect.Effect<A, ServerProcess.ProcessError> =>
    ServerProcess.waitFor(() => (find() === undefined ? "" : "found"), /found/, undefined, receiver.received).pipe(
      Effect.map(() => find()!)
    )

describe("OTLP export configured by OTEL_* variables", () => {
  it.live(
    "spans and metrics arrive as protobuf with the MCP names, attributes and the configured resource",
    () =>
      Effect.gen(function* () {
        const receiver = yield* OtlpReceiver.start
        const until = untilIn(receiver)
        const url = yield* spawn({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=secret%20value",
          OTEL_SERVICE_NAME: "otlp-test-server",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,team=mcp"
        })
        yield* drive(url, "2025-11-25")
        const simple = yield* until(() => receiver.spans().find((span) => span.name === "tools/call test_simple_text"))
        assert.strictEqual(simple.kind, SERVER)
        assert.match(simple.traceId, /^[0-9a-f]{32}$/)
        assert.match(simple.spanId, /^[0-9a-f]{16}$/)
        assert.strictEqual(simple.attributes["mcp.method.name"], "tools/call")
        assert.strictEqual(simple.attributes["gen_ai.tool.name"], "test_simple_text")
        assert.strictEqual(simple.attributes["gen_ai.operation.name"], "execute_tool")
        assert.strictEqual(simple.attributes["mcp.protocol.version"], "2025-11-25")
        assert.match(String(simple.attributes["mcp.session.id"]), /.+/)
        assert.isString(simple.attributes["jsonrpc.request.id"])
        assert.strictEqual(simple.resource["service.name"], "otlp-test-server")
        assert.strictEqual(simple.resource["service.version"], "0.1.0")
        assert.strictEqual(simple.resource["deployment.environment.name"], "test")
        assert.strictEqual(simple.resource.team, "mcp")

        const failed = yield* until(() =>
          receiver.spans().find((span) => span.name === "tools/call test_error_handling")
        )
        assert.strictEqual(failed.attributes["error.type"], "tool_error")
        assert.isTrue(receiver.spans().some((span) => span.name === "tools/list" && span.kind === SERVER))
        assert.isTrue(receiver.spans().some((span) => span.name === "initialize" && span.kind === SERVER))

        // Metrics: the request durations by method and tool, with the same resource.
        const timed = () =>
          receiver
            .points()
            .find(
              (point) =>
                point.metric === "mcp.server.operation.duration" &&
                point.attributes["gen_ai.tool.name"] === "test_simple_text"
            )
        const duration = yield* until(timed)
        assert.strictEqual(duration.type, "histogram")
        // In seconds, as the conventions give it (before, every metric went out as "1").
        assert.strictEqual(duration.unit, "s")
        assert.strictEqual(duration.count, 1)
        assert.isAbove(duration.sum!, 0)
        assert.strictEqual(duration.attributes["mcp.method.name"], "tools/call")
        assert.strictEqual(duration.resource["service.name"], "otlp-test-server")
        const toolError = yield* until(() =>
          receiver
            .points()
            .find(
              (point) =>
                point.metric === "mcp.server.operation.duration" && point.attributes["error.type"] === "tool_error"
            )
        )
        assert.strictEqual(toolError.attributes["gen_ai.tool.name"], "test_error_handling")

        // The transport metrics: the session opened over Streamable HTTP and the bytes it carried.
        const session = yield* until(() =>
          receiver
            .points()
            .find(
              (point) =>
                point.metric === "mcp.server.active_sessions" && point.attributes["mcp.transport"] === "streamable-http"
            )
        )
        assert.strictEqual(session.type, "gauge")
        for (const direction of ["receive", "transmit"]) {
          const bytes = yield* until(() =>
            receiver
              .points()
              .find(
                (point) =>
                  point.metric === "mcp.transport.io" &&
                  point.attributes["mcp.transport"] === "streamable-http" &&
                  point.attributes["network.io.direction"] === direction
              )
          )
          assert.isAbove(bytes.value!, 0, direction)
          assert.strictEqual(bytes.unit, "By", direction)
        }

        // Every request was protobuf (the specification's default) with the configured header, and decoded.
        const exports = receiver.requests().filter((request) => request.path !== "/v1/logs")
        assert.isTrue(exports.some((request) => request.path === "/v1/traces"))
        assert.isTrue(exports.some((request) => request.path === "/v1/metrics"))
        for (const request of exports) {
          assert.strictEqual(request.contentType, "application/x-protobuf")
          assert.strictEqual(request.headers["x-collector-token"], "secret value")
        }
        assert.deepStrictEqual(receiver.errors(), [])
      }),
    60_000
  )

  it.live(
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends JSON, and OTEL_TRACES_EXPORTER=none sends no spans",
    () =>
      Effect.gen(function* () {
        const receiver = yield* OtlpReceiver.start
        const until = untilIn(receiver)
        const url = yield* spawn({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_TRACES_EXPORTER: "none",
          OTEL_LOGS_EXPORTER: "none"
        })
        yield* drive(url, "2026-07-28")
        const timed = () => receiver.points().filter((point) => point.metric === "mcp.server.operation.duration")
        yield* until(() => timed().find((point) => point.attributes["gen_ai.tool.name"] === "test_simple_text"))
        // Several more metric exports (200 ms apart) span many span batches (100 ms): none may come.
        const seen = receiver.requests().length
        yield* until(() => (receiver.requests().length >= seen + 3 ? true : undefined))
        const paths = new Set(receiver.requests().map((request) => request.path))
        assert.deepStrictEqual([...paths], ["/v1/metrics"])
        for (const request of receiver.requests()) assert.strictEqual(request.contentType, "application/json")
        assert.deepStrictEqual(receiver.spans(), [])
        // No OTEL_SERVICE_NAME: the server names itself.
        assert.strictEqual(timed()[0]?.resource["service.name"], "mcp-everything-server")
        assert.deepStrictEqual(receiver.errors(), [])
      }),
    60_000
  )

  it.live(
    "the effect-mcp CLI exports its client span, and the server continues its trace",
    () =>
      Effect.gen(function* () {
        const receiver = yield* OtlpReceiver.start
        const until = untilIn(receiver)
        const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }
        const url = yield* spawn(otel)
        const cli = yield* ServerProcess.spawnChild(
          ServerProcess.node,
          [cliBin, "call", url, "test_simple_text", "{}"],
          {
            env: envWith(otel)
          }
        )
        // The CLI exits after the call; its spans are flushed before it does.
        const code = yield* Effect.callback<number | null>((resume) => {
          if (cli.process.exitCode !== null) return resume(Effect.succeed(cli.process.exitCode))
          cli.process.once("exit", (exitCode) => resume(Effect.succeed(exitCode)))
        })
        assert.strictEqual(code, 0, cli.stderr())
        const client = receiver
          .spans()
          .find((span) => span.name === "tools/call test_simple_text" && span.kind === CLIENT)
        assert.isDefined(client, JSON.stringify(receiver.spans().map((span) => span.name)))
        assert.strictEqual(client!.resource["service.name"], "effect-mcp")
        assert.strictEqual(client!.attributes["gen_ai.tool.name"], "test_simple_text")
        const served = yield* until(() =>
          receiver.spans().find((span) => span.name === "tools/call test_simple_text" && span.kind === SERVER)
        )
        assert.strictEqual(served.resource["service.name"], "mcp-everything-server")
        assert.strictEqual(served.traceId, client!.traceId)
        assert.strictEqual(served.parentSpanId, client!.spanId)
        assert.deepStrictEqual(receiver.errors(), [])
      }),
    60_000
  )

  it.live(
    "a stdio server exports its spans and metrics, and flushes them when its client closes stdin",
    () =>
      Effect.gen(function* () {
        const receiver = yield* OtlpReceiver.start
        const until = untilIn(receiver)
        // Long intervals: what arrives was flushed as the server ended, not exported on a timer.
        const env = envWith({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_BSP_SCHEDULE_DELAY: "60000",
          OTEL_METRIC_EXPORT_INTERVAL: "60000"
        })
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* McpClient.connect(
              NodeStdio.layerClient({
                command: ServerProcess.node,
                args: [...ServerProcess.sourceConditions, ServerProcess.everythingBin, "--stdio"],
                env
              }),
              { clientInfo: { name: "otlp-test", version: "1.0.0" }, supportedVersions: ["2025-11-25"] }
            )
            yield* client.callTool("test_simple_text", {})
          })
        )
        const served = yield* until(() =>
          receiver.spans().find((span) => span.name === "tools/call test_simple_text" && span.kind === SERVER)
        )
        assert.strictEqual(served.attributes["mcp.protocol.version"], "2025-11-25")
        const session = yield* until(() =>
          receiver
            .points()
            .find(
              (point) => point.metric === "mcp.server.active_sessions" && point.attributes["mcp.transport"] === "stdio"
            )
        )
        assert.strictEqual(session.type, "gauge")
        assert.isDefined(
          receiver
            .points()
            .find(
              (point) =>
                point.metric === "mcp.transport.io" &&
                point.attributes["mcp.transport"] === "stdio" &&
                point.attributes["network.io.direction"] === "receive" &&
                point.value! > 0
            )
        )
        assert.deepStrictEqual(receiver.errors(), [])
      }),
    60_000
  )
})
