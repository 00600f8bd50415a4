/**
 * The tool definition, below both `Tools.ts` and `Sampling.ts` (2025-11-25
 * sampling requests carry tools): `Tools.ts` also needs `InputRequired.ts`,
 * which needs `Sampling.ts`, so the definition cannot live in `Tools.ts`
 * without an import cycle. `Tools.ts` re-exports everything here and holds the
 * revision table.
 */
import * as Schema from "effect/Schema"
import { Meta } from "../Meta.ts"
import { Icons } from "./metaValues.ts"
import { openStruct } from "./open.ts"

/**
 * A JSON Schema as MCP carries it. Every keyword beyond the typed ones is kept;
 * values of `properties` are schemas of any form, so they stay unknown.
 */
const jsonSchemaFields = {
  $schema: Schema.optionalKey(Schema.String),
  properties: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  required: Schema.optionalKey(Schema.Array(Schema.String))
}

/** A tool's `inputSchema`: always an object schema. */
export const ToolInputSchema = openStruct({
  type: Schema.Literal("object"),
  ...jsonSchemaFields
}).annotate({ identifier: "ToolInputSchema" })
export type ToolInputSchema = typeof ToolInputSchema.Type

/** A tool's `outputSchema`: an object schema before 2026-07-28, any JSON Schema since. */
export const ToolOutputSchema = openStruct({
  type: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)])),
  ...jsonSchemaFields
}).annotate({ identifier: "ToolOutputSchema" })
export type ToolOutputSchema = typeof ToolOutputSchema.Type

/** Untrusted hints about a tool's behaviour (2025-03-26 on). */
export const ToolAnnotations = Schema.Struct({
  title: Schema.optionalKey(Schema.String),
  /** The tool does not modify its environment (default false). */
  readOnlyHint: Schema.optionalKey(Schema.Boolean),
  /** The tool may perform destructive updates (meaningful when not read-only; default true). */
  destructiveHint: Schema.optionalKey(Schema.Boolean),
  /** Repeating a call with the same arguments has no additional effect (default false). */
  idempotentHint: Schema.optionalKey(Schema.Boolean),
  /** The tool interacts with an open world of external entities (default true). */
  openWorldHint: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ToolAnnotations" })
export type ToolAnnotations = typeof ToolAnnotations.Type

/** Whether a tool may run as a task (2025-11-25 only). */
export const TaskSupport = Schema.Literals(["forbidden", "optional", "required"]).annotate({
  identifier: "TaskSupport"
})
export type TaskSupport = typeof TaskSupport.Type

/** How a tool may be executed (task support, 2025-11-25). */
export const ToolExecution = Schema.Struct({
  taskSupport: Schema.optionalKey(TaskSupport)
}).annotate({ identifier: "ToolExecution" })
/** Decoded `ToolExecution`. */
export type ToolExecution = typeof ToolExecution.Type

/** A tool as `tools/list` describes it. */
export const Tool = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  inputSchema: ToolInputSchema,
  outputSchema: Schema.optionalKey(ToolOutputSchema),
  annotations: Schema.optionalKey(ToolAnnotations),
  execution: Schema.optionalKey(ToolExecution),
  icons: Schema.optionalKey(Icons),
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "Tool" })
/** Decoded `Tool`. */
export type Tool = typeof Tool.Type
