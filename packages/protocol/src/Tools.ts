/**
 * Tools: functions a server exposes for the model to call (`tools/list`,
 * `tools/call`, `notifications/tools/list_changed`).
 *
 * | field                               | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28     |
 * |-------------------------------------|------------|------------|------------|------------|----------------|
 * | Tool `annotations`                  | -          | yes        | yes        | yes        | yes            |
 * | Tool `title`, `outputSchema`, `_meta` | -        | -          | yes        | yes        | yes            |
 * | Tool `icons`                        | -          | -          | -          | yes        | yes            |
 * | Tool `execution` (task support)     | -          | -          | -          | yes        | -              |
 * | `inputSchema.$schema`               | -          | -          | -          | yes        | yes (+ any key)|
 * | `outputSchema`                      |            |            | object     | object     | any JSON Schema|
 * | result content blocks               | text,image,| + audio    | + resource_| + resource_| + resource_   |
 * |                                     | resource   |            | link       | link       | link           |
 * | result `structuredContent`          | -          | -          | object     | object     | any JSON value |
 * | call params `task`                  | -          | -          | -          | yes        | -              |
 * | call params `inputResponses`,       | -          | -          | -          | -          | yes            |
 * |   `requestState` (retry)            |            |            |            |            |                |
 * | list params                         | optional   | optional   | optional   | optional   | required       |
 * | list result `ttlMs`, `cacheScope`   | -          | -          | -          | -          | required       |
 */
import * as Schema from "effect/Schema"
import { CacheHints } from "./CacheHints.ts"
import { ContentBlock } from "./Content.ts"
import { InputResponseParams } from "./InputRequired.ts"
import { OpenObject } from "./internal/open.ts"
import { resultStruct } from "./internal/result.ts"
import {
  TaskSupport,
  Tool,
  ToolAnnotations,
  ToolExecution,
  ToolInputSchema,
  ToolOutputSchema
} from "./internal/tool.ts"
import { NotificationParams } from "./Meta.ts"
import { PaginatedParams, paginatedResultFields } from "./Pagination.ts"
import { TaskMetadata } from "./Tasks.ts"

export { TaskSupport, Tool, ToolAnnotations, ToolExecution, ToolInputSchema, ToolOutputSchema }

/** Params of `tools/list`. */
export const ListToolsParams = PaginatedParams
/** Decoded `ListToolsParams`. */
export type ListToolsParams = PaginatedParams

/** The result of `tools/list`. */
export const ListToolsResult = resultStruct({
  tools: Schema.Array(Tool),
  ...paginatedResultFields,
  ...CacheHints.fields
}).annotate({ identifier: "ListToolsResult" })
/** Decoded `ListToolsResult`. */
export type ListToolsResult = typeof ListToolsResult.Type

/** Params of `tools/call`. */
export const CallToolParams = Schema.Struct({
  ...InputResponseParams.fields,
  name: Schema.String,
  arguments: Schema.optionalKey(OpenObject),
  task: Schema.optionalKey(TaskMetadata)
}).annotate({ identifier: "CallToolParams" })
/** Decoded `CallToolParams`. */
export type CallToolParams = typeof CallToolParams.Type

/**
 * Errors of the tool itself go here with `isError: true` (so the model sees
 * them); protocol errors (unknown tool, bad params) are JSON-RPC errors.
 */
export const CallToolResult = resultStruct({
  content: Schema.Array(ContentBlock),
  /** Should conform to the tool's `outputSchema` when it has one. */
  structuredContent: Schema.optionalKey(Schema.Unknown),
  isError: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "CallToolResult" })
export type CallToolResult = typeof CallToolResult.Type

/** Params of `notifications/tools/list_changed`. */
export const ToolListChangedParams = NotificationParams
export type ToolListChangedParams = NotificationParams

/** A successful result holding one text block. */
export const textResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }] })

/** A tool-level failure the model can read and react to. */
export const errorResult = (message: string): CallToolResult => ({
  content: [{ type: "text", text: message }],
  isError: true
})
