/**
 * Node wiring for the engine's HTTP client transports: an `HttpClient` backed
 * by undici, and the Streamable HTTP and legacy SSE transports over it.
 */
import * as SseClient from "@effect-mcp/engine/SseClient"
import * as StreamableHttpClient from "@effect-mcp/engine/StreamableHttpClient"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as PlatformNodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"

/** An undici-backed `HttpClient` with its own connection pool. */
export const layer: Layer.Layer<HttpClient.HttpClient> = PlatformNodeHttpClient.layerUndici

/**
 * A Streamable HTTP client transport (falling back to legacy SSE) over Node's HTTP stack.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
 * import * as Layer from "effect/Layer"
 *
 * export const Client = McpClient.layer({ clientInfo: { name: "my-host", version: "1.0.0" } }).pipe(
 *   Layer.provide(
 *     NodeHttpClient.layerStreamableHttp({ url: "http://127.0.0.1:3000/mcp", headers: { authorization: "Bearer token" } })
 *   )
 * )
 * ```
 */
export const layerStreamableHttp = (
  options: StreamableHttpClient.Options
): Layer.Layer<Transport.Transport | StreamableHttpClient.StreamableHttpClient> =>
  StreamableHttpClient.layer(options).pipe(Layer.provide(layer))

/**
 * A legacy HTTP+SSE client transport over Node's HTTP stack.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
 * import * as Layer from "effect/Layer"
 *
 * export const Client = McpClient.layer({ clientInfo: { name: "my-host", version: "1.0.0" } }).pipe(
 *   Layer.provide(NodeHttpClient.layerSse({ url: "http://127.0.0.1:3000/sse" }))
 * )
 * ```
 */
export const layerSse = (options: SseClient.Options): Layer.Layer<Transport.Transport, Transport.TransportError> =>
  SseClient.layer(options).pipe(Layer.provide(layer))
