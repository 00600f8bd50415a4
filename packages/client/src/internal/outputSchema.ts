/**
 * Checks a tool's `structuredContent` against the `outputSchema` the server
 * advertised for it in `tools/list`. The JSON Schema is imported once per
 * tool with effect's JSON Schema importer; a schema it cannot translate (an
 * unsupported keyword, a remote `$ref`) is not checked rather than rejected:
 * the server's schema is not the caller's contract.
 */
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import * as JsonSchema from "effect/JsonSchema"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaRepresentation from "effect/SchemaRepresentation"

type Check = (value: unknown) => Result.Result<unknown, Schema.SchemaError>

const compile = (outputSchema: Tools.ToolOutputSchema): Check | undefined => {
  try {
    const document = JsonSchema.fromSchemaDraft2020_12(outputSchema as JsonSchema.JsonSchema)
    // Patterns are skipped: a server-supplied regular expression is not run on the client.
    const schema = SchemaRepresentation.fromJsonSchemaDocument(document, { patterns: "ignore" })
    return Schema.decodeUnknownResult(schema as Schema.Decoder<unknown>)
  } catch {
    return undefined
  }
}

export interface Registry {
  /** Remembers the output schemas of listed tools (replacing what was known about them). */
  readonly learn: (tools: ReadonlyArray<Tools.Tool>) => void
  /** Forgets everything (the tool list changed). */
  readonly reset: () => void
  /** Whether the server advertised an output schema for the tool. */
  readonly expectsStructured: (name: string) => boolean
  /** A failure message when `value` does not match the tool's advertised schema. */
  readonly check: (name: string, value: unknown) => Effect.Effect<string | undefined>
}

export const make = (): Registry => {
  const schemas = new Map<string, Tools.ToolOutputSchema | undefined>()
  const compiled = new Map<string, Check | undefined>()
  return {
    learn: (tools) => {
      for (const tool of tools) {
        schemas.set(tool.name, tool.outputSchema)
        compiled.delete(tool.name)
      }
    },
    reset: () => {
      schemas.clear()
      compiled.clear()
    },
    expectsStructured: (name) => schemas.get(name) !== undefined,
    check: (name, value) =>
      Effect.suspend(() => {
        const outputSchema = schemas.get(name)
        if (outputSchema === undefined) return Effect.succeed(undefined)
        if (!compiled.has(name)) compiled.set(name, compile(outputSchema))
        const check = compiled.get(name)
        if (check === undefined) {
          return Effect.as(
            Effect.logDebug(`output schema of tool ${name} could not be imported; not checked`),
            undefined
          )
        }
        const result = check(value)
        return Effect.succeed(Result.isFailure(result) ? result.failure.message : undefined)
      })
  }
}
