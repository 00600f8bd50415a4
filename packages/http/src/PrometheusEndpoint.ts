/**
 * An opt-in Prometheus scrape endpoint beside an MCP HTTP endpoint: `GET
 * /metrics` answers with every effect `Metric` of the process (the MCP
 * request, session and byte metrics of `McpMetrics` among them) in the
 * Prometheus text format of `effect/observability`, behind the same
 * `Host`/`Origin` check as the MCP endpoint, so a web page cannot read it
 * through DNS rebinding. It needs no session and no token: expose it only
 * where the scraper, and nobody else, can reach it. `NodeMcpServer`'s
 * `metrics` option adds it.
 */
import type * as HttpServeOptions from "./HttpServeOptions.ts"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import * as Wire from "./internal/httpWire.ts"

/** The content type of the Prometheus text exposition format. */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

/** Where and how the metrics are served, and the MCP endpoint's Host and Origin checks. Every field is optional. */
export interface Options extends HttpServeOptions.HostChecks {
  /** Path of the endpoint. Default `/metrics`. */
  readonly path?: `/${string}` | undefined
  /** A prefix for every metric name (`myapp` makes `myapp_mcp_server_operation_duration`). Default none. */
  readonly prefix?: string | undefined
}

/** The handler of the endpoint: the check, then the metrics of the registry in the request's context. */
export const handler = (
  options: Options = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  const guard = Wire.makeRebindingGuard(options)
  const format = { prefix: options.prefix }
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refused = guard(request)
    if (refused !== undefined) return Effect.succeed(refused)
    return Effect.map(PrometheusMetrics.format(format), (text) => HttpServerResponse.text(text, { contentType }))
  })
}

/** Adds `GET <path>` to the `HttpRouter`. */
export const layer = (options: Options = {}): Layer.Layer<never, never, HttpRouter.HttpRouter> =>
  Layer.effectDiscard(
    Effect.flatMap(HttpRouter.HttpRouter, (router) => router.add("GET", options.path ?? "/metrics", handler(options)))
  )
