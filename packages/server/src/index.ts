/**
 * MCP servers from Effect Layers: tools, resources, resource templates, prompts,
 * completion, logging, and server-to-client requests (sampling, elicitation, roots);
 * their HTTP endpoints (`HttpEndpoints`), and a server as a web-standard
 * `(request: Request) => Promise<Response>` handler (`WebHandler`).
 *
 * @packageDocumentation
 * @module @effect-mcp/server
 */
export * as App from "./App.ts"
export * as Elicitation from "./Elicitation.ts"
export * as HttpEndpoints from "./HttpEndpoints.ts"
export * as McpServer from "./McpServer.ts"
export * as Middleware from "./Middleware.ts"
export * as Prompt from "./Prompt.ts"
export * as RequestStateKeys from "./RequestStateKeys.ts"
export * as Resource from "./Resource.ts"
export * as ResourceTemplate from "./ResourceTemplate.ts"
export * as Roots from "./Roots.ts"
export * as Sampling from "./Sampling.ts"
export * as ServerRequest from "./ServerRequest.ts"
export * as Skill from "./Skill.ts"
export * as Task from "./Task.ts"
export * as TaskStore from "./TaskStore.ts"
export * as Tool from "./Tool.ts"
export * as ToolLimits from "./ToolLimits.ts"
export * as WebHandler from "./WebHandler.ts"
