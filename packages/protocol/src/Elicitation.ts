/**
 * Elicitation: the server asks the user, through the client, for input
 * (`elicitation/create`; a server-to-client request in 2025-06-18 and
 * 2025-11-25, an input request inside an `input_required` result in 2026-07-28).
 *
 * | shape                             | 2025-06-18          | 2025-11-25                   | 2026-07-28              |
 * |-----------------------------------|---------------------|------------------------------|-------------------------|
 * | form params                       | no `mode` key       | `mode?: "form"`              | `mode?: "form"`         |
 * | `requestedSchema.$schema`         | -                   | yes                          | yes                     |
 * | URL params (`mode: "url"`)        | -                   | yes, `elicitationId` required | yes, no `elicitationId` |
 * | params `_meta`, `task`            | (`_meta` generic)   | yes                          | -                       |
 * | enum fields                       | `EnumSchema`:       | untitled/titled single,      | as 2025-11-25           |
 * |                                   | `enum`+`enumNames?` | untitled/titled multi, legacy |                        |
 * | `default` on string/number/enum   | - (boolean only)    | yes                          | yes                     |
 * | result `content` values           | string/number/bool  | + string[] (multi-select)    | as 2025-11-25           |
 * | result `_meta`                    | yes                 | yes                          | -                       |
 * | `notifications/elicitation/complete` | -                | yes                          | -                       |
 * | client capability                 | `elicitation: {}`   | `{ form?, url? }`            | `{ form?, url? }`       |
 *
 * Params without `mode` are form mode. 2025-06-18's `EnumSchema` is
 * {@link LegacyTitledEnumSchema} without `default`.
 */
import * as Schema from "effect/Schema"
import { resultStruct } from "./internal/result.ts"
import { NotificationMeta, RequestMeta } from "./Meta.ts"
import { TaskMetadata } from "./Tasks.ts"

const described = {
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String)
}

/** A string field of an elicitation form. */
export const StringSchema = Schema.Struct({
  type: Schema.Literal("string"),
  ...described,
  minLength: Schema.optionalKey(Schema.Int),
  maxLength: Schema.optionalKey(Schema.Int),
  format: Schema.optionalKey(Schema.Literals(["email", "uri", "date", "date-time"])),
  default: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "StringSchema" })
/** Decoded `StringSchema`. */
export type StringSchema = typeof StringSchema.Type

/** A number or integer field of an elicitation form. */
export const NumberSchema = Schema.Struct({
  type: Schema.Literals(["number", "integer"]),
  ...described,
  minimum: Schema.optionalKey(Schema.Number),
  maximum: Schema.optionalKey(Schema.Number),
  default: Schema.optionalKey(Schema.Number)
}).annotate({ identifier: "NumberSchema" })
/** Decoded `NumberSchema`. */
export type NumberSchema = typeof NumberSchema.Type

/** A boolean field of an elicitation form. */
export const BooleanSchema = Schema.Struct({
  type: Schema.Literal("boolean"),
  ...described,
  default: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "BooleanSchema" })
/** Decoded `BooleanSchema`. */
export type BooleanSchema = typeof BooleanSchema.Type

/** A choice with a display label. */
export const TitledOption = Schema.Struct({ const: Schema.String, title: Schema.String }).annotate({
  identifier: "TitledOption"
})
export type TitledOption = typeof TitledOption.Type

/** Pick one of `enum` (2025-11-25 on). */
export const UntitledSingleSelectEnumSchema = Schema.Struct({
  type: Schema.Literal("string"),
  ...described,
  enum: Schema.Array(Schema.String),
  default: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "UntitledSingleSelectEnumSchema" })
export type UntitledSingleSelectEnumSchema = typeof UntitledSingleSelectEnumSchema.Type

/** Pick one of `oneOf`, each with a label (2025-11-25 on). */
export const TitledSingleSelectEnumSchema = Schema.Struct({
  type: Schema.Literal("string"),
  ...described,
  oneOf: Schema.Array(TitledOption),
  default: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "TitledSingleSelectEnumSchema" })
export type TitledSingleSelectEnumSchema = typeof TitledSingleSelectEnumSchema.Type

const multiSelect = {
  type: Schema.Literal("array"),
  ...described,
  minItems: Schema.optionalKey(Schema.Int),
  maxItems: Schema.optionalKey(Schema.Int),
  default: Schema.optionalKey(Schema.Array(Schema.String))
}

/** Pick any of `items.enum` (2025-11-25 on). */
export const UntitledMultiSelectEnumSchema = Schema.Struct({
  ...multiSelect,
  items: Schema.Struct({ type: Schema.Literal("string"), enum: Schema.Array(Schema.String) })
}).annotate({ identifier: "UntitledMultiSelectEnumSchema" })
export type UntitledMultiSelectEnumSchema = typeof UntitledMultiSelectEnumSchema.Type

/** Pick any of `items.anyOf`, each with a label (2025-11-25 on). */
export const TitledMultiSelectEnumSchema = Schema.Struct({
  ...multiSelect,
  items: Schema.Struct({ anyOf: Schema.Array(TitledOption) })
}).annotate({ identifier: "TitledMultiSelectEnumSchema" })
export type TitledMultiSelectEnumSchema = typeof TitledMultiSelectEnumSchema.Type

/** `enum` with parallel `enumNames` labels (2025-06-18's `EnumSchema`; deprecated from 2025-11-25). */
export const LegacyTitledEnumSchema = Schema.Struct({
  type: Schema.Literal("string"),
  ...described,
  enum: Schema.Array(Schema.String),
  enumNames: Schema.optionalKey(Schema.Array(Schema.String)),
  default: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "LegacyTitledEnumSchema" })
export type LegacyTitledEnumSchema = typeof LegacyTitledEnumSchema.Type

/** A single- or multi-select field of an elicitation form, with or without titles. */
export const EnumSchema = Schema.Union([
  TitledSingleSelectEnumSchema,
  // Before the untitled variant: decoding keeps the first match and drops keys it
  // does not know, so the wider shape must win for `enumNames` to survive.
  LegacyTitledEnumSchema,
  UntitledSingleSelectEnumSchema,
  TitledMultiSelectEnumSchema,
  UntitledMultiSelectEnumSchema
]).annotate({ identifier: "EnumSchema" })
/** Decoded `EnumSchema`. */
export type EnumSchema = typeof EnumSchema.Type

/**
 * A field of a form: flat, primitive values only. `StringSchema` comes last
 * because an enum schema is also a `type: "string"` object.
 */
export const PrimitiveSchemaDefinition = Schema.Union([BooleanSchema, NumberSchema, EnumSchema, StringSchema]).annotate(
  { identifier: "PrimitiveSchemaDefinition" }
)
export type PrimitiveSchemaDefinition = typeof PrimitiveSchemaDefinition.Type

/** The form to show: an object schema whose properties are primitive fields. */
export const RequestedSchema = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String),
  type: Schema.Literal("object"),
  properties: Schema.Record(Schema.String, PrimitiveSchemaDefinition),
  required: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "RequestedSchema" })
export type RequestedSchema = typeof RequestedSchema.Type

const paramsCommon = {
  _meta: Schema.optionalKey(RequestMeta),
  /** What is being asked, shown to the user. */
  message: Schema.String,
  task: Schema.optionalKey(TaskMetadata)
}

/** Form mode: the client renders `requestedSchema` and returns the answers in `content`. */
export const ElicitFormParams = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literal("form")),
  ...paramsCommon,
  requestedSchema: RequestedSchema
}).annotate({ identifier: "ElicitFormParams" })
export type ElicitFormParams = typeof ElicitFormParams.Type

/** URL mode (2025-11-25 on): the user completes an interaction out of band at `url`. */
export const ElicitUrlParams = Schema.Struct({
  mode: Schema.Literal("url"),
  ...paramsCommon,
  url: Schema.String,
  /** Required in 2025-11-25 (matched by `notifications/elicitation/complete`); absent in 2026-07-28. */
  elicitationId: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ElicitUrlParams" })
export type ElicitUrlParams = typeof ElicitUrlParams.Type

/** Params of `elicitation/create`: URL mode or form mode. */
export const ElicitParams = Schema.Union([ElicitUrlParams, ElicitFormParams]).annotate({
  identifier: "ElicitParams"
})
/** Decoded `ElicitParams`. */
export type ElicitParams = typeof ElicitParams.Type

/** The params' mode; absent `mode` means form. */
export const modeOf = (params: ElicitParams): "form" | "url" => (params.mode === "url" ? "url" : "form")

/** `accept`: submitted (form `content` present); `decline`: refused; `cancel`: dismissed. */
export const ElicitAction = Schema.Literals(["accept", "decline", "cancel"]).annotate({ identifier: "ElicitAction" })
export type ElicitAction = typeof ElicitAction.Type

/** A submitted field value; string lists come from multi-select fields (2025-11-25 on). */
export const ElicitValue = Schema.Union([
  Schema.String,
  Schema.Number,
  Schema.Boolean,
  Schema.Array(Schema.String)
]).annotate({ identifier: "ElicitValue" })
export type ElicitValue = typeof ElicitValue.Type

/** The result of `elicitation/create`: what the user did, and the form's content when accepted. */
export const ElicitResult = resultStruct({
  action: ElicitAction,
  content: Schema.optionalKey(Schema.Record(Schema.String, ElicitValue))
}).annotate({ identifier: "ElicitResult" })
/** Decoded `ElicitResult`. */
export type ElicitResult = typeof ElicitResult.Type

/** Params of `notifications/elicitation/complete` (server to client, 2025-11-25 only). */
export const ElicitationCompleteParams = Schema.Struct({
  _meta: Schema.optionalKey(NotificationMeta),
  elicitationId: Schema.String
}).annotate({ identifier: "ElicitationCompleteParams" })
export type ElicitationCompleteParams = typeof ElicitationCompleteParams.Type
