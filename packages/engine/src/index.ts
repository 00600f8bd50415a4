/**
 * The transport-neutral MCP engine: peers, sessions and their snapshots,
 * version negotiation, and the in-memory and stdio transports. The HTTP
 * transports (Streamable HTTP, legacy HTTP+SSE) are in `@effect-mcp/http`.
 *
 * @packageDocumentation
 * @module @effect-mcp/engine
 */
export * as Baggage from "./Baggage.ts"
export * as ClientSession from "./ClientSession.ts"
export * as CurrentRequest from "./CurrentRequest.ts"
export * as Defect from "./Defect.ts"
export * as McpMetrics from "./McpMetrics.ts"
export * as MemoryTransport from "./MemoryTransport.ts"
export * as NetCause from "./NetCause.ts"
export * as Peer from "./Peer.ts"
export * as PeerError from "./PeerError.ts"
export * as ProgressStream from "./ProgressStream.ts"
export * as PushQueue from "./PushQueue.ts"
export * as ServerSession from "./ServerSession.ts"
export * as Session from "./Session.ts"
export * as SessionRegistry from "./SessionRegistry.ts"
export * as SessionSnapshot from "./SessionSnapshot.ts"
export * as StdioTransport from "./StdioTransport.ts"
export * as Tracing from "./Tracing.ts"
export * as Transport from "./Transport.ts"
