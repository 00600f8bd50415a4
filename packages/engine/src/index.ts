/**
 * The transport-agnostic MCP engine: peers, sessions, version negotiation, and the
 * stdio, Streamable HTTP and legacy SSE transports built on Effect's platform abstractions.
 *
 * @packageDocumentation
 * @module @effect-mcp/engine
 */
export * as Baggage from "./Baggage.ts"
export * as ClientSession from "./ClientSession.ts"
export * as CurrentHttpSession from "./CurrentHttpSession.ts"
export * as CurrentRequest from "./CurrentRequest.ts"
export * as Defect from "./Defect.ts"
export * as EventStore from "./EventStore.ts"
export * as HttpAuthentication from "./HttpAuthentication.ts"
export * as McpMetrics from "./McpMetrics.ts"
export * as MemoryTransport from "./MemoryTransport.ts"
export * as ParamHeaders from "./ParamHeaders.ts"
export * as Peer from "./Peer.ts"
export * as PeerError from "./PeerError.ts"
export * as ProgressStream from "./ProgressStream.ts"
export * as PrometheusEndpoint from "./PrometheusEndpoint.ts"
export * as ServerSession from "./ServerSession.ts"
export * as Session from "./Session.ts"
export * as SessionSnapshot from "./SessionSnapshot.ts"
export * as SseClient from "./SseClient.ts"
export * as SseServer from "./SseServer.ts"
export * as StdioTransport from "./StdioTransport.ts"
export * as StreamableHttpClient from "./StreamableHttpClient.ts"
export * as StreamableHttpServer from "./StreamableHttpServer.ts"
export * as Tracing from "./Tracing.ts"
export * as Transport from "./Transport.ts"
