/**
 * The MCP HTTP transports on Effect's abstract HTTP services: Streamable HTTP
 * (stateful sessions with `Mcp-Session-Id`, stateless requests, resumable SSE
 * streams), the legacy HTTP+SSE transport, both sides each, and what they
 * share: the event store, authentication hooks, the MCP header names, the
 * `Mcp-Param-*` headers and a Prometheus endpoint. Every session and
 * transport contract comes from `@effect-mcp/engine`.
 *
 * @packageDocumentation
 * @module @effect-mcp/http
 */
export * as BareRequests from "./BareRequests.ts"
export * as CurrentHttpSession from "./CurrentHttpSession.ts"
export * as EventStore from "./EventStore.ts"
export * as HttpAuthentication from "./HttpAuthentication.ts"
export * as LostAnswers from "./LostAnswers.ts"
export * as McpHeaders from "./McpHeaders.ts"
export * as ParamHeaders from "./ParamHeaders.ts"
export * as PrometheusEndpoint from "./PrometheusEndpoint.ts"
export * as SseClient from "./SseClient.ts"
export * as SseEvent from "./SseEvent.ts"
export * as SseServer from "./SseServer.ts"
export * as StreamableHttpClient from "./StreamableHttpClient.ts"
export * as StreamableHttpServer from "./StreamableHttpServer.ts"
export * as HttpServeOptions from "./HttpServeOptions.ts"
