/**
 * A Model Context Protocol host on Effect: many servers from an `mcpServers`
 * configuration, supervised and respawned, one aggregated catalog, calls
 * routed by name, client-side handlers and consent hooks once for all, and a
 * bridge to effect/ai (`AiToolkit`, `ToolkitServer`).
 *
 * @packageDocumentation
 * @module @effect-mcp/host
 */
export * as AiToolkit from "./AiToolkit.ts"
export * as Apps from "./Apps.ts"
export * as AskingServer from "./AskingServer.ts"
export * as Catalog from "./Catalog.ts"
export * as Connector from "./Connector.ts"
export * as Consent from "./Consent.ts"
export * as HostError from "./HostError.ts"
export * as McpConfig from "./McpConfig.ts"
export * as McpHost from "./McpHost.ts"
export * as Naming from "./Naming.ts"
export * as NodeConnector from "./NodeConnector.ts"
export * as ServerStatus from "./ServerStatus.ts"
export * as ToolkitServer from "./ToolkitServer.ts"
