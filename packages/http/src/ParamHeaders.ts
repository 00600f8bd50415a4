/**
 * Tool arguments mirrored into HTTP headers (SEP-2243, Streamable HTTP on
 * 2026-07-28). A property of a tool's `inputSchema` may carry
 * `x-mcp-header: "<Name>"`; every `tools/call` of that tool then carries the
 * argument as `Mcp-Param-<Name>`, so intermediaries can route without reading
 * the body.
 *
 * An annotation is valid when its name is an HTTP field-name token, unique
 * ignoring case within the schema, on a property of type string, integer or
 * boolean, and reachable from the root through `properties` alone (nesting is
 * allowed). A client leaves a tool with any invalid annotation out of its
 * listing.
 *
 * Values travel as header text: booleans as `true`/`false`, numbers in
 * decimal, strings as they are when they are visible ASCII with no leading or
 * trailing blank and do not look like the encoded form, otherwise base64 in
 * the `=?base64?...?=` form. A null or missing argument sends no header.
 *
 * The rules are shared by the client (listing, headers) and the server
 * (checking the headers against the arguments).
 */
import * as Base64 from "effect/encoding/Base64"
import * as McpHeaders from "./McpHeaders.ts"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"

/** The JSON Schema keyword with which a tool declares that an argument is mirrored into an HTTP header (SEP-2243). */
export const ANNOTATION = "x-mcp-header"

/** The lower-case prefix of the headers (header names ignore case). */
export const HEADER_PREFIX: typeof McpHeaders.PARAM_PREFIX = McpHeaders.PARAM_PREFIX

/** The types a mirrored argument may have. */
export type ParamType = "string" | "integer" | "boolean"

/** One mirrored argument: where it sits in the arguments, its header name as declared, and its type. */
export interface Declaration {
  readonly path: ReadonlyArray<string>
  readonly name: string
  readonly type: ParamType
}

/** What a schema walk found: the valid declarations and what is wrong with the others. */
export interface Scan {
  readonly declarations: ReadonlyArray<Declaration>
  readonly problems: ReadonlyArray<string>
}

// RFC 9110 field-name token (`1*tchar`).
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const primitive: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"])

type Json = { readonly [key: string]: unknown }

/** Whether `name` may follow `Mcp-Param-`: an HTTP field-name token. */
export const isHeaderName = (name: unknown): name is string => typeof name === "string" && token.test(name)

/**
 * Walks an input schema for annotations. Only a chain of `properties` from
 * the root reaches an argument; an annotation anywhere else (`items`,
 * composition keywords, `$defs`, the root itself) is a problem.
 */
export const scan = (inputSchema: unknown): Scan => {
  const found: Array<Declaration> = []
  const problems: Array<string> = []
  const seen = new Set<string>()
  const walk = (node: unknown, path: ReadonlyArray<string>, reachable: boolean): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, path, false)
      return
    }
    if (!Predicate.isObject(node)) return
    const schema = node as Json
    if (ANNOTATION in schema) {
      const name = schema[ANNOTATION]
      const where = path.length === 0 ? "the schema root" : path.join(".")
      if (!reachable || path.length === 0) problems.push(`${where}: not reachable through properties alone`)
      else if (!isHeaderName(name)) problems.push(`${where}: ${JSON.stringify(name)} is not a header name`)
      else if (!primitive.has(schema.type)) problems.push(`${where}: only string, integer and boolean may be mirrored`)
      else if (seen.has(name.toLowerCase())) problems.push(`${where}: ${name} is declared twice (names ignore case)`)
      else {
        seen.add(name.toLowerCase())
        found.push({ path, name, type: schema.type as ParamType })
      }
    }
    for (const key in schema) {
      const value = schema[key]
      if (key === "properties" && Predicate.isObject(value) && !Array.isArray(value)) {
        for (const property in value as Json) walk((value as Json)[property], [...path, property], reachable)
      } else if (key !== ANNOTATION) {
        walk(value, path, false)
      }
    }
  }
  walk(inputSchema, [], true)
  return { declarations: found, problems }
}

/** The declarations of an input schema, or why its annotations are invalid. */
export const declarations = (inputSchema: unknown): Result.Result<ReadonlyArray<Declaration>, string> => {
  const { declarations, problems } = scan(inputSchema)
  return problems.length === 0 ? Result.succeed(declarations) : Result.fail(problems.join("; "))
}

// Visible ASCII, inner spaces allowed, no blank at either end (the empty text is plain too).
const plain = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/
// Plain text that reads as the encoded form must be encoded, or it would be decoded on arrival.
const lookalike = /^=\?base64\?.*\?=$/i

/** Text as header text: as is when that is unambiguous, in the `=?base64?...?=` form otherwise. */
export const encodeText = (text: string): string =>
  plain.test(text) && !lookalike.test(text) ? text : `=?base64?${Base64.encode(text)}?=`

/** The text an argument value stands for in a header; undefined for values that are never mirrored. */
export const textOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number" && Number.isFinite(value)) return String(value)
  return undefined
}

/** The header text of one argument, or undefined when no header is sent (null, missing, not a primitive). */
export const encodeValue = (value: unknown): string | undefined => {
  const text = textOf(value)
  return text === undefined ? undefined : encodeText(text)
}

/** The value at `path` in a call's arguments, undefined when any step is missing. */
export const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let node = args
  for (const key of path) {
    if (!Predicate.isObject(node) || Array.isArray(node)) return undefined
    node = (node as Json)[key]
  }
  return node
}

/** The `Mcp-Param-*` headers of one call (lower-case names). */
export const headersFor = (declared: ReadonlyArray<Declaration>, args: unknown): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const declaration of declared) {
    const text = encodeValue(valueAt(args, declaration.path))
    if (text !== undefined) headers[`${HEADER_PREFIX}${declaration.name.toLowerCase()}`] = text
  }
  return headers
}
