/**
 * A Model Context Protocol gateway on Effect: the servers of an `mcpServers`
 * configuration behind one server, with one namespaced catalog, calls,
 * progress, cancellation, completion and logs routed to their upstream, the
 * upstreams' sampling, elicitation and roots requests asked of the client
 * whose call they serve, a credential of its own for each upstream (an OAuth
 * token of its own where the upstream is a protected resource), a policy of
 * who sees what, limits, a circuit breaker per upstream, an audit record per
 * call, reads kept by their cache hints, and a discovery mode (search, describe,
 * call) for catalogs too large to list.
 *
 * @packageDocumentation
 * @module @effect-mcp/gateway
 */
export * as Audit from "./Audit.ts"
export * as CircuitBreaker from "./CircuitBreaker.ts"
export * as Credentials from "./Credentials.ts"
export * as Discovery from "./Discovery.ts"
export * as Gateway from "./Gateway.ts"
export * as GatewayConfig from "./GatewayConfig.ts"
export * as Policy from "./Policy.ts"
export * as TokenExchange from "./TokenExchange.ts"
export * as UpstreamOAuth from "./UpstreamOAuth.ts"
