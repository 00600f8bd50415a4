import * as Schema from "effect/Schema"
import { ResultMeta } from "../Meta.ts"
import { type OpenStruct, openStruct } from "./open.ts"

/** The fields every result has: `_meta` and the 2026-07-28 `resultType`. */
export const resultFields = {
  _meta: Schema.optionalKey(ResultMeta),
  resultType: Schema.optionalKey(Schema.String)
}
export type ResultFields = typeof resultFields

/**
 * A result schema: the common fields plus `fields`, open to extra keys (the
 * spec's `Result` has `additionalProperties` in every revision).
 */
export const resultStruct = <const F extends Schema.Struct.Fields>(fields: F): OpenStruct<ResultFields & F> =>
  openStruct({ ...resultFields, ...fields })
