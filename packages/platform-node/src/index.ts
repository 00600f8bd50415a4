/**
 * Node wiring of effect-mcp: stdio transports over this process and over
 * child processes, and the HTTP transports over Node's http server and client.
 *
 * @packageDocumentation
 * @module @effect-mcp/platform-node
 */
export * as NodeHttpClient from "./NodeHttpClient.ts"
export * as NodeHttpServer from "./NodeHttpServer.ts"
export * as NodeMcpServer from "./NodeMcpServer.ts"
export * as NodeStdio from "./NodeStdio.ts"
export * as NodeTelemetry from "./NodeTelemetry.ts"
