/**
 * Streamable HTTP sessions spread over processes on `effect/cluster`: any process answers any session's
 * request, session state is durable, and no load balancer needs sticky routing.
 *
 * @packageDocumentation
 * @module @effect-mcp/cluster
 */
export * as ChangeFeed from "./ChangeFeed.ts"
export * as ClusteredHttpServer from "./ClusteredHttpServer.ts"
export * as DirectHop from "./DirectHop.ts"
export * as NodeClusteredServer from "./NodeClusteredServer.ts"
export * as SessionState from "./SessionState.ts"
