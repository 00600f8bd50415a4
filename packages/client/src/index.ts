/**
 * The MCP client as an Effect service: typed calls, paged Streams, progress, cancellation,
 * and handlers for the server's sampling, elicitation and roots requests.
 *
 * @packageDocumentation
 * @module @effect-mcp/client
 */
export * as Apps from "./Apps.ts"
export * as ClientError from "./ClientError.ts"
export * as ElicitationForm from "./ElicitationForm.ts"
export * as ElicitationHandler from "./ElicitationHandler.ts"
export * as HandlerProgress from "./HandlerProgress.ts"
export * as HttpHeaders from "./HttpHeaders.ts"
export * as Interceptor from "./Interceptor.ts"
export * as McpClient from "./McpClient.ts"
export * as RootsHandler from "./RootsHandler.ts"
export * as SamplingHandler from "./SamplingHandler.ts"
export * as Skills from "./Skills.ts"
export * as TaskRequests from "./TaskRequests.ts"
