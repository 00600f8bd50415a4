/**
 * The HTTP half of `NodeMcpServer`: the server's endpoints (`@effect-mcp/server`'s
 * `HttpEndpoints`: Streamable HTTP, and when asked the legacy HTTP+SSE pair,
 * the auth metadata routes and a Prometheus endpoint) on Node's http server,
 * with the Host/Origin defaults of a bind. Loaded on first use, so a stdio
 * server never loads the HTTP stack.
 */
import type { HostChecks } from "@effect-mcp/http/HttpServeOptions"
import * as HttpEndpoints from "@effect-mcp/server/HttpEndpoints"
import type * as McpServer from "@effect-mcp/server/McpServer"
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

/** The server's endpoints on `host:port`; releasing the Layer closes the listener and every session. */
export const layer = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options: HttpOptions
): Layer.Layer<HttpServer.HttpServer, E | HttpServerError.ServeError, R> => {
  const host = options.host ?? "127.0.0.1"
  const path = options.path ?? "/mcp"
  const { rebinding, warning } = rebindingOf(host, options)
  const auth = options.auth
  const routes = Layer.unwrap(
    Effect.gen(function* () {
      // A protection made from the endpoint's URL waits for the bind (port 0 is known then).
      const protection =
        auth === undefined ? undefined : typeof auth === "function" ? auth(`${yield* NodeHttpServer.url}${path}`) : auth
      return HttpEndpoints.layer({
        ...options,
        allowedHosts: rebinding.allowedHosts,
        allowedOrigins: rebinding.allowedOrigins,
        dnsRebindingProtection: rebinding.dnsRebindingProtection,
        path,
        auth: protection
      })
    })
  )
  const listening = NodeHttpServer.layer(routes, { host, port: options.port ?? 0 }).pipe(Layer.provide(server))
  return Layer.merge(listening, warning) as Layer.Layer<HttpServer.HttpServer, E | HttpServerError.ServeError, R>
}
