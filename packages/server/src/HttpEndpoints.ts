/**
 * The MCP endpoints of the `McpServer` in context, as routes of effect's
 * `HttpRouter` on its abstract HTTP services (no runtime of their own):
 * Streamable HTTP at `path`, the legacy HTTP+SSE pair when asked, an OAuth
 * protection's metadata routes and a Prometheus endpoint, all behind the same
 * `Host`/`Origin` checks, body limit and session limits. This is the one
 * wiring of a server's HTTP protections: `@effect-mcp/platform-node`'s
 * `NodeMcpServer` serves these routes on Node's http server, `WebHandler` as
 * a web-standard `(request: Request) => Promise<Response>`.
 *
 * The defaults are the safe ones: `Host` and `Origin` checked against the
 * loopback names (`localhost`, `127.0.0.1`, `::1`, `[::1]`), bodies capped at
 * 4 MiB, at most 10,000 sessions, idle sessions closed after 30 minutes.
 *
 * @example
 * ```ts
 * import * as HttpEndpoints from "@effect-mcp/server/HttpEndpoints"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as HttpRouter from "effect/http/HttpRouter"
 * import * as Layer from "effect/Layer"
 *
 * const Server = McpServer.layer({ name: "routes", version: "1.0.0" })
 *
 * // The endpoints on a router of your own, next to your other routes.
 * export const Routes = HttpEndpoints.layer({ path: "/mcp", allowedHosts: ["mcp.example.com"] }).pipe(
 *   Layer.provide(Server),
 *   Layer.provideMerge(HttpRouter.layer)
 * )
 * ```
 */
import * as McpMetrics from "@effect-mcp/engine/McpMetrics"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import type * as HttpServeOptions from "@effect-mcp/http/HttpServeOptions"
import * as PrometheusEndpoint from "@effect-mcp/http/PrometheusEndpoint"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import * as McpServer from "./McpServer.ts"

/** How a server's endpoints are served: the options every HTTP server shares (`HttpServeOptions`) and the endpoints' own. Every field is optional. */
export interface Options
  extends Pick<
    HttpServeOptions.HttpServeOptions,
    | "stateless"
    | "responseMode"
    | "allowedHosts"
    | "allowedOrigins"
    | "dnsRebindingProtection"
    | "maxBodyBytes"
    | "maxSessions"
    | "maxSessionsPerClient"
    | "clientOf"
    | "sessionIdleTimeout"
    | "writeTimeout"
    | "keepaliveInterval"
    | "eventStore"
  > {
  /** Path of the Streamable HTTP endpoint. Default `/mcp`. */
  readonly path?: `/${string}` | undefined
  /**
   * Also serves the 2024-11-05 HTTP+SSE transport for older clients: `true`
   * for `/sse` and `/messages`, or the paths to use. Default false.
   */
  readonly legacySse?:
    | boolean
    | { readonly ssePath?: `/${string}` | undefined; readonly messagesPath?: `/${string}` | undefined }
    | undefined
  /**
   * Makes the server an OAuth 2.1 protected resource (`@effect-mcp/auth`'s
   * `HttpProtection.make(...)`): every request to the endpoints (legacy SSE
   * included) needs a bearer token; items' `scopes` are checked before
   * dispatch; the metadata routes are served without a token. See
   * docs/authorization.md. Default: none (no authentication).
   */
  readonly auth?: HttpAuth | undefined
  /**
   * A Prometheus scrape endpoint beside the MCP one: `true` serves `GET
   * /metrics` (or give its `path`) with every effect metric of the process
   * in the Prometheus text format, and turns `McpMetrics.Enabled` on for the
   * sessions so the request, session and byte metrics are recorded. Checked
   * against `Host`/`Origin` like the MCP endpoint; no session or token is
   * needed (see docs/observability.md). Default false.
   */
  readonly metrics?: boolean | { readonly path?: `/${string}` | undefined } | undefined
}

/**
 * What the `auth` option takes: the HTTP transports' authentication hook and
 * the routes to serve beside the endpoints without authentication (its
 * metadata documents). `@effect-mcp/auth`'s `HttpProtection` is one.
 */
export interface HttpAuth {
  /** The hook every request to the endpoints goes through. */
  readonly authentication: HttpAuthentication.Authentication
  /** Routes served without authentication (the protected resource metadata). */
  readonly routes?: Layer.Layer<never, never, HttpRouter.HttpRouter> | undefined
  /**
   * Scopes requests need besides those the registered items declare (their
   * `scopes`), e.g. from configuration; a request needs both sets.
   */
  readonly requiredScopes?: HttpAuthentication.RequiredScopes | undefined
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

/**
 * Adds the endpoints of the `McpServer` in context to the `HttpRouter`: each
 * new session runs `McpServer.makeSession`. The sessions live as long as the
 * router's Layer; releasing it closes every one and ends its streams.
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, HttpRouter.HttpRouter | McpServer.McpServer> => {
  const path = options.path ?? "/mcp"
  const hostChecks: HttpServeOptions.HostChecks = {
    allowedHosts: options.allowedHosts,
    allowedOrigins: options.allowedOrigins,
    dnsRebindingProtection: options.dnsRebindingProtection
  }
  const legacy = options.legacySse === undefined || options.legacySse === false ? undefined : options.legacySse
  const protection = options.auth
  const routes = Layer.unwrap(
    Effect.gen(function* () {
      const mcp = yield* McpServer.McpServer
      const authentication = protection?.authentication
      const requiredScopes =
        protection === undefined ? undefined : combine(McpServer.requiredScopesOf(mcp), protection.requiredScopes)
      const streamable = StreamableHttpServer.layer({
        session: McpServer.makeSession,
        path,
        stateless: options.stateless,
        responseMode: options.responseMode ?? "sse",
        ...hostChecks,
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
                ...hostChecks,
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
  return metrics === undefined
    ? routes
    : Layer.merge(
        routes,
        PrometheusEndpoint.layer({ path: metrics === true ? undefined : metrics.path, ...hostChecks })
      ).pipe(
        // The sessions are made where the endpoints are: they record metrics for the scraper to read.
        Layer.provide(Layer.succeed(McpMetrics.Enabled, true))
      )
}
