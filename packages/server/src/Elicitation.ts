/**
 * Asking the user, through the client, from inside a handler
 * (`elicitation/create`): a form described by an Effect Schema (the answer
 * comes back decoded and typed) or a URL the user visits (2025-11-25 on).
 * The same code on every revision that has elicitation (2025-06-18 on): a
 * request on stateful sessions, an input request on 2026-07-28.
 */
import type * as ElicitationWire from "@effect-mcp/protocol/Elicitation"
import * as Elicit from "@effect-mcp/protocol/Elicitation"
import * as Features from "@effect-mcp/protocol/Features"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { describe as describeIssue } from "./internal/issues.ts"
import { type AskOptions, ClientRequestError, decodeAnswer, ServerRequest } from "./ServerRequest.ts"

type Obj = { readonly [key: string]: unknown }

/** What the user did with a form: accepted with content decoded by the form's Schema, declined, or cancelled. */
export type FormResult<A> =
  | { readonly action: "accept"; readonly content: A }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/** What the user did with a URL elicitation. */
export interface UrlResult {
  readonly action: Elicit.ElicitAction
  /** The id `notifications/elicitation/complete` refers to (2025-11-25; undefined on 2026-07-28). */
  readonly elicitationId: string | undefined
}

const decodeResult = decodeAnswer("elicitation/create", Elicit.ElicitResult)

const fieldKeys = [
  "type",
  "title",
  "description",
  "minLength",
  "maxLength",
  "format",
  "minimum",
  "maximum",
  "default",
  "enum",
  "enumNames",
  "oneOf",
  "items",
  "minItems",
  "maxItems"
] as const

const primitiveTypes = new Set(["string", "number", "integer", "boolean", "array"])

/** One form field: the JSON codec's alternatives (e.g. a number or "NaN") narrowed to the primitive one. */
const field = (schema: Obj, definitions: Obj): Obj => {
  let node = schema
  if (typeof node.$ref === "string") {
    const name = node.$ref.split("/").at(-1) ?? ""
    node = { ...(definitions[name] as Obj | undefined), ...node }
  }
  if (node.type === undefined && Array.isArray(node.anyOf)) {
    const branch = (node.anyOf as ReadonlyArray<Obj>).find((b) => primitiveTypes.has(b.type as string))
    if (branch !== undefined) node = { ...node, ...branch }
  }
  const out: Record<string, unknown> = {}
  for (const key of fieldKeys) if (node[key] !== undefined) out[key] = node[key]
  return out
}

/**
 * What a form field cannot be, or undefined when it is one: a string, a
 * number, an integer, a boolean, or an array of enum values (a multi-select).
 */
const notAField = (field: Obj): string | undefined => {
  const type = field.type
  if (type === "string" || type === "number" || type === "integer" || type === "boolean") return undefined
  const items = field.items as Obj | undefined
  if (type === "array" && (Array.isArray(items?.enum) || Array.isArray(items?.anyOf))) return undefined
  if (type === "array") return "an array of free values (a form's array is a multi-select of enum values)"
  return type === undefined ? "of no single JSON type" : `of type ${String(type)}`
}

/**
 * The `requestedSchema` of a form: an object of flat primitive fields, from
 * an Effect Schema (titles, descriptions, defaults and enums carried over).
 * Throws when a field is none a form can hold (a nested object, say): the
 * spec allows only strings, numbers, integers, booleans and enums, so such a
 * form is refused before it is sent (`form` dies with this message).
 */
export const requestedSchema = (schema: Schema.Top): Elicit.RequestedSchema => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions = document.definitions as Obj
  let root = document.schema as Obj
  if (typeof root.$ref === "string") root = (definitions[root.$ref.split("/").at(-1) ?? ""] as Obj | undefined) ?? root
  const properties: Record<string, unknown> = {}
  for (const [key, value] of Object.entries((root.properties as Obj | undefined) ?? {})) {
    const shaped = field(value as Obj, definitions)
    const problem = notAField(shaped)
    if (problem !== undefined) {
      throw new Error(
        `elicitation form: field "${key}" is ${problem}; a form's fields are strings, numbers, integers, booleans and enums`
      )
    }
    properties[key] = shaped
  }
  const required = Array.isArray(root.required) ? (root.required as ReadonlyArray<string>) : []
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: properties as Elicit.RequestedSchema["properties"],
    ...(required.length > 0 ? { required } : {})
  }
}

/** Sends raw `elicitation/create` params and returns the client's answer as it came. */
export const request = (
  params: ElicitationWire.ElicitParams,
  options?: AskOptions
): Effect.Effect<Elicit.ElicitResult, ClientRequestError, ServerRequest> =>
  ServerRequest.use((r) => Effect.flatMap(r.ask("elicitation/create", params, options), decodeResult))

/** Shows a form built from `schema`; an accepted answer is decoded with it. `ask` sets a key, timeout or progress handler. */
export const form = <S extends Schema.Codec<unknown, unknown, never, never>>(
  options: {
    readonly message: string
    readonly schema: S
  },
  ask?: AskOptions
): Effect.Effect<FormResult<S["Type"]>, ClientRequestError, ServerRequest> =>
  formWith(options, ask) as Effect.Effect<FormResult<S["Type"]>, ClientRequestError, ServerRequest>

// Made once (a generator function made per call costs its own generator prototype and map).
const formWith = Effect.fnUntraced(function* (
  options: { readonly message: string; readonly schema: Schema.Codec<unknown, unknown, never, never> },
  ask: AskOptions | undefined
) {
  const result = yield* request(
    {
      mode: "form",
      message: options.message,
      requestedSchema: requestedSchema(options.schema)
    },
    ask
  )
  if (result.action !== "accept") return { action: result.action }
  const content = yield* Schema.decodeUnknownEffect(Schema.toCodecJson(options.schema))(result.content ?? {}).pipe(
    Effect.mapError(
      (issue) =>
        new ClientRequestError({
          reason: "InvalidResponse",
          method: "elicitation/create",
          message: `elicitation/create: the submitted form does not match its schema: ${describeIssue(issue.issue)}`,
          cause: issue
        })
    )
  )
  return { action: "accept", content } as const
})

/** Sends the user to `url` (URL mode, 2025-11-25 on). `ask` sets a key, timeout or progress handler. */
export const url = (
  options: {
    readonly message: string
    readonly url: string
    readonly elicitationId?: string | undefined
  },
  ask?: AskOptions
): Effect.Effect<UrlResult, ClientRequestError, ServerRequest> =>
  ServerRequest.use((r) => {
    const elicitationId = Features.has(r.version, "elicitationComplete")
      ? (options.elicitationId ?? SecureRandom.uuidV4Unsafe())
      : undefined
    const params = { mode: "url" as const, message: options.message, url: options.url }
    return request(elicitationId === undefined ? params : { ...params, elicitationId }, ask).pipe(
      Effect.map((result): UrlResult => ({ action: result.action, elicitationId }))
    )
  })

/**
 * Tells the client that the out-of-band interaction of a URL elicitation has
 * finished (`notifications/elicitation/complete`, 2025-11-25); nothing is sent
 * where the revision has no such notification.
 */
export const complete = (elicitationId: string | undefined): Effect.Effect<void, never, ServerRequest> =>
  ServerRequest.use((r) =>
    elicitationId === undefined || !Features.has(r.version, "elicitationComplete")
      ? Effect.void
      : r.notify("notifications/elicitation/complete", { elicitationId })
  )

/** Whether `u` is an accepted form result. */
export const isAccepted = <A>(u: FormResult<A>): u is Extract<FormResult<A>, { action: "accept" }> =>
  Predicate.isObject(u) && u.action === "accept"
