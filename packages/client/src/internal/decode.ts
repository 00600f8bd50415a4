/**
 * Decoders for the result schemas the client decodes on every call. They are
 * compiled by effect's JIT schema compiler, and a valid value is decoded
 * synchronously, without an Effect or a fiber; an invalid one is decoded
 * again by the interpreter, so failures carry the same issues as before.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaParser from "effect/SchemaParser"

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
