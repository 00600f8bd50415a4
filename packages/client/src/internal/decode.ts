/**
 * Decoders for the result schemas the client decodes on every call. They are
 * compiled by effect's JIT schema compiler, and a valid value is decoded
 * synchronously, without an Effect or a fiber; an invalid one is decoded
 * again by the interpreter, so failures carry the same issues as before.
 */
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaParser from "effect/SchemaParser"
import { InvalidResult } from "../ClientError.ts"

export const compiled = <A>(schema: Schema.Decoder<A>): ((input: unknown) => Result.Result<A, Schema.SchemaError>) => {
  SchemaJITCompiler.enable(schema.ast)
  const fast = SchemaParser.decodeUnknownSync(schema)
  const detailed = Schema.decodeUnknownResult(schema)
  return (input) => {
    let value: A
    try {
      value = fast(input)
    } catch {
      return detailed(input)
    }
    return Result.succeed(value)
  }
}

/** A result of `method` that does not decode with its schema. */
export const malformed = (method: string, cause: Schema.SchemaError) =>
  new InvalidResult({ method, reason: "Malformed", message: `${method}: ${cause.message}`, cause })

/** Decodes results of `method` with `schema` (compiled), failing with `InvalidResult` (`Malformed`). */
export const decoder = <A>(method: string, schema: Schema.Decoder<A>) => {
  const decode = compiled(schema)
  return (u: unknown): Effect.Effect<A, InvalidResult> => {
    const decoded = decode(u)
    return Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : Effect.fail(malformed(method, decoded.failure))
  }
}

const isPlainObject = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && Object.getPrototypeOf(u) === Object.prototype

/**
 * The commonest tool result (text blocks, maybe `isError`, nothing else)
 * read without the schema, as the value `CallToolResult` decodes it to (a
 * copy); undefined for anything else, which the schema decodes.
 */
export const plainTextResult = (u: unknown): Tools.CallToolResult | undefined => {
  if (!isPlainObject(u)) return undefined
  let keys = 0
  const isError = u.isError
  if (isError !== undefined) {
    if (typeof isError !== "boolean") return undefined
    keys++
  }
  const content = u.content
  if (!Array.isArray(content)) return undefined
  keys++
  for (const _ in u) if (--keys < 0) return undefined
  const blocks: Array<{ readonly type: "text"; readonly text: string }> = new Array(content.length)
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (!isPlainObject(block) || block.type !== "text") return undefined
    const text = block.text
    if (typeof text !== "string") return undefined
    let extra = -2
    for (const _ in block) if (++extra > 0) return undefined
    blocks[i] = { type: "text", text }
  }
  return isError === undefined ? { content: blocks } : { content: blocks, isError }
}
