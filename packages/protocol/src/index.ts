/**
 * The Model Context Protocol as Effect Schemas: JSON-RPC framing, every revision's
 * messages, capabilities, errors, and the registry that maps methods to their schemas.
 *
 * @packageDocumentation
 * @module @effect-mcp/protocol
 */
export * as Apps from "./Apps.ts"
export * as CacheHints from "./CacheHints.ts"
export * as Cancellation from "./Cancellation.ts"
export * as Completion from "./Completion.ts"
export * as Content from "./Content.ts"
export * as Elicitation from "./Elicitation.ts"
export * as FastGetter from "./FastGetter.ts"
export * as Features from "./Features.ts"
export * as FrozenJson from "./FrozenJson.ts"
export * as IncomingValidator from "./IncomingValidator.ts"
export * as InputRequired from "./InputRequired.ts"
export * as JsonEquality from "./JsonEquality.ts"
export * as JsonRpc from "./JsonRpc.ts"
export * as JsonRpcCodec from "./JsonRpcCodec.ts"
export * as Lifecycle from "./Lifecycle.ts"
export * as Logging from "./Logging.ts"
export * as McpError from "./McpError.ts"
export * as McpResult from "./McpResult.ts"
export * as Meta from "./Meta.ts"
export * as Ndjson from "./Ndjson.ts"
export * as Pagination from "./Pagination.ts"
export * as Progress from "./Progress.ts"
export * as Prompts from "./Prompts.ts"
export * as ProtocolVersion from "./ProtocolVersion.ts"
export * as Registry from "./Registry.ts"
export * as Resources from "./Resources.ts"
export * as Revision from "./Revision.ts"
export * as Roots from "./Roots.ts"
export * as Sampling from "./Sampling.ts"
export * as Skills from "./Skills.ts"
export * as Tasks from "./Tasks.ts"
export * as Tools from "./Tools.ts"
