/**
 * The transport metrics of `McpMetrics`: with `Enabled` a server transport
 * counts the sessions it holds open and the bytes it receives and sends, by
 * `mcp.transport`; without it nothing is recorded. Each test reads a registry
 * of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import * as Scope from "effect/Scope"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as Meter from "../src/internal/httpMeter.ts"
import { bytes, makeStdio } from "../../engine/test/stdioFakes.ts"

const serverInfo = { name: "metered-stdio", version: "1.0.0" }

const io = (transport: McpMetrics.TransportName, direction: "receive" | "transmit") =>
  Metric.value(
    Metric.withAttributes(McpMetrics.transportIo, { "mcp.transport": transport, "network.io.direction": direction })
  ).pipe(Effect.map((state) => state.count))

const open = (transport: McpMetrics.TransportName) =>
  Metric.value(Metric.withAttributes(McpMetrics.serverActiveSessions, { "mcp.transport": transport })).pipe(
    Effect.map((state) => state.value)
  )

/** Serves one stdio session in its own scope; returns the fake streams and the scope that closes it. */
const serveStdio = Effect.gen(function* () {
  const fake = yield* makeStdio
  const scope = yield* Scope.make()
  const server = yield* StdioTransport.makeServer().pipe(
    Effect.provideService(Stdio.Stdio, fake.stdio),
    Scope.provide(scope)
  )
  yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
    Effect.provideService(Transport.Transport, server),
    Scope.provide(scope)
  )
  return { fake, scope }
})

describe("transport metrics", () => {
  it.effect("stdio: one open session while the transport lives, and its bytes both ways", () =>
    Effect.gen(function* () {
      const { fake, scope } = yield* serveStdio
      assert.strictEqual(yield* open("stdio"), 1)
      const request = `${JSON.stringify(JsonRpc.request(1, "ping"))}\n`
      // Split across chunks: every byte counts once.
      yield* fake.stdin.write(request.slice(0, 9))
      yield* fake.stdin.write(request.slice(9))
      yield* fake.stdout.lines(1)
      assert.strictEqual(yield* io("stdio", "receive"), bytes(request).length)
      assert.strictEqual(yield* io("stdio", "transmit"), bytes(fake.stdout.text()).length)
      assert.isAbove(yield* io("stdio", "transmit"), 0)
      yield* Scope.close(scope, undefined as never)
      assert.strictEqual(yield* open("stdio"), 0)
    }).pipe(Effect.provideService(McpMetrics.Enabled, true), Effect.provideService(Metric.MetricRegistry, new Map()))
  )

  it.effect("off (the default), a transport records nothing", () =>
    Effect.gen(function* () {
      const { fake } = yield* serveStdio
      yield* fake.stdin.write(`${JSON.stringify(JsonRpc.request(1, "ping"))}\n`)
      yield* fake.stdout.lines(1)
      const recorded = (yield* Metric.snapshot).filter((snapshot) => snapshot.id.startsWith("mcp."))
      assert.deepStrictEqual(recorded, [])
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
  )

  it("no meter where metrics are off: a transport pays one branch", () => {
    assert.isUndefined(McpMetrics.transportMeter("stdio", Effect.runSync(Effect.context<never>())))
  })

  it.effect("HTTP: a whole body is counted as it is answered, a streamed one chunk by chunk as it is written", () =>
    Effect.gen(function* () {
      const meter = McpMetrics.transportMeter("streamable-http", yield* Effect.context<never>())!
      const sent = () => io("streamable-http", "transmit")
      const answer = Meter.handler(Effect.succeed(HttpServerResponse.text('{"jsonrpc":"2.0"}')), meter)
      yield* answer
      assert.strictEqual(yield* sent(), bytes('{"jsonrpc":"2.0"}').length)
      const events = [bytes("event: message\ndata: {}\n\n"), bytes("data: é\n\n")]
      const streamed = yield* Meter.handler(
        Effect.succeed(HttpServerResponse.stream(Stream.fromIterable(events))),
        meter
      )
      // Nothing is counted before the body is written.
      assert.strictEqual(yield* sent(), 17)
      if (streamed.body._tag !== "Stream") return assert.fail("expected a streamed body")
      yield* Stream.runDrain(streamed.body.stream)
      assert.strictEqual(yield* sent(), 17 + events[0]!.length + events[1]!.length)
      // Off, the handler is the handler itself.
      const handle = Effect.succeed(HttpServerResponse.empty())
      assert.strictEqual(Meter.handler(handle, undefined), handle)
    }).pipe(Effect.provideService(McpMetrics.Enabled, true), Effect.provideService(Metric.MetricRegistry, new Map()))
  )
})
