/**
 * Tool arguments mirrored into HTTP headers (SEP-2243, Streamable HTTP on
 * 2026-07-28). A property of a tool's `inputSchema` may carry
 * `x-mcp-header: "<Name>"`; every `tools/call` of that tool then sends the
 * argument as `Mcp-Param-<Name>`, so intermediaries can route without reading
 * the body.
 *
 * The client must refuse tool definitions whose annotations break the rules
 * (a name that is not an HTTP token, a duplicate name ignoring case, a
 * property that is not a string, integer or boolean, an annotation not
 * reachable through `properties` alone): such tools are left out of the list.
 *
 * Values travel as header text: booleans as `true`/`false`, integers in
 * decimal, strings as they are when they are visible ASCII with no leading or
 * trailing blank, otherwise base64 in the `=?base64?...?=` form. A null or
 * missing argument sends no header.
 *
 * This lives in the conformance client until packages/client (tool listing)
 * and the engine's Streamable HTTP client (headers) take it over.
 */
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Context from "effect/Context"
import * as Base64 from "effect/encoding/Base64"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"

export const ANNOTATION = "x-mcp-header"
export const HEADER_PREFIX = "mcp-param-"

export type ParamType = "string" | "integer" | "boolean"

/** One mirrored argument: where it sits in the arguments, its header name and its type. */
export interface Declaration {
  readonly path: ReadonlyArray<string>
  readonly name: string
  readonly type: ParamType
}

// RFC 9110 field-name token.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const primitive: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"])

type Json = { readonly [key: string]: unknown }

/**
 * The declarations of an input schema, or why the schema's annotations are
 * invalid. Only a chain of `properties` from the root reaches a mirrored
 * argument; an annotation anywhere else (items, composition, `$defs`, the
 * root itself) is invalid.
 */
export const declarations = (inputSchema: unknown): Result.Result<ReadonlyArray<Declaration>, string> => {
  const found: Array<Declaration> = []
  const problems: Array<string> = []
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
      else if (typeof name !== "string" || !token.test(name))
        problems.push(`${where}: ${JSON.stringify(name)} is not a header name`)
      else if (!primitive.has(schema.type)) problems.push(`${where}: only string, integer and boolean may be mirrored`)
      else found.push({ path, name, type: schema.type as ParamType })
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key === "properties" && Predicate.isObject(value) && !Array.isArray(value)) {
        for (const [property, sub] of Object.entries(value as Json)) walk(sub, [...path, property], reachable)
      } else if (key !== ANNOTATION) {
        walk(value, path, false)
      }
    }
  }
  walk(inputSchema, [], true)
  const seen = new Set<string>()
  for (const declaration of found) {
    const key = declaration.name.toLowerCase()
    if (seen.has(key)) problems.push(`${declaration.name}: declared twice (names ignore case)`)
    seen.add(key)
  }
  return problems.length === 0 ? Result.succeed(found) : Result.fail(problems.join("; "))
}

const plain = /^[\x20-\x7e]*$/
const sentinel = /^=\?base64\?.*\?=$/i

/** A string as header text: as is when that is unambiguous, base64 otherwise. */
export const encodeString = (value: string): string =>
  plain.test(value) && value.trim() === value && !sentinel.test(value) ? value : `=?base64?${Base64.encode(value)}?=`

/** The header text of one argument, or undefined when no header is sent. */
export const encodeValue = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined
  if (typeof value === "string") return encodeString(value)
  return undefined
}

const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let node = args
  for (const key of path) {
    if (!Predicate.isObject(node)) return undefined
    node = (node as Json)[key]
  }
  return node
}

/** The `Mcp-Param-*` headers of one call. */
export const headersFor = (declared: ReadonlyArray<Declaration>, args: unknown): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const declaration of declared) {
    const text = encodeValue(valueAt(args, declaration.path))
    if (text !== undefined) headers[`${HEADER_PREFIX}${declaration.name.toLowerCase()}`] = text
  }
  return headers
}

/** The declarations of the tools listed so far, by tool name. */
export class ParamHeaders extends Context.Service<
  ParamHeaders,
  {
    /** Keeps the tools whose annotations are valid, remembering their declarations, and drops the others. */
    readonly admit: (tools: ReadonlyArray<Tools.Tool>) => Effect.Effect<ReadonlyArray<Tools.Tool>>
    /** The headers of a call to `tool` with `args` (none for a tool not admitted). */
    readonly headersFor: (tool: string, args: unknown) => Record<string, string>
  }
>()("@effect-mcp/conformance-client/ParamHeaders") {}

export const layer: Layer.Layer<ParamHeaders> = Layer.sync(ParamHeaders, () => {
  const known = new Map<string, ReadonlyArray<Declaration>>()
  return ParamHeaders.of({
    admit: (tools) =>
      Effect.gen(function* () {
        const kept: Array<Tools.Tool> = []
        for (const tool of tools) {
          const result = declarations(tool.inputSchema)
          if (Result.isFailure(result)) {
            known.delete(tool.name)
            yield* Effect.logWarning(`leaving out tool ${tool.name}: ${result.failure}`)
            continue
          }
          known.set(tool.name, result.success)
          kept.push(tool)
        }
        return kept
      }),
    headersFor: (tool, args) => headersFor(known.get(tool) ?? [], args)
  })
})
