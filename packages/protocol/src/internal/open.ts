/**
 * Building blocks for objects whose unknown keys must survive a decode: `_meta`
 * objects, results, capability objects and JSON Schemas (the spec gives them
 * `additionalProperties`, so dropping keys would lose data a peer sent).
 */
import * as Schema from "effect/Schema"

/** Any JSON object, kept as it came (values are not walked, which keeps decoding cheap). */
export const OpenObject = Schema.Record(Schema.String, Schema.Unknown).annotate({ identifier: "OpenObject" })
export type OpenObject = typeof OpenObject.Type

export type OpenStruct<F extends Schema.Struct.Fields> = Schema.StructWithRest<
  Schema.Struct<F>,
  readonly [typeof OpenObject]
>

/** A struct whose declared fields are checked and whose other keys are kept. */
export const openStruct = <const F extends Schema.Struct.Fields>(fields: F): OpenStruct<F> =>
  Schema.StructWithRest(Schema.Struct(fields), [OpenObject])
