/**
 * Node wiring for the engine's HTTP client transports: an `HttpClient` on
 * Node's `http`/`https` with keep-alive connections, and the Streamable HTTP
 * and legacy SSE transports over it.
 */
import * as SseClient from "@effect-mcp/http/SseClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as PlatformNodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Http from "node:http"
import * as Https from "node:https"
import * as DirectRequest from "./internal/directRequest.ts"
import * as KeepAlive from "./internal/keepAlive.ts"

/**
 * A client over a pair of agents closed with the scope: requests with a body
 * in memory by the direct path (see `internal/directRequest.ts`), the rest by
 * effect's Node client on the same agents.
 */
const client = (http: () => Http.Agent, https: () => Https.Agent) =>
  Effect.gen(function* () {
    const agents = yield* Effect.all({
      http: Effect.acquireRelease(Effect.sync(http), (agent) => Effect.sync(() => agent.destroy())),
      https: Effect.acquireRelease(Effect.sync(https), (agent) => Effect.sync(() => agent.destroy()))
    })
    const effectClient = yield* PlatformNodeHttpClient.makeNodeHttp.pipe(
      Effect.provideService(PlatformNodeHttpClient.HttpAgent, agents)
    )
    return DirectRequest.make(agents, effectClient)
  })

/**
 * An `HttpClient` on Node's `http`/`https` with its own pool of keep-alive
 * connections, closed with the layer. A request written on a reused
 * connection that the server had already closed (its idle timeout racing the
 * request: `ECONNRESET` before any byte of a response) is sent once more on a
 * new connection; a request that may have reached the server is never resent,
 * its failure is reported. See "Connections" in docs/clients.md.
 */
export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function* () {
    const pooled = yield* client(
      () => new KeepAlive.HttpAgent({ keepAlive: true }),
      () => new KeepAlive.HttpsAgent({ keepAlive: true })
    )
    // Keeps no connection, so the one resend opens a new one.
    const fresh = yield* client(
      () => new Http.Agent({ keepAlive: false }),
      () => new Https.Agent({ keepAlive: false })
    )
    return KeepAlive.resendUnsent(pooled, fresh)
  })
)

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
