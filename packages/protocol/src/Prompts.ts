/**
 * Prompts: message templates a server offers (`prompts/list`, `prompts/get`,
 * `notifications/prompts/list_changed`).
 *
 * | field                                   | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
 * |-----------------------------------------|------------|------------|------------|------------|------------|
 * | Prompt/PromptArgument `title`           | -          | -          | yes        | yes        | yes        |
 * | Prompt `_meta`                          | -          | -          | yes        | yes        | yes        |
 * | Prompt `icons`                          | -          | -          | -          | yes        | yes        |
 * | PromptMessage content                   | text,image,| + audio    | + resource_| + resource_| + resource_|
 * |                                         | resource   |            | link       | link       | link       |
 * | get params `inputResponses`,            | -          | -          | -          | -          | yes        |
 * |   `requestState` (retry)                |            |            |            |            |            |
 * | list result `ttlMs`, `cacheScope`       | -          | -          | -          | -          | required   |
 */
import * as Schema from "effect/Schema"
import { CacheHints } from "./CacheHints.ts"
import { ContentBlock, Role } from "./Content.ts"
import { InputResponseParams } from "./InputRequired.ts"
import { Icons } from "./internal/metaValues.ts"
import { resultStruct } from "./internal/result.ts"
import { Meta, NotificationParams } from "./Meta.ts"
import { PaginatedParams, paginatedResultFields } from "./Pagination.ts"

/** An argument a prompt takes. */
export const PromptArgument = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  required: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "PromptArgument" })
/** Decoded `PromptArgument`. */
export type PromptArgument = typeof PromptArgument.Type

/** A prompt as `prompts/list` describes it. */
export const Prompt = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  arguments: Schema.optionalKey(Schema.Array(PromptArgument)),
  icons: Schema.optionalKey(Icons),
  _meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "Prompt" })
/** Decoded `Prompt`. */
export type Prompt = typeof Prompt.Type

/** One message of a prompt. */
export const PromptMessage = Schema.Struct({
  role: Role,
  content: ContentBlock
}).annotate({ identifier: "PromptMessage" })
/** Decoded `PromptMessage`. */
export type PromptMessage = typeof PromptMessage.Type

/** Params of `prompts/list`. */
export const ListPromptsParams = PaginatedParams
/** Decoded `ListPromptsParams`. */
export type ListPromptsParams = PaginatedParams

/** The result of `prompts/list`. */
export const ListPromptsResult = resultStruct({
  prompts: Schema.Array(Prompt),
  ...paginatedResultFields,
  ...CacheHints.fields
}).annotate({ identifier: "ListPromptsResult" })
/** Decoded `ListPromptsResult`. */
export type ListPromptsResult = typeof ListPromptsResult.Type

/** Params of `prompts/get`. */
export const GetPromptParams = Schema.Struct({
  ...InputResponseParams.fields,
  name: Schema.String,
  /** Template arguments; values are always strings. */
  arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
}).annotate({ identifier: "GetPromptParams" })
/** Decoded `GetPromptParams`. */
export type GetPromptParams = typeof GetPromptParams.Type

/** The result of `prompts/get`. */
export const GetPromptResult = resultStruct({
  description: Schema.optionalKey(Schema.String),
  messages: Schema.Array(PromptMessage)
}).annotate({ identifier: "GetPromptResult" })
/** Decoded `GetPromptResult`. */
export type GetPromptResult = typeof GetPromptResult.Type

/** Params of `notifications/prompts/list_changed`. */
export const PromptListChangedParams = NotificationParams
export type PromptListChangedParams = NotificationParams
