/**
 * The HTTP half of `NodeMcpServer`: Streamable HTTP (and, when asked, the
 * legacy HTTP+SSE endpoints) for an McpServer Layer on Node's http server.
 * Loaded on first use, so a stdio server never loads the HTTP stack.
 */
import type { HostChecks } from "@effect-mcp/http/HttpServeOptions"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import * as PrometheusEndpoint from "@effect-mcp/http/PrometheusEndpoint"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import type { HttpOptions } from "../NodeMcpServer.ts"
import * as NodeHttpServer from "../NodeHttpServer.ts"

const loopbackHosts = ["localhost", "127.0.0.1", "[::1]", "::1"]

const isWildcard = (host: string) => host === "0.0.0.0" || host === "::" || host === "[::]" || host === ""

/**
 * The Host/Origin check of a bind: the names given, else the loopback names
 * plus the bound name itself (a client of `myhost:3000` sends `Host: myhost`).
 * A wildcard bind cannot tell which names clients use: it stays closed to
 * every name but loopback's until `allowedHosts` says otherwise, with a warning.
 */
const rebindingOf = (
  host: string,
  options: HttpOptions
): { readonly rebinding: HostChecks; readonly warning: Layer.Layer<never> } => {
  if (options.dnsRebindingProtection === false)
    return { rebinding: { dnsRebindingProtection: false }, warning: Layer.empty }
  const origins = options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }
  if (options.allowedHosts !== undefined) {
    return { rebinding: { allowedHosts: options.allowedHosts, ...origins }, warning: Layer.empty }
  }
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  const allowedHosts = isWildcard(host)
    ? loopbackHosts
    : loopbackHosts.includes(host)
      ? loopbackHosts
      : [...loopbackHosts, host, ...(bare === host ? [] : [bare])]
  const warning = isWildcard(host)
    ? Layer.effectDiscard(
        Effect.logWarning(
          `MCP endpoint bound to ${host}: only loopback names are accepted in Host/Origin; set allowedHosts to the names clients use`
        )
      )
    : Layer.empty
  return { rebinding: { allowedHosts, ...origins }, warning }
}

/** The `Mcp-Param-*` headers of the registered tools, read from their input schemas as they are now. */
const paramHeaders = (server: McpServer.McpServerShape) => (toolName: string) => {
  const tool = server.toolDefinition(toolName)
  return tool === undefined ? undefined : StreamableHttpServer.paramHeadersOf(tool.inputSchema)
}

/** The scopes of the items, and those the protection adds. */
const combine = (
  items: HttpAuthentication.RequiredScopes,
  extra: HttpAuthentication.RequiredScopes | undefined
): HttpAuthentication.RequiredScopes =>
  extra === undefined
    ? items
    : (method, target) => {
        const own = items(method, target)
        const more = extra(method, target)
        if (own === undefined || own.length === 0) return more
        if (more === undefined || more.length === 0) return own
        return [...own, ...more.filter((scope) => !own.includes(scope))]
      }

/** The server's endpoints on `host:port`; releasing the Layer closes the listener and every session. */
export const layer = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options: HttpOptions
): Layer.Layer<HttpServer.HttpServer, E | HttpServerError.ServeError, R> => {
  const host = options.host ?? "127.0.0.1"
  const path = options.path ?? "/mcp"
  const { rebinding, warning } = rebindingOf(host, options)
  const legacy = options.legacySse === undefined || options.legacySse === false ? undefined : options.legacySse
  const auth = options.auth
  const routes = Layer.unwrap(
    Effect.gen(function* () {
      const mcp = yield* McpServer.McpServer
      // A protection made from the endpoint's URL waits for the bind (port 0 is known then).
      const protection =
        auth === undefined ? undefined : typeof auth === "function" ? auth(`${yield* NodeHttpServer.url}${path}`) : auth
      const authentication = protection?.authentication
      const requiredScopes =
        protection === undefined ? undefined : combine(McpServer.requiredScopesOf(mcp), protection.requiredScopes)
      const streamable = StreamableHttpServer.layer({
        session: McpServer.makeSession,
        path,
        stateless: options.stateless,
        responseMode: options.responseMode ?? "sse",
        ...rebinding,
        maxBodyBytes: options.maxBodyBytes,
        maxSessions: options.maxSessions,
        maxSessionsPerClient: options.maxSessionsPerClient,
        clientOf: options.clientOf,
        sessionIdleTimeout: options.sessionIdleTimeout,
        writeTimeout: options.writeTimeout,
        keepaliveInterval: options.keepaliveInterval,
        eventStore: options.eventStore,
        paramHeaders: paramHeaders(mcp),
        authentication,
        requiredScopes
      })
      const endpoints =
        legacy === undefined
          ? streamable
          : Layer.merge(
              streamable,
              SseServer.layer({
                session: McpServer.makeSession,
                ssePath: legacy === true ? undefined : legacy.ssePath,
                messagesPath: legacy === true ? undefined : legacy.messagesPath,
                ...rebinding,
                maxBodyBytes: options.maxBodyBytes,
                maxSessions: options.maxSessions,
                maxSessionsPerClient: options.maxSessionsPerClient,
                clientOf: options.clientOf,
                writeTimeout: options.writeTimeout,
                authentication,
                requiredScopes
              })
            )
      return protection?.routes === undefined ? endpoints : Layer.merge(endpoints, protection.routes)
    })
  )
  const metrics = options.metrics === undefined || options.metrics === false ? undefined : options.metrics
  const served =
    metrics === undefined
      ? routes
      : Layer.merge(
          routes,
          PrometheusEndpoint.layer({ path: metrics === true ? undefined : metrics.path, ...rebinding })
        ).pipe(
          // The sessions are made where the endpoints are: they record metrics for the scraper to read.
          Layer.provide(Layer.succeed(McpMetrics.Enabled, true))
        )
  const listening = NodeHttpServer.layer(served, { host, port: options.port ?? 0 }).pipe(Layer.provide(server))
  return Layer.merge(listening, warning) as Layer.Layer<HttpServer.HttpServer, E | HttpServerError.ServeError, R>
}
