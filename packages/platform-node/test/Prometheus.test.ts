/**
 * NodeMcpServer's opt-in Prometheus endpoint (`metrics`): off by default
 * (404); on, `GET /metrics` serves the MCP metrics in the Prometheus text
 * format behind the MCP endpoint's Host/Origin check, and the sessions record
 * them. Over real HTTP on 127.0.0.1.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import * as Http from "node:http"

const Echo = Tool.make("prometheus-echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed({ content: [{ type: "text" as const, text }] })
})
const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "scraped", version: "1.0.0" })))

const listen = (options?: NodeMcpServer.HttpOptions) =>
  Effect.flatMap(Layer.build(NodeMcpServer.layerHttp(Server, options)), (context) =>
    NodeMcpServer.url.pipe(Effect.provideContext(context))
  )

/**
 * Tells when the server has finished serving a request. Installed as the tracer, it makes the span effect's
 * HTTP server opens for each request it serves, which ends when the request's fiber does: once its response
 * is written, a streamed body to its end, and the body's finalizers have run (an interrupted body's too,
 * when the client went away). `served` gives a Deferred done at the next such end of `method path`.
 */
const servedRequests = () => {
  const waiting: Array<{ readonly method: string; readonly path: string; readonly done: Deferred.Deferred<void> }> = []
  class ServerSpan extends Tracer.NativeSpan {
    override end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
      super.end(endTime, exit)
      if (this.kind !== "server") return
      const method = this.attributes.get("http.request.method")
      const path = this.attributes.get("url.path")
      for (const waiter of waiting) {
        if (waiter.method === method && waiter.path === path) Deferred.doneUnsafe(waiter.done, Exit.void)
      }
    }
  }
  return {
    tracer: Tracer.make({ span: (options) => new ServerSpan(options) }),
    served: (method: string, path: string) => {
      const done = Deferred.makeUnsafe<void>()
      waiting.push({ method, path, done })
      return done
    }
  }
}

/** A GET with headers of our own (fetch would not let us set Host). */
const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(
    () =>
      new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const request = Http.get(url, { headers }, (response) => {
          let body = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => {
            body += chunk
          })
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, type: response.headers["content-type"] ?? "", body })
          )
        })
        request.on("error", reject)
      })
  )

const callEcho = (base: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url: `${base}/mcp` }), {
        clientInfo: { name: "scraper-test", version: "1.0.0" },
        supportedVersions: ["2025-11-25"]
      })
      yield* client.callTool("prometheus-echo", { text: "hi" })
    })
  )

describe("NodeMcpServer metrics (Prometheus)", () => {
  it.live("off by default: no /metrics", () =>
    Effect.gen(function* () {
      const base = yield* listen()
      assert.strictEqual((yield* get(`${base}/metrics`)).status, 404)
    })
  )

  it.live("metrics: true serves the request metrics in the Prometheus text format", () =>
    Effect.gen(function* () {
      const base = yield* listen({ metrics: true })
      yield* callEcho(base)
      const scraped = yield* get(`${base}/metrics`)
      assert.strictEqual(scraped.status, 200)
      assert.match(scraped.type, /^text\/plain; version=0\.0\.4/)
      // The histogram of the served call, its labels the attributes (dots made underscores).
      const count = scraped.body
        .split("\n")
        .find(
          (line) =>
            line.startsWith("mcp_server_operation_duration_count{") &&
            line.includes('gen_ai_tool_name="prometheus-echo"')
        )
      assert.isDefined(count, scraped.body)
      assert.match(count!, /mcp_method_name="tools\/call"/)
      assert.match(count!, / 1$/)
    })
  )

  it.live("the endpoint is behind the Host/Origin check of the MCP endpoint, and has its own path", () =>
    Effect.gen(function* () {
      const base = yield* listen({ metrics: { path: "/internal/metrics" } })
      assert.strictEqual((yield* get(`${base}/internal/metrics`)).status, 200)
      assert.strictEqual((yield* get(`${base}/metrics`)).status, 404)
      assert.strictEqual((yield* get(`${base}/internal/metrics`, { host: "evil.example" })).status, 403)
      assert.strictEqual((yield* get(`${base}/internal/metrics`, { origin: "http://evil.example" })).status, 403)
      assert.strictEqual((yield* get(`${base}/internal/metrics`, { origin: base })).status, 200)
    })
  )

  it.live("the sessions open and the bytes each HTTP transport carried, Streamable HTTP and legacy SSE", () =>
    Effect.gen(function* () {
      // The registry is the process's: each check reads how much a counter moved.
      const count = (metric: Metric.Counter<number>, attributes: Record<string, string>) =>
        Metric.value(Metric.withAttributes(metric, attributes)).pipe(Effect.map((state) => state.count))
      const open = (transport: string) =>
        Metric.value(Metric.withAttributes(McpMetrics.serverActiveSessions, { "mcp.transport": transport })).pipe(
          Effect.map((state) => state.value)
        )
      const io = (transport: string, direction: string) =>
        count(McpMetrics.transportIo, { "mcp.transport": transport, "network.io.direction": direction })
      const { tracer, served } = servedRequests()
      // Built under the tracer: the server serves its requests with it.
      const base = yield* listen({ metrics: true, legacySse: true }).pipe(Effect.withTracer(tracer))
      // The request whose end closes the session on the server: the DELETE the client sends as it closes
      // (the session is closed before its answer), or the legacy event stream (the session lives as long).
      for (const [transport, layer, [method, path]] of [
        ["streamable-http", NodeHttpClient.layerStreamableHttp({ url: `${base}/mcp` }), ["DELETE", "/mcp"]],
        ["sse", NodeHttpClient.layerSse({ url: `${base}/sse` }), ["GET", "/sse"]]
      ] as const) {
        const ended = served(method, path)
        const [opened, received, sent] = [
          yield* open(transport),
          yield* io(transport, "receive"),
          yield* io(transport, "transmit")
        ]
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* McpClient.connect(layer, {
              clientInfo: { name: "scraper-test", version: "1.0.0" },
              supportedVersions: ["2025-11-25"]
            })
            assert.strictEqual(yield* open(transport), opened + 1, transport)
            // Scraped as a gauge: a Prometheus counter never goes down, and this one does when the session closes.
            const scraped = (yield* get(`${base}/metrics`)).body
            assert.include(scraped, "# TYPE mcp_server_active_sessions gauge")
            assert.include(scraped, `mcp_server_active_sessions{mcp_transport="${transport}"} ${opened + 1}`)
            const text = "x".repeat(1000)
            yield* client.callTool("prometheus-echo", { text })
            // The call went in a body and came back in another: each at least the text long.
            assert.isAbove((yield* io(transport, "receive")) - received, text.length, transport)
            assert.isAbove((yield* io(transport, "transmit")) - sent, text.length, transport)
          })
        )
        // Closed by the client: once the server has served the request that ended the session, its count is back.
        yield* Deferred.await(ended)
        assert.strictEqual(yield* open(transport), opened, transport)
      }
    })
  )
})
