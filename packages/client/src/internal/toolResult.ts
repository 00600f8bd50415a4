/**
 * Reads a tool call's result for the caller: the result decoded (a plain
 * text result without a Schema pass), the caller's typed failure taken out
 * of an `isError` result, and `structuredContent` checked against the output
 * schema the server advertised and decoded with the one the caller asked
 * for. Before 2025-06-18 there is no `structuredContent`: a typed call reads
 * the JSON text block that servers send alongside it for such clients.
 */
import * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { InvalidResult, ToolError } from "../ClientError.ts"
import * as Decode from "./decode.ts"
import type * as OutputSchema from "./outputSchema.ts"

const decodeCallTool = Decode.compiled(Tools.CallToolResult)

/** The first text block parsed as JSON, if it is JSON. */
const jsonTextOf = (result: Tools.CallToolResult): unknown => {
  const block = result.content.find((b) => b.type === "text")
  if (block === undefined || block.type !== "text") return undefined
  try {
    return JSON.parse(block.text)
  } catch {
    return undefined
  }
}

/**
 * The caller's typed failure in an `isError` result: its `structuredContent`,
 * or the JSON of its text block (a tool with an output schema, a revision
 * without structured content), decoded with the caller's failure Schema.
 * Undefined when neither decodes: the result is then what the caller gets.
 */
const typedFailure = (
  result: Tools.CallToolResult,
  failure: Schema.Decoder<unknown>
): { readonly value: unknown } | undefined => {
  const decode = Schema.decodeUnknownResult(failure)
  for (const candidate of [result.structuredContent, jsonTextOf(result)]) {
    if (candidate === undefined) continue
    const decoded = decode(candidate)
    if (Result.isSuccess(decoded)) return { value: decoded.success }
  }
  return undefined
}

/**
 * The reader of one client's tool results: `outputSchemas` are the schemas
 * its server advertised, `hasStructured` whether the revision has
 * `structuredContent`. The reader fails with the caller's typed failure, a
 * `ToolError`, an `InvalidResult` or the malformed result's error.
 */
export const reader = (outputSchemas: OutputSchema.Registry, hasStructured: boolean) => {
  // One generator function for every call: an inline `Effect.gen` would create one per call.
  const checkToolResult = Effect.fnUntraced(function* (
    name: string,
    result: Tools.CallToolResult,
    outputSchema: Schema.Decoder<unknown> | undefined
  ): Effect.fn.Return<Tools.CallToolResult, InvalidResult | ToolError> {
    if (result.isError === true) {
      if (outputSchema === undefined) return result
      const text = result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")
      const structuredContent = result.structuredContent ?? jsonTextOf(result)
      return yield* new ToolError({
        name,
        content: result.content,
        message: text || `tool ${name} failed`,
        ...(structuredContent === undefined ? {} : { structuredContent })
      })
    }
    // Before 2025-06-18 there is no structuredContent: a typed call reads the JSON text block
    // that servers send alongside it for such clients.
    const structured =
      result.structuredContent ?? (outputSchema !== undefined && !hasStructured ? jsonTextOf(result) : undefined)
    if (structured === undefined) {
      if (outputSchema === undefined && !outputSchemas.expectsStructured(name)) return result
      return yield* new InvalidResult({
        method: "tools/call",
        reason: "MissingStructuredContent",
        message: `tool ${name} returned no structuredContent`
      })
    }
    const advertised = yield* outputSchemas.check(name, structured)
    if (advertised !== undefined) {
      return yield* new InvalidResult({
        method: "tools/call",
        reason: "OutputSchema",
        message: `tool ${name}: structuredContent does not match its advertised outputSchema: ${advertised}`
      })
    }
    if (outputSchema === undefined) return result
    const decoded = yield* Schema.decodeUnknownEffect(outputSchema)(structured).pipe(
      Effect.mapError(
        (cause) =>
          new InvalidResult({
            method: "tools/call",
            reason: "OutputSchema",
            message: `tool ${name}: structuredContent does not match the expected schema: ${cause.message}`,
            cause
          })
      )
    )
    return { ...result, structuredContent: decoded }
  })

  return (
    name: string,
    raw: unknown,
    outputSchema: Schema.Decoder<unknown> | undefined,
    failure: Schema.Decoder<unknown> | undefined
  ): Effect.Effect<Tools.CallToolResult, unknown> => {
    let result = Decode.plainTextResult(raw)
    if (result === undefined) {
      const decoded = decodeCallTool(raw)
      if (Result.isFailure(decoded)) return Effect.fail(Decode.malformed("tools/call", decoded.failure))
      result = decoded.success
    }
    if (failure !== undefined && result.isError === true) {
      const typed = typedFailure(result, failure)
      if (typed !== undefined) return Effect.fail(typed.value)
    }
    // The common case needs no checks: no schema asked for, none advertised, nothing structured.
    if (
      outputSchema === undefined &&
      (result.isError === true || (result.structuredContent === undefined && !outputSchemas.expectsStructured(name)))
    ) {
      return Effect.succeed(result)
    }
    return checkToolResult(name, result, outputSchema)
  }
}
