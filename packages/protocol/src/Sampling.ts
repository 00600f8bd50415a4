/**
 * Sampling: the server asks the client's model for a completion
 * (`sampling/createMessage`; a server-to-client request up to 2025-11-25, an
 * input request inside an `input_required` result in 2026-07-28).
 *
 * | field                               | 2024-11-05  | 2025-03-26 | 2025-06-18 | 2025-11-25     | 2026-07-28     |
 * |-------------------------------------|-------------|------------|------------|----------------|----------------|
 * | message/result `content` blocks     | text, image | + audio    | + audio    | + tool_use,    | as 2025-11-25  |
 * |                                     |             |            |            |   tool_result  |                |
 * | `content` one block or a list        | one         | one        | one        | one or list    | one or list    |
 * | SamplingMessage `_meta`             | -           | -          | -          | yes            | yes            |
 * | params `tools`, `toolChoice`        | -           | -          | -          | yes            | yes            |
 * | params `task`                       | -           | -          | -          | yes            | -              |
 * | params `_meta` declared             | - (generic) | - (generic)| - (generic)| progress + any | -              |
 * | result `resultType`                 | -           | -          | -          | -              | - (not a       |
 * |                                     |             |            |            |                | Result there)  |
 *
 * The client declares `sampling` (with `tools` for tool use, `context` for
 * `includeContext` other than "none", 2025-11-25 on).
 */
import * as Schema from "effect/Schema"
import { Role, SamplingContent, UnitInterval } from "./Content.ts"
import { OpenObject } from "./internal/open.ts"
import { resultStruct } from "./internal/result.ts"
import { Tool } from "./internal/tool.ts"
import { Meta, RequestMeta } from "./Meta.ts"
import { TaskMetadata } from "./Tasks.ts"

/** A substring the client may match against model names (e.g. "claude", "sonnet"). */
export const ModelHint = Schema.Struct({ name: Schema.optionalKey(Schema.String) }).annotate({
  identifier: "ModelHint"
})
export type ModelHint = typeof ModelHint.Type

/** The server's preferences for model selection; the client decides. */
export const ModelPreferences = Schema.Struct({
  hints: Schema.optionalKey(Schema.Array(ModelHint)),
  costPriority: Schema.optionalKey(UnitInterval),
  speedPriority: Schema.optionalKey(UnitInterval),
  intelligencePriority: Schema.optionalKey(UnitInterval)
}).annotate({ identifier: "ModelPreferences" })
export type ModelPreferences = typeof ModelPreferences.Type

/** Which MCP servers' context the client should include in the prompt. */
export const IncludeContext = Schema.Literals(["none", "thisServer", "allServers"]).annotate({
  identifier: "IncludeContext"
})
export type IncludeContext = typeof IncludeContext.Type

/** How the model may use the offered tools (2025-11-25 on). */
export const ToolChoice = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["auto", "required", "none"]))
}).annotate({ identifier: "ToolChoice" })
export type ToolChoice = typeof ToolChoice.Type

/**
 * One block or, from 2025-11-25, a list of blocks. Older revisions only send a
 * single block; a list must be projected down (or refused) for them.
 */
export const SamplingMessageContent = Schema.Union([SamplingContent, Schema.Array(SamplingContent)]).annotate({
  identifier: "SamplingMessageContent"
})
export type SamplingMessageContent = typeof SamplingMessageContent.Type

/** One message of a sampling conversation. */
export const SamplingMessage = Schema.Struct({
  role: Role,
  content: SamplingMessageContent,
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "SamplingMessage" })
/** Decoded `SamplingMessage`. */
export type SamplingMessage = typeof SamplingMessage.Type

/** Params of `sampling/createMessage`. */
export const CreateMessageParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  messages: Schema.Array(SamplingMessage),
  modelPreferences: Schema.optionalKey(ModelPreferences),
  systemPrompt: Schema.optionalKey(Schema.String),
  includeContext: Schema.optionalKey(IncludeContext),
  temperature: Schema.optionalKey(Schema.Number),
  maxTokens: Schema.Int,
  stopSequences: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Provider-specific metadata, passed through. */
  metadata: Schema.optionalKey(OpenObject),
  tools: Schema.optionalKey(Schema.Array(Tool)),
  toolChoice: Schema.optionalKey(ToolChoice),
  task: Schema.optionalKey(TaskMetadata)
}).annotate({ identifier: "CreateMessageParams" })
/** Decoded `CreateMessageParams`. */
export type CreateMessageParams = typeof CreateMessageParams.Type

/** The result of `sampling/createMessage`: the model's message. */
export const CreateMessageResult = resultStruct({
  role: Role,
  content: SamplingMessageContent,
  /** The model that produced the message. */
  model: Schema.String,
  /** Why sampling stopped: "endTurn", "stopSequence", "maxTokens", "toolUse" or a provider's own reason. */
  stopReason: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "CreateMessageResult" })
/** Decoded `CreateMessageResult`. */
export type CreateMessageResult = typeof CreateMessageResult.Type

const isList = (content: SamplingMessageContent): content is ReadonlyArray<SamplingContent> => Array.isArray(content)

/** The content of a message as a list, whichever form it was sent in. */
export const contentBlocks = (content: SamplingMessageContent): ReadonlyArray<SamplingContent> =>
  isList(content) ? content : [content]

/**
 * The content as a single block when it is one (or a one-element list): the
 * form revisions before 2025-11-25 can carry; `undefined` otherwise.
 */
export const singleBlock = (content: SamplingMessageContent): SamplingContent | undefined => {
  if (!isList(content)) return content
  return content.length === 1 ? content[0] : undefined
}
