/**
 * The client's side of an elicitation form: fill in the defaults the
 * server's `requestedSchema` declares for fields the user left out, and check
 * an answer against the schema before it is sent. The McpClient applies both
 * to every accepted form answer; UIs can call them directly to validate as
 * the user types.
 */
import type * as Elicitation from "@effect-mcp/protocol/Elicitation"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/** The content of a form answer: field name to value. */
export type Content = { readonly [field: string]: Elicitation.ElicitValue }

/** One field of a form answer that does not satisfy the requested schema, and why. */
export const FieldIssue = Schema.Struct({ field: Schema.String, message: Schema.String })
/** A decoded `FieldIssue`. */
export type FieldIssue = typeof FieldIssue.Type

/** An answer that does not satisfy `requestedSchema`; one issue per offending field. */
export class FormError extends Schema.TaggedError<FormError>()("FormError", {
  issues: Schema.Array(FieldIssue)
}) {
  override get message(): string {
    return `invalid form answer: ${this.issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`
  }
}

/** `content` with every declared `default` filled in for fields it lacks. */
export const applyDefaults = (schema: Elicitation.RequestedSchema, content: Content | undefined): Content => {
  const out: Record<string, Elicitation.ElicitValue> = { ...content }
  for (const [field, definition] of Object.entries(schema.properties)) {
    if (out[field] === undefined && definition.default !== undefined) out[field] = definition.default
  }
  return out
}

type Definition = Elicitation.PrimitiveSchemaDefinition

const formats: Readonly<Record<string, RegExp>> = {
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:\S*$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  "date-time": /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/
}

const choicesOf = (definition: Definition): ReadonlyArray<string> | undefined => {
  if ("enum" in definition) return definition.enum
  if ("oneOf" in definition) return definition.oneOf.map((o) => o.const)
  return undefined
}

const multiChoicesOf = (definition: Definition): ReadonlyArray<string> | undefined => {
  if (!("items" in definition)) return undefined
  const items = definition.items
  return "enum" in items ? items.enum : items.anyOf.map((o) => o.const)
}

const lengthIssue = (value: string, min: number | undefined, max: number | undefined): string | undefined => {
  const length = [...value].length
  if (min !== undefined && length < min) return `must be at least ${min} characters`
  if (max !== undefined && length > max) return `must be at most ${max} characters`
  return undefined
}

/** Why `value` does not fit `definition`, or undefined when it does. */
const check = (definition: Definition, value: Elicitation.ElicitValue): string | undefined => {
  switch (definition.type) {
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be a boolean"
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number"
      if (definition.type === "integer" && !Number.isInteger(value)) return "must be an integer"
      if (definition.minimum !== undefined && value < definition.minimum) return `must be >= ${definition.minimum}`
      if (definition.maximum !== undefined && value > definition.maximum) return `must be <= ${definition.maximum}`
      return undefined
    }
    case "array": {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return "must be a list of strings"
      const allowed = multiChoicesOf(definition) ?? []
      const unknown = value.find((v) => !allowed.includes(v))
      if (unknown !== undefined) return `${JSON.stringify(unknown)} is not one of the choices`
      if (definition.minItems !== undefined && value.length < definition.minItems) {
        return `must select at least ${definition.minItems}`
      }
      if (definition.maxItems !== undefined && value.length > definition.maxItems) {
        return `must select at most ${definition.maxItems}`
      }
      return undefined
    }
    case "string": {
      if (typeof value !== "string") return "must be a string"
      const choices = choicesOf(definition)
      if (choices !== undefined) {
        return choices.includes(value) ? undefined : `${JSON.stringify(value)} is not one of the choices`
      }
      if (!("minLength" in definition || "maxLength" in definition || "format" in definition)) return undefined
      const s = definition as Elicitation.StringSchema
      const length = lengthIssue(value, s.minLength, s.maxLength)
      if (length !== undefined) return length
      const format = s.format === undefined ? undefined : formats[s.format]
      return format === undefined || format.test(value) ? undefined : `must be a valid ${s.format}`
    }
  }
}

/** Checks an answer: every required field present, every value of its field's type and within its limits. */
export const validate = (schema: Elicitation.RequestedSchema, content: Content): Result.Result<Content, FormError> => {
  const issues: Array<FieldIssue> = []
  for (const field of schema.required ?? []) {
    if (content[field] === undefined) issues.push({ field, message: "is required" })
  }
  for (const [field, value] of Object.entries(content)) {
    const definition = schema.properties[field]
    if (definition === undefined) {
      issues.push({ field, message: "is not a field of the form" })
      continue
    }
    const issue = check(definition, value)
    if (issue !== undefined) issues.push({ field, message: issue })
  }
  return issues.length === 0 ? Result.succeed(content) : Result.fail(new FormError({ issues }))
}

/** Defaults first, then validation: what the client sends for an accepted form. */
export const complete = (
  schema: Elicitation.RequestedSchema,
  content: Content | undefined
): Result.Result<Content, FormError> => validate(schema, applyDefaults(schema, content))
