/**
 * A Model Context Protocol gateway on Effect: the servers of an `mcpServers`
 * configuration behind one server, with one namespaced catalog, calls,
 * progress, cancellation, completion and logs routed to their upstream, the
 * upstreams' sampling, elicitation and roots requests asked of the client
 * whose call they serve, and a credential of its own for each upstream.
 *
 * @packageDocumentation
 * @module @effect-mcp/gateway
 */
export * as Credentials from "./Credentials.ts"
export * as Gateway from "./Gateway.ts"
export * as GatewayConfig from "./GatewayConfig.ts"
