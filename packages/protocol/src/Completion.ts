/**
 * Argument completion (`completion/complete`): suggestions for a prompt
 * argument or a resource-template variable, like IDE autocompletion.
 *
 * | field                           | 2024-11-05 | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
 * |---------------------------------|------------|------------|------------|------------|------------|
 * | server `completions` capability | -          | yes        | yes        | yes        | yes        |
 * | resource ref definition name    | ResourceReference | ResourceReference | ResourceTemplateReference (same shape, renamed) | same | same |
 * | PromptReference `title`         | -          | -          | yes        | yes        | yes        |
 * | params `context.arguments`      | -          | -          | yes        | yes        | yes        |
 *
 * 2024-11-05 has the method without a capability to gate it.
 */
import * as Schema from "effect/Schema"
import { resultStruct } from "./internal/result.ts"
import { RequestMeta } from "./Meta.ts"

/** A prompt whose argument is being completed. */
export const PromptReference = Schema.Struct({
  type: Schema.Literal("ref/prompt"),
  name: Schema.String,
  title: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "PromptReference" })
/** Decoded `PromptReference`. */
export type PromptReference = typeof PromptReference.Type

/** `uri` is the template (or a concrete URI) whose variable is being completed. */
export const ResourceTemplateReference = Schema.Struct({
  type: Schema.Literal("ref/resource"),
  uri: Schema.String
}).annotate({ identifier: "ResourceTemplateReference" })
export type ResourceTemplateReference = typeof ResourceTemplateReference.Type

/** The 2024-11-05 / 2025-03-26 name of {@link ResourceTemplateReference}. */
export const ResourceReference = ResourceTemplateReference
export type ResourceReference = ResourceTemplateReference

/** What is being completed: a prompt, or a resource template. */
export const CompletionReference = Schema.Union([PromptReference, ResourceTemplateReference]).annotate({
  identifier: "CompletionReference"
})
/** Decoded `CompletionReference`. */
export type CompletionReference = typeof CompletionReference.Type

/** Params of `completion/complete`. */
export const CompleteParams = Schema.Struct({
  _meta: Schema.optionalKey(RequestMeta),
  ref: CompletionReference,
  /** The argument being completed and what the user typed so far. */
  argument: Schema.Struct({ name: Schema.String, value: Schema.String }),
  /** Values of arguments already filled in (2025-06-18 on). */
  context: Schema.optionalKey(
    Schema.Struct({ arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)) })
  )
}).annotate({ identifier: "CompleteParams" })
/** Decoded `CompleteParams`. */
export type CompleteParams = typeof CompleteParams.Type

/** The spec caps `values` at this many items. */
export const maxValues = 100

/** The suggested values, with the total count and whether there are more. */
export const Completion = Schema.Struct({
  values: Schema.Array(Schema.String),
  /** Total matches, which may exceed `values.length`. */
  total: Schema.optionalKey(Schema.Int),
  hasMore: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "Completion" })
/** Decoded `Completion`. */
export type Completion = typeof Completion.Type

/** The result of `completion/complete`. */
export const CompleteResult = resultStruct({ completion: Completion }).annotate({ identifier: "CompleteResult" })
/** Decoded `CompleteResult`. */
export type CompleteResult = typeof CompleteResult.Type

/**
 * A completion from all matches: the first {@link maxValues}, with `total`
 * and `hasMore` set so the client knows what was cut.
 */
export const fromMatches = (matches: ReadonlyArray<string>): Completion =>
  matches.length <= maxValues
    ? { values: matches, total: matches.length, hasMore: false }
    : { values: matches.slice(0, maxValues), total: matches.length, hasMore: true }
