/**
 * Headers of your own on every HTTP request a client's Streamable HTTP or
 * SSE transport sends (a tenant, an API key, a trace header of another
 * system): a Layer over the `HttpClient` the transport uses. The headers may
 * be computed per HTTP request (an Effect run for each). A module of its own
 * so that a stdio client does not load the HTTP stack.
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"

/** Headers by name. */
export type Headers = { readonly [name: string]: string }

/**
 * `client` adding `headers` to each request that lacks them: a header the
 * transport or the request already set (`Mcp-Session-Id`,
 * `MCP-Protocol-Version`, `Authorization` from an OAuth client, ...) is kept.
 */
export const wrap = (
  client: HttpClient.HttpClient,
  headers: Headers | Effect.Effect<Headers>
): HttpClient.HttpClient => {
  const add = (request: HttpClientRequest.HttpClientRequest, extra: Headers) => {
    const missing: Record<string, string> = {}
    for (const name in extra) if (request.headers[name.toLowerCase()] === undefined) missing[name] = extra[name]!
    return HttpClientRequest.setHeaders(request, missing)
  }
  return Effect.isEffect(headers)
    ? HttpClient.mapRequestEffect(client, (request) => Effect.map(headers, (extra) => add(request, extra)))
    : HttpClient.mapRequest(client, (request) => add(request, headers))
}

/**
 * Re-provides the `HttpClient` below it adding `headers` to every request
 * (`wrap`); an Effect is run once per HTTP request.
 *
 * @example
 * ```ts
 * import * as HttpHeaders from "@effect-mcp/client/HttpHeaders"
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
 * import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
 * import * as Layer from "effect/Layer"
 *
 * export const Client = McpClient.layer({ clientInfo: { name: "c", version: "1.0.0" } }).pipe(
 *   Layer.provide(StreamableHttpClient.layer({ url: "https://example.com/mcp" })),
 *   Layer.provide(HttpHeaders.layer({ "X-Tenant": "acme" })),
 *   Layer.provide(NodeHttpClient.layer)
 * )
 * ```
 */
export const layer = (
  headers: Headers | Effect.Effect<Headers>
): Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient> =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function* () {
      return wrap(yield* HttpClient.HttpClient, headers)
    })
  )
